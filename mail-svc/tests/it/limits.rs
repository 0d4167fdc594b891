//! Bad input at the size limits, and dead-letter publishes the broker refuses: each poison message
//! is dead-lettered exactly once, with a bounded reason, good traffic keeps flowing, and the
//! consumer session is never torn down (no reconnect, no redelivery of everything in flight).

use std::time::Duration;

use lapin::{
    BasicProperties, Connection, ConnectionProperties, ExchangeKind,
    options::{
        BasicAckOptions, BasicGetOptions, ExchangeDeclareOptions, ExchangeDeleteOptions,
        QueueBindOptions,
    },
    types::{AMQPValue, FieldTable},
};
use mail_svc::amqp::MAX_REASON_BYTES;
use outbox_proto::orders::v1::OrderStatus;

use crate::common::{
    Names, Publisher, TestMail, changed, config, created, eventually, start, take_dead_letters,
};

const EMAIL: &str = "rokuro@example.jp";

fn json_props(id: &str) -> BasicProperties {
    BasicProperties::default()
        .with_content_type("application/json".into())
        .with_message_id(id.into())
        .with_delivery_mode(2)
}

/// Nothing more arrives in `queue` within 2 s.
async fn stays_empty(queue: &str) {
    let conn = Connection::connect(&outbox_testkit::amqp_url(), ConnectionProperties::default())
        .await
        .expect("connect");
    let ch = conn.create_channel().await.expect("channel");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let more = ch
        .basic_get(queue.into(), BasicGetOptions::default())
        .await
        .expect("basic.get");
    assert!(
        more.is_none(),
        "dead-lettered more than once: {:?}",
        more.map(|m| m.delivery.properties)
    );
    outbox_support::amqp::close(&conn, "bye").await;
}

#[tokio::test]
async fn a_200_kib_email_is_dead_lettered_once_and_the_session_goes_on() {
    let names = Names::new();
    let svc = start(config(&names)).await;
    let publisher = Publisher::connect(&names.exchange).await;
    publisher.proto(&created(1, 1, EMAIL)).await;
    eventually("first event", 60, || async {
        (svc.status().await.processed == 1).then_some(())
    })
    .await;

    let huge_email = format!("{}@example.com", "a".repeat(200 * 1024));
    let body = format!(
        r#"{{"seq":2,"type":"OrderCreated","aggregate_id":2,"payload":{{"id":2,"status":"pending","customer_email":"{huge_email}"}}}}"#
    );
    publisher
        .raw("order.created", body.as_bytes(), json_props("huge-email"))
        .await;
    // A reason that repeats a 200 KiB field: the header is cut to MAX_REASON_BYTES.
    let huge_type = "T".repeat(200 * 1024);
    let body2 = format!(
        r#"{{"seq":3,"type":"{huge_type}","aggregate_id":3,"payload":{{"id":3,"status":"pending","customer_email":"{EMAIL}"}}}}"#
    );
    publisher
        .raw("order.created", body2.as_bytes(), json_props("huge-type"))
        .await;
    // Good traffic behind them.
    publisher
        .proto(&changed(4, 1, 1, OrderStatus::Paid, EMAIL))
        .await;
    publisher.proto(&created(5, 5, EMAIL)).await;
    svc.status_once("good events after the poison", |s| {
        s.processed == 3 && s.dead_lettered == 2
    })
    .await;

    let dead = take_dead_letters(&names.dead_letter_queue(), 2).await;
    let email = dead
        .iter()
        .find(|d| d.message_id.as_deref() == Some("huge-email"))
        .expect("huge-email dead-lettered");
    assert!(
        email
            .reason
            .starts_with("payload.customer_email is 204812 bytes long (at most 254)"),
        "{}",
        email.reason
    );
    assert_eq!(email.body, body.as_bytes(), "the original body travels");
    let kind = dead
        .iter()
        .find(|d| d.message_id.as_deref() == Some("huge-type"))
        .expect("huge-type dead-lettered");
    assert!(
        kind.reason.len() <= MAX_REASON_BYTES,
        "{}",
        kind.reason.len()
    );
    assert!(
        kind.reason.starts_with("unknown type \"TTT"),
        "{}",
        kind.reason
    );
    assert!(
        kind.reason.ends_with(" bytes)") && kind.reason.contains("(truncated, "),
        "{}",
        kind.reason
    );
    stays_empty(&names.dead_letter_queue()).await;
    assert_eq!(svc.status().await.dead_lettered, 2, "counted once each");
    assert!(
        !svc.consuming.has_changed().expect("consumer state"),
        "the consumer session was never restarted"
    );
    svc.stop().await;
    names.cleanup().await;
}

