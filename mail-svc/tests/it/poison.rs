//! Poison messages: each kind lands in `<queue>.dead-letter` with an `x-death-reason` header
//! naming the problem, is counted, and does not stop the next good event.

use lapin::{BasicProperties, types::AMQPValue};
use outbox_proto::orders::v1::OrderStatus;
use prost::Message;

use crate::common::{
    Names, Publisher, changed, config, created, eventually, start, take_dead_letters,
};

const EMAIL: &str = "jiro@example.jp";

fn proto_props(id: &str) -> BasicProperties {
    BasicProperties::default()
        .with_content_type("application/x-protobuf".into())
        .with_message_id(id.into())
}

#[tokio::test]
async fn every_poison_kind_is_dead_lettered_with_its_reason() {
    let names = Names::new();
    let svc = start(config(&names)).await;
    let publisher = Publisher::connect(&names.exchange).await;

    // A healthy order first, to have a watermark for the chain-conflict case.
    publisher.proto(&created(10, 100, EMAIL)).await;
    publisher
        .proto(&changed(11, 10, 100, OrderStatus::Paid, EMAIL))
        .await;
    eventually("order 100 processed", 60, || async {
        (svc.status().await.processed == 2).then_some(())
    })
    .await;

    let mut unknown_type = created(20, 200, EMAIL);
    unknown_type.r#type = "Foo".into();
    let mut zero_seq = created(0, 201, EMAIL);
    zero_seq.seq = 0;
    let negative_order = {
        let mut e = created(21, 202, EMAIL);
        e.aggregate_id = -5;
        e.payload.as_mut().expect("payload").id = -5;
        e
    };
    let mismatch = {
        let mut e = created(22, 203, EMAIL);
        e.payload.as_mut().expect("payload").id = 999;
        e
    };
    let no_recipient = created(23, 204, "");
    // Order 100 has processed up to 11; seq 12 claiming to follow seq 9 contradicts the chain.
    let conflict = changed(12, 9, 100, OrderStatus::Shipped, EMAIL);

    let cases: Vec<(&str, Vec<u8>, BasicProperties, &str)> = vec![
        ("p-undecodable", vec![0xff, 0xff, 0xff], proto_props("p-undecodable"), "undecodable protobuf"),
        (
            "p-content-type",
            b"hello".to_vec(),
            BasicProperties::default()
                .with_content_type("text/plain".into())
                .with_message_id("p-content-type".into()),
            "unknown content type \"text/plain\"",
        ),
        ("p-type", unknown_type.encode_to_vec(), proto_props("p-type"), "unknown type \"Foo\""),
        ("p-seq", zero_seq.encode_to_vec(), proto_props("p-seq"), "seq must be > 0"),
        ("p-order", negative_order.encode_to_vec(), proto_props("p-order"), "aggregate_id must be > 0"),
        ("p-mismatch", mismatch.encode_to_vec(), proto_props("p-mismatch"), "payload.id 999 != aggregate_id 203"),
        ("p-recipient", no_recipient.encode_to_vec(), proto_props("p-recipient"), "payload.customer_email missing"),
        (
            "p-json-recipient",
            br#"{"seq":24,"type":"OrderCreated","aggregate_id":205,"payload":{"id":205,"status":"pending"}}"#.to_vec(),
            BasicProperties::default()
                .with_content_type("application/json".into())
                .with_message_id("p-json-recipient".into()),
            "payload.customer_email missing",
        ),
        (
            "p-json",
            b"{\"seq\": 3,".to_vec(),
            BasicProperties::default()
                .with_content_type("application/json".into())
                .with_message_id("p-json".into()),
            "undecodable JSON",
        ),
        (
            "p-large",
            vec![0u8; 2_000_000],
            proto_props("p-large"),
            "body 2000000 bytes exceeds 1048576",
        ),
        ("p-conflict", conflict.encode_to_vec(), proto_props("p-conflict"), "chain conflict"),
    ];
    for (_, body, props, _) in &cases {
        publisher.raw("order.created", body, props.clone()).await;
    }
    // Every poison message is dealt with before the next good event goes out (deliveries are
    // processed concurrently; seq 13 must not raise the watermark before seq 12 is judged).
    eventually("all poison dead-lettered", 60, || async {
        (svc.status().await.dead_lettered == cases.len() as u64).then_some(())
    })
    .await;
    // The next good event is still processed.
    publisher
        .proto(&changed(13, 11, 100, OrderStatus::Shipped, EMAIL))
        .await;
    eventually("good event after the poison", 60, || async {
        (svc.seqs(100).await == vec![10, 11, 13]).then_some(())
    })
    .await;

    let dead = take_dead_letters(&names.dead_letter_queue(), cases.len()).await;
    for (id, body, _, reason) in &cases {
        let d = dead
            .iter()
            .find(|d| d.message_id.as_deref() == Some(*id))
            .unwrap_or_else(|| panic!("{id} not dead-lettered: {dead:?}"));
        assert!(
            d.reason.contains(reason),
            "{id}: reason {:?} should contain {reason:?}",
            d.reason
        );
        assert_eq!(&d.body, body, "{id}: the original body travels with it");
    }
    let s = svc
        .status_once("all counted", |s| s.dead_lettered == cases.len() as u64)
        .await;
    assert_eq!((s.processed, s.held, s.skipped), (3, 0, 0));
    for order in [200, 201, 202, 203, 204, 205] {
        assert!(
            svc.mails(order).await.is_empty(),
            "no mail for poison order {order}"
        );
    }
    svc.stop().await;
    names.cleanup().await;
}

