//! The upgrade from the first orders outbox (rows without a routing key, written before
//! orders-svc migration 0003 or by an orders-svc of that version): migration 0006 gives them the
//! routing keys of their event types, and the relay's default encoding publishes them as
//! relay-svc's former orders encoder did.

use std::collections::BTreeSet;

use chrono::{DateTime, Utc};
use lapin::types::AMQPValue;
use outbox_proto::orders::{
    events::v1::{self as events, ORDER_CREATED, ORDER_STATUS_CHANGED, OrderEvent, OrderPayload},
    v1::OrderStatus,
};
use prost::Message;

use crate::common::*;

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// A row of the first format as it was written.
#[derive(Debug, sqlx::FromRow)]
struct FirstRow {
    seq: i64,
    aggregate_id: i64,
    event_type: String,
    prev_seq: Option<i64>,
    payload: Vec<u8>,
    traceparent: Option<String>,
    created_at: DateTime<Utc>,
}

impl FirstRow {
    /// What relay-svc's former orders encoder published for the row: the routing key of its
    /// event type, and an `OrderEvent` around the decoded payload.
    fn as_before(&self) -> (&'static str, Vec<u8>) {
        let key = events::routing_key(&self.event_type).expect("an order event type");
        let body = OrderEvent {
            seq: self.seq as u64,
            r#type: self.event_type.clone(),
            aggregate_id: self.aggregate_id,
            prev_seq: self.prev_seq.map(|p| p as u64),
            payload: Some(OrderPayload::decode(self.payload.as_slice()).expect("OrderPayload")),
            ts_ms: self.created_at.timestamp_millis(),
        };
        (key, body.encode_to_vec())
    }
}