/// Publishes poison `p-<n>` and then the good OrderCreated `n` of order `n`, and waits until
/// `n` of each have been settled: processed and dead-lettered (`what`).
async fn poison_then_good(publisher: &Publisher, svc: &TestMail, n: u64, what: &str) {
    publisher
        .raw("order.created", b"\xff\xff", json_props(&format!("p-{n}")))
        .await;
    publisher.proto(&created(n, n as i64, EMAIL)).await;
    eventually(what, 60, || async {
        let s = svc.status().await;
        (s.processed == n && s.dead_lettered == n).then_some(())
    })
    .await;
}

/// Someone deletes the dead-letter exchange: the first dead-letter publish is refused (the broker
/// closes the channel), the channel is reopened with the exchange declared again, and the poison
/// lands in the dead-letter queue with its reason, on the same session. Then the exchange is
/// replaced by one mail-svc can neither publish to nor declare (an internal one), so every publish
/// fails: the delivery is rejected and the broker dead-letters it itself, still on the same
/// session.
#[tokio::test]
async fn refused_dead_letter_publishes_do_not_end_the_session() {
    let names = Names::new();
    let svc = start(config(&names)).await;
    let publisher = Publisher::connect(&names.exchange).await;
    let dlx = format!("{}.dlx", names.queue);
    let dlq = names.dead_letter_queue();
    publisher
        .ch
        .exchange_delete(dlx.as_str().into(), ExchangeDeleteOptions::default())
        .await
        .expect("delete the dead-letter exchange");

    poison_then_good(
        &publisher,
        &svc,
        1,
        "poison dead-lettered and the good event processed",
    )
    .await;
    let dead = take_dead_letters(&dlq, 1).await;
    assert_eq!(dead[0].message_id.as_deref(), Some("p-1"));
    assert!(dead[0].reason.starts_with("undecodable JSON"), "{dead:?}");

    // An internal exchange of the same name: clients cannot publish to it (mail-svc's copy is
    // refused, and its own declaration differs, so reopening fails too), but the broker's own
    // dead-lettering routes through it to the dead-letter queue.
    publisher
        .ch
        .exchange_delete(dlx.as_str().into(), ExchangeDeleteOptions::default())
        .await
        .expect("delete the dead-letter exchange");
    publisher
        .ch
        .exchange_declare(
            dlx.as_str().into(),
            ExchangeKind::Fanout,
            ExchangeDeclareOptions {
                durable: true,
                internal: true,
                ..ExchangeDeclareOptions::default()
            },
            FieldTable::default(),
        )
        .await
        .expect("declare an internal exchange");
    publisher
        .ch
        .queue_bind(
            dlq.as_str().into(),
            dlx.as_str().into(),
            "".into(),
            QueueBindOptions::default(),
            FieldTable::default(),
        )
        .await
        .expect("bind");
    poison_then_good(
        &publisher,
        &svc,
        2,
        "second poison settled and the good event processed",
    )
    .await;
    // The broker dead-lettered it (an x-death header, no x-death-reason: that is in the log).
    let conn = Connection::connect(&outbox_testkit::amqp_url(), ConnectionProperties::default())
        .await
        .expect("connect");
    let ch = conn.create_channel().await.expect("channel");
    let msg = eventually("p-2 in the dead-letter queue", 30, || async {
        ch.basic_get(dlq.as_str().into(), BasicGetOptions::default())
            .await
            .expect("basic.get")
    })
    .await;
    assert_eq!(
        msg.delivery
            .properties
            .message_id()
            .as_ref()
            .map(|m| m.as_str()),
        Some("p-2")
    );
    let headers = msg
        .delivery
        .properties
        .headers()
        .clone()
        .unwrap_or_default();
    assert!(
        matches!(
            headers.inner().get("x-death"),
            Some(AMQPValue::FieldArray(_))
        ),
        "dead-lettered by the broker: {headers:?}"
    );
    assert!(
        headers.inner().get("x-death-reason").is_none(),
        "{headers:?}"
    );
    msg.delivery
        .ack(BasicAckOptions::default())
        .await
        .expect("ack");
    outbox_support::amqp::close(&conn, "bye").await;
    stays_empty(&dlq).await;
    assert!(
        !svc.consuming.has_changed().expect("consumer state"),
        "the consumer session was never restarted"
    );
    svc.stop().await;
    names.cleanup().await;
}