/// A `shard` header that names no shard cannot be keyed: dead-lettered with its reason, never
/// taken for shard 0.
#[tokio::test]
async fn a_shard_header_that_names_no_shard_is_dead_lettered() {
    let names = Names::new();
    let svc = start(config(&names)).await;
    let publisher = Publisher::connect(&names.exchange).await;

    publisher.sharded(&created(11, 300, EMAIL), "x").await;
    publisher.sharded(&created(12, 301, EMAIL), "-1").await;
    let dead = take_dead_letters(&names.dead_letter_queue(), 2).await;
    for (id, reason) in [
        ("shard-x-11", "shard header \"x\" is not a shard number"),
        ("shard--1-12", "shard header \"-1\" is not a shard number"),
    ] {
        let d = dead
            .iter()
            .find(|d| d.message_id.as_deref() == Some(id))
            .unwrap_or_else(|| panic!("{id} not dead-lettered: {dead:?}"));
        assert!(d.reason.contains(reason), "{id}: {:?}", d.reason);
    }
    let s = svc.status_once("counted", |s| s.dead_lettered == 2).await;
    assert_eq!((s.processed, s.skipped), (0, 0));
    assert!(svc.mails(300).await.is_empty() && svc.mails(301).await.is_empty());
    svc.stop().await;
    names.cleanup().await;
}

/// An event of another aggregate type that shares an order's id is another chain, never an
/// order's: dead-lettered with its reason, while the order's own first event is mailed (it is
/// not taken for "a second first event").
#[tokio::test]
async fn another_aggregate_type_sharing_an_orders_id_is_dead_lettered() {
    let names = Names::new();
    let svc = start(config(&names)).await;
    let publisher = Publisher::connect(&names.exchange).await;

    let invoice = created(21, 310, EMAIL);
    let mut props = Publisher::relay_properties(&invoice, None);
    let mut headers = props.headers().clone().unwrap_or_default();
    headers.insert(
        "aggregate_type".into(),
        AMQPValue::LongString("invoice".into()),
    );
    props = props
        .with_message_id("invoice-21".into())
        .with_headers(headers);
    publisher
        .raw(
            Publisher::routing_key(&invoice.r#type),
            &invoice.encode_to_vec(),
            props,
        )
        .await;
    let dead = take_dead_letters(&names.dead_letter_queue(), 1).await;
    assert!(
        dead[0]
            .reason
            .contains("aggregate_type \"invoice\" is not \"order\""),
        "{:?}",
        dead[0].reason
    );
    // The order with the same id: its first event is mailed.
    publisher.proto(&created(22, 310, EMAIL)).await;
    let mails = eventually("mailed", 60, || async {
        let m = svc.mails(310).await;
        (!m.is_empty()).then_some(m)
    })
    .await;
    assert_eq!(mails.len(), 1);
    svc.stop().await;
    names.cleanup().await;
}
