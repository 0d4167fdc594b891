//! The library relays an outbox of any name made by the `outbox` crate, knowing nothing of its
//! events: real PostgreSQL and RabbitMQ, a schema-qualified table, a leader lock key of its own.

use std::{sync::Arc, time::Duration};

use futures::StreamExt;
use outbox::{NewEvent, wire::Envelope};
use outbox_relay::{Relay, Settings, Status};
use prost::Message;
use tokio_util::sync::CancellationToken;

use crate::support::db::Db;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_named_outbox_is_relayed_in_chain_order_and_emptied() {
    let db = Db::at(
        outbox_testkit::fresh_database_url("outbox_relay"),
        "billing.events",
    )
    .await;
    let (pool, outbox) = (db.pool.clone(), db.outbox.clone());

    // A queue bound before anything is published (an unroutable event would stay).
    let (exchange, conn, mut deliveries, _names) =
        crate::support::broker::consume_all("outbox_relay", "invoice.#").await;

    // Two invoices, three events each, appended in one transaction.
    let mut events = Vec::new();
    for step in ["issued", "sent", "paid"] {
        for id in [1, 2] {
            let body = format!("{{\"invoice\":{id},\"step\":\"{step}\"}}").into_bytes();
            events.push(
                NewEvent::new("invoice", id, step, format!("invoice.{step}"), body)
                    .content_type("application/json"),
            );
        }
    }
    let mut tx = pool.begin().await.expect("begin");
    let appended = outbox.append_all(&mut tx, &events).await.expect("append");
    tx.commit().await.expect("commit");

    let mut settings = Settings::new(outbox_testkit::amqp_url(), exchange);
    settings.table = outbox.table().clone();
    settings.leader_lock_key = 0x696e_766f_6963_6573; // "invoices"
    let status = Arc::new(Status::default());
    let shutdown = CancellationToken::new();
    let relay =
        tokio::spawn(Relay::new(settings, pool.clone(), status.clone(), shutdown.clone()).run());

    let mut received = Vec::new();
    while received.len() < events.len() {
        let d = tokio::time::timeout(Duration::from_secs(20), deliveries.next())
            .await
            .expect("every event arrives")
            .expect("stream open")
            .expect("delivery");
        let envelope = Envelope::decode(d.data.as_slice()).expect("an envelope");
        received.push((d.routing_key.to_string(), envelope));
    }
    // Each invoice's events arrive in chain order, each linked to the one before.
    for id in [1, 2] {
        let chain: Vec<&Envelope> = received
            .iter()
            .map(|(_, e)| e)
            .filter(|e| e.aggregate_id == id)
            .collect();
        let steps: Vec<&str> = chain.iter().map(|e| e.r#type.as_str()).collect();
        assert_eq!(steps, ["issued", "sent", "paid"], "invoice {id}");
        assert_eq!(chain[0].prev_seq, None);
        assert_eq!(chain[1].prev_seq, Some(chain[0].seq));
        assert_eq!(chain[2].prev_seq, Some(chain[1].seq));
    }
    let (key, first) = &received[0];
    assert_eq!(key, &format!("invoice.{}", first.r#type));
    let seq = appended[0].seq as u64;
    let e = received.iter().find(|(_, e)| e.seq == seq).expect("first");
    assert_eq!(e.1.payload, br#"{"invoice":1,"step":"issued"}"#);

    // Deleted once confirmed; the heads stay.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let left: i64 = sqlx::query_scalar("select count(*) from billing.events")
            .fetch_one(&pool)
            .await
            .expect("count");
        if left == 0 {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{left} rows left");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(status.snapshot().published_total, 6);
    shutdown.cancel();
    relay.await.expect("relay stops");
    outbox_support::amqp::close(&conn, "done").await;
}
