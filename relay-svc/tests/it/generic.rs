//! relay-svc relays any outbox made by the `outbox` crate: a row of another aggregate type, with
//! its own routing key, payload content type and headers, goes out in the generic envelope, whose
//! bytes decode as the orders consumers' `OrderEvent`.

use lapin::types::AMQPValue;
use outbox::{NewEvent, wire::Envelope};
use outbox_proto::orders::{events::v1::OrderPayload, v1::OrderStatus};
use prost::Message;

use crate::common::*;

#[tokio::test]
async fn a_crate_row_goes_out_with_its_own_routing_key_and_headers_in_the_envelope() {
    let (orders, exchange, consumer) = orders_and_consumer().await;

    let body = payload(7, OrderStatus::Pending, OrderStatus::Unspecified);
    let outbox = outbox::Outbox::new("outbox").expect("name");
    let mut tx = orders.pool.begin().await.expect("begin");
    let events = [
        NewEvent::new(
            "invoice",
            7,
            "InvoiceIssued",
            "invoice.issued",
            body.clone(),
        )
        .content_type("application/vnd.test+proto")
        .header("tenant", "acme"),
        NewEvent::new("invoice", 7, "InvoicePaid", "invoice.paid", body.clone()),
    ];
    let appended = outbox.append_all(&mut tx, &events).await.expect("append");
    tx.commit().await.expect("commit");
    let seqs: Vec<u64> = appended.iter().map(|a| a.seq as u64).collect();

    let _relay = Relay::start_for(&orders, &exchange).await;
    wait_until("both events consumed", || async { consumer.has_all(&seqs) }).await;

    let received = consumer.snapshot();
    let first = received
        .iter()
        .find(|r| r.event.seq == seqs[0])
        .expect("first");
    let second = received
        .iter()
        .find(|r| r.event.seq == seqs[1])
        .expect("second");
    assert_eq!(first.routing_key, "invoice.issued");
    assert_eq!(second.routing_key, "invoice.paid");
    assert_eq!(second.event.prev_seq, Some(seqs[0]));
    assert_eq!(
        first.event.payload,
        Some(OrderPayload::decode(body.as_slice()).expect("payload"))
    );
    // The envelope's bytes are the OrderEvent's: the payload travels untouched.
    let envelope = Envelope::decode(first.event.encode_to_vec().as_slice()).expect("envelope");
    assert_eq!(envelope.payload, body);
    assert_eq!(envelope.r#type, "InvoiceIssued");

    let p = &first.properties;
    assert_eq!(
        p.content_type().as_ref().map(|s| s.as_str()),
        Some("application/x-protobuf")
    );
    assert_eq!(p.kind().as_ref().map(|s| s.as_str()), Some("InvoiceIssued"));
    let headers = p.headers().as_ref().expect("headers").inner();
    let text = |name: &str| match headers.get(name) {
        Some(AMQPValue::LongString(s)) => Some(s.to_string()),
        _ => None,
    };
    assert_eq!(text("aggregate_type").as_deref(), Some("invoice"));
    assert_eq!(
        text("payload_content_type").as_deref(),
        Some("application/vnd.test+proto")
    );
    assert_eq!(text("tenant").as_deref(), Some("acme"));
    assert_eq!(
        headers.get("aggregate_id"),
        Some(&AMQPValue::LongLongInt(7))
    );
    // The payload's content type is the envelope's own: no header for it.
    let second_headers = second.headers();
    assert!(!second_headers.contains_key("payload_content_type"));
    assert!(!second_headers.contains_key("tenant"));
}

#[tokio::test]
async fn a_crate_row_with_unreadable_headers_is_quarantined_with_the_reason() {
    let (orders, exchange, consumer) = orders_and_consumer().await;
    // Written by hand: the crate never stores such headers.
    let seq: i64 = sqlx::query_scalar(
        "insert into outbox (aggregate_type, aggregate_id, event_type, routing_key, content_type, \
                             headers, payload) \
         values ('invoice', 8, 'InvoiceIssued', 'invoice.issued', 'application/json', \
                 '{\"n\": 1}', '') returning seq",
    )
    .fetch_one(&orders.pool)
    .await
    .expect("insert");
    let _relay = Relay::start_for(&orders, &exchange).await;
    wait_until("the row is quarantined", || async {
        sqlx::query_scalar::<_, i64>("select count(*) from outbox_quarantine where seq = $1")
            .bind(seq)
            .fetch_one(&orders.pool)
            .await
            .expect("count")
            == 1
    })
    .await;
    let (reason, routing_key): (String, Option<String>) =
        sqlx::query_as("select reason, routing_key from outbox_quarantine where seq = $1")
            .bind(seq)
            .fetch_one(&orders.pool)
            .await
            .expect("reason");
    assert!(
        reason.contains("headers are not a JSON object of strings"),
        "{reason}"
    );
    assert_eq!(
        routing_key.as_deref(),
        Some("invoice.issued"),
        "moved whole"
    );
    assert!(consumer.seqs().is_empty());
}