/// Rows of the first format in the outbox and the quarantine of an orders database at migration
/// 0005 (an orders-svc of before 0003 still wrote them) are published after migration 0006 under
/// the same routing key, with the same body byte for byte and the same properties and headers,
/// plus the `aggregate_type` header. A row of an unknown event type keeps no routing key and is
/// quarantined with the reason; a quarantined row moved back goes out like the others.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn first_format_rows_are_published_after_migration_0006_as_before() {
    let (database, pool) = orders_database_at(5).await;
    let created = insert_first_format(
        &pool,
        61,
        ORDER_CREATED,
        None,
        &payload(61, OrderStatus::Pending, OrderStatus::Unspecified),
        Some(TRACEPARENT),
    )
    .await;
    let paid = insert_first_format(
        &pool,
        61,
        ORDER_STATUS_CHANGED,
        Some(created),
        &payload(61, OrderStatus::Paid, OrderStatus::Pending),
        None,
    )
    .await;
    let unknown = insert_first_format(
        &pool,
        62,
        "OrderTeleported",
        None,
        &payload(62, OrderStatus::Pending, OrderStatus::Unspecified),
        None,
    )
    .await;
    // Quarantined by an operator's hand before the upgrade, to be moved back after it.
    let held: i64 = sqlx::query_scalar(
        "insert into outbox_quarantine (seq, aggregate_id, event_type, payload, created_at, reason)
         values (nextval(pg_get_serial_sequence('outbox', 'seq')), 63, 'OrderCreated', $1,
                 clock_timestamp(), 'held for the test')
         returning seq",
    )
    .bind(payload(63, OrderStatus::Pending, OrderStatus::Unspecified))
    .fetch_one(&pool)
    .await
    .expect("a quarantined row");
    let rows: Vec<FirstRow> = sqlx::query_as(
        "select seq, aggregate_id, event_type, prev_seq, payload, traceparent, created_at
           from outbox where seq <> $1
         union all
         select seq, aggregate_id, event_type, prev_seq, payload, traceparent, created_at
           from outbox_quarantine
          order by seq",
    )
    .bind(unknown)
    .fetch_all(&pool)
    .await
    .expect("the rows as written");
    assert_eq!(
        rows.iter().map(|r| r.seq).collect::<Vec<_>>(),
        [created, paid, held]
    );

    // orders-svc of this version starts: migration 0006.
    let orders = Orders::start_on(database).await;
    let keys: Vec<(i64, Option<String>, Option<String>)> = sqlx::query_as(
        "select seq, routing_key, content_type from outbox
         union all select seq, routing_key, content_type from outbox_quarantine order by seq",
    )
    .fetch_all(&pool)
    .await
    .expect("keys");
    let protobuf = Some("application/x-protobuf".to_owned());
    assert_eq!(
        keys,
        [
            (created, Some("order.created".into()), protobuf.clone()),
            (paid, Some("order.status_changed".into()), protobuf.clone()),
            (unknown, None, None),
            (held, Some("order.created".into()), protobuf.clone()),
        ]
    );

    let exchange = outbox_testkit::unique("relay_ex");
    let consumer = Consumer::start(&exchange, Some("#")).await;
    let relay = Relay::start(relay_config(
        &orders.database_url,
        &outbox_testkit::amqp_url(),
        &exchange,
    ))
    .await;
    wait_until("the converted rows published", || async {
        consumer.has_all(&[created as u64, paid as u64])
    })
    .await;
    wait_until("the unknown type quarantined", || async {
        relay.live.snapshot().quarantined == 2
    })
    .await;
    let reason: String = sqlx::query_scalar("select reason from outbox_quarantine where seq = $1")
        .bind(unknown)
        .fetch_one(&pool)
        .await
        .expect("reason");
    assert!(reason.contains("no routing key"), "{reason}");

    let operator = outbox_relay::operator::Operator::new(
        &outbox::TableName::parse("outbox").expect("table name"),
    );
    let mut tx = pool.begin().await.expect("begin");
    let moved = operator.requeue(&mut tx, &[held]).await.expect("requeue");
    tx.commit().await.expect("commit");
    assert_eq!(moved, [held]);
    wait_until("the row moved back published", || async {
        consumer.has_all(&[held as u64])
    })
    .await;

    let received = consumer.snapshot();
    for row in &rows {
        let msg = received
            .iter()
            .find(|r| r.event.seq == row.seq as u64)
            .expect("received");
        let (key, body) = row.as_before();
        assert_eq!(msg.routing_key, key, "seq {}", row.seq);
        assert_eq!(msg.body, body, "seq {}: the body byte for byte", row.seq);
        let p = &msg.properties;
        assert_published_properties(p, row.seq, &row.event_type, row.created_at);
        let headers = p.headers().as_ref().expect("headers").inner();
        let names: BTreeSet<&str> = headers.keys().map(|k| k.as_str()).collect();
        let mut want = BTreeSet::from(["aggregate_id", "aggregate_type"]);
        want.extend(row.prev_seq.map(|_| "prev_seq"));
        want.extend(row.traceparent.as_ref().map(|_| "traceparent"));
        assert_eq!(names, want, "seq {}", row.seq);
        assert_eq!(
            headers.get("aggregate_id"),
            Some(&AMQPValue::LongLongInt(row.aggregate_id))
        );
        if let Some(prev) = row.prev_seq {
            assert_eq!(headers.get("prev_seq"), Some(&AMQPValue::LongLongInt(prev)));
        }
        assert_eq!(
            headers.get("aggregate_type"),
            Some(&AMQPValue::LongString("order".into()))
        );
    }
    wait_until("only the unknown type left in quarantine", || async {
        relay.live.snapshot().quarantined == 1
    })
    .await;
    pool.close().await;
    consumer.cleanup().await;
}

/// The migration relay-svc waits for is orders-svc's published rows, after the conversion of
/// the first outbox (0006), which the relay needs too.
#[test]
fn the_migration_relay_svc_waits_for_is_the_published_rows_of_orders_svc() {
    let description = |version| {
        orders_svc::db::MIGRATOR
            .iter()
            .find(|m| m.version == version)
            .map(|m| m.description.to_string())
    };
    assert_eq!(
        description(relay_svc::schema::NEEDED_MIGRATION).as_deref(),
        Some("outbox published")
    );
    assert_eq!(description(6).as_deref(), Some("outbox routing keys"));
    const { assert!(relay_svc::schema::NEEDED_MIGRATION > 6) };
}
