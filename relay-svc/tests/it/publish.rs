//! The wire format, out-of-seq commits, unroutable publishes, and startup config errors.

use chrono::{DateTime, Utc};
use lapin::types::AMQPValue;
use outbox::trace::TraceHeaders;
use outbox_proto::orders::{events::v1::OrderEvent, v1::OrderStatus};
use relay_svc::App;
use tokio_util::sync::CancellationToken;

use crate::common::*;

const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

#[derive(Debug, sqlx::FromRow)]
struct Row {
    seq: i64,
    traceparent: Option<String>,
    created_at: DateTime<Utc>,
}

#[tokio::test]
async fn publishes_the_event_with_every_property_then_deletes_the_row() {
    let (orders, exchange, consumer) = orders_and_consumer().await;

    // Written before the relay runs, so the rows can be read back as the relay will see them.
    let created = orders
        .upsert_with(42, OrderStatus::Pending, Some(TRACEPARENT))
        .await;
    let paid = orders.upsert(42, OrderStatus::Paid).await;
    let rows: Vec<Row> =
        sqlx::query_as("select seq, traceparent, created_at from outbox order by seq")
            .fetch_all(&orders.pool)
            .await
            .expect("rows");
    assert_eq!(
        rows.iter().map(|r| r.seq as u64).collect::<Vec<_>>(),
        [created, paid]
    );

    let relay = Relay::start_for(&orders, &exchange).await;
    wait_until("both events consumed", || async {
        consumer.has_all(&[created, paid])
    })
    .await;
    wait_until("the outbox is empty", || async {
        orders.outbox_seqs().await.is_empty()
    })
    .await;

    let received = consumer.snapshot();
    let first = received
        .iter()
        .find(|r| r.event.seq == created)
        .expect("created");
    let second = received.iter().find(|r| r.event.seq == paid).expect("paid");

    assert_eq!(
        first.event,
        OrderEvent {
            seq: created,
            r#type: "OrderCreated".into(),
            aggregate_id: 42,
            prev_seq: None,
            payload: Some(outbox_testkit::orders::order_payload(
                42,
                OrderStatus::Pending,
                OrderStatus::Unspecified
            )),
            ts_ms: rows[0].created_at.timestamp_millis(),
        }
    );
    assert_eq!(
        second.event,
        OrderEvent {
            seq: paid,
            r#type: "OrderStatusChanged".into(),
            aggregate_id: 42,
            prev_seq: Some(created),
            payload: Some(outbox_testkit::orders::order_payload(
                42,
                OrderStatus::Paid,
                OrderStatus::Pending
            )),
            ts_ms: rows[1].created_at.timestamp_millis(),
        }
    );
    assert_eq!(first.routing_key, "order.created");
    assert_eq!(second.routing_key, "order.status_changed");

    for (msg, row, kind) in [
        (first, &rows[0], "OrderCreated"),
        (second, &rows[1], "OrderStatusChanged"),
    ] {
        let p = &msg.properties;
        assert_published_properties(p, row.seq, kind, row.created_at);
        // The broker checked it against the connection's user: who published is proven.
        let url: lapin::uri::AMQPUri = outbox_testkit::amqp_url().parse().expect("test AMQP URL");
        assert_eq!(
            p.user_id().as_ref().map(|s| s.to_string()),
            Some(url.authority.userinfo.username),
            "user_id is the relay's AMQP user"
        );
        let headers = p.headers().as_ref().expect("headers").inner();
        assert_eq!(
            headers.get("aggregate_id"),
            Some(&AMQPValue::LongLongInt(42))
        );
        // The relay's publish is a child span of the request's trace.
        let stored = TraceHeaders::parse(
            row.traceparent.as_deref().expect("stored traceparent"),
            None,
        )
        .expect("valid stored traceparent");
        let sent = match headers.get("traceparent") {
            Some(AMQPValue::LongString(s)) => {
                TraceHeaders::parse(&s.to_string(), None).expect("valid")
            }
            other => panic!("traceparent header: {other:?}"),
        };
        assert_eq!(sent.trace_id(), stored.trace_id());
        assert_ne!(sent.traceparent(), stored.traceparent(), "a new span id");
    }
    let first_headers = first.headers();
    assert!(
        !first_headers.contains_key("prev_seq"),
        "no prev_seq on the first event"
    );
    let second_headers = second.headers();
    assert_eq!(
        second_headers.get("prev_seq"),
        Some(&AMQPValue::LongLongInt(created as i64))
    );
    // The caller's trace id is continued end to end.
    let first_trace = TraceHeaders::parse(TRACEPARENT, None).expect("valid");
    assert_eq!(
        TraceHeaders::parse(rows[0].traceparent.as_deref().expect("tp"), None)
            .expect("valid")
            .trace_id(),
        first_trace.trace_id()
    );

    let status = relay.status().await;
    assert!(status.active);
    assert_eq!(status.backlog, 0);
    assert_eq!(status.oldest_unsent_age_ms, 0);
    assert_eq!(status.last_published_seq, paid);
    assert_eq!(status.published_total, 2);
    assert_eq!(status.consecutive_failures, 0);
    let metrics = relay.metrics().await;
    for name in [
        "relay_outbox_backlog",
        "relay_outbox_oldest_unsent_age_seconds",
        "relay_last_published_seq",
        "relay_active",
        "relay_consecutive_failures",
        "relay_published_total",
        "relay_commit_to_publish_seconds_bucket",
        "relay_held_orders",
        "relay_outbox_quarantined",
    ] {
        assert!(metrics.contains(name), "{name} missing from:\n{metrics}");
    }
    consumer.cleanup().await;
}

/// Sequence values are taken before commit: a transaction holding a small seq can commit after
/// a bigger one was published. A high-water-mark relay would skip it; this one must not.
#[tokio::test]
async fn an_event_committed_after_a_later_seq_was_published_is_still_published() {
    let (orders, exchange, consumer) = orders_and_consumer().await;
    let _relay = Relay::start_for(&orders, &exchange).await;

    let insert = "insert into outbox (aggregate_id, event_type, routing_key, prev_seq, payload) \
                  values ($1, 'OrderCreated', 'order.created', null, $2) returning seq";
    let mut slow = orders.pool.begin().await.expect("begin A");
    let small: i64 = sqlx::query_scalar(insert)
        .bind(1001_i64)
        .bind(payload(
            1001,
            OrderStatus::Pending,
            OrderStatus::Unspecified,
        ))
        .fetch_one(&mut *slow)
        .await
        .expect("insert A");
    let big: i64 = sqlx::query_scalar(insert)
        .bind(1002_i64)
        .bind(payload(
            1002,
            OrderStatus::Pending,
            OrderStatus::Unspecified,
        ))
        .fetch_one(&orders.pool)
        .await
        .expect("insert B (autocommit)");
    assert!(small < big);

    wait_until("the later seq is published and deleted", || async {
        consumer.has_all(&[big as u64]) && orders.outbox_seqs().await.is_empty()
    })
    .await;
    assert!(!consumer.has_all(&[small as u64]), "A is not committed yet");

    slow.commit().await.expect("commit A");
    // No NOTIFY for raw SQL: the fallback poll must find it.
    wait_until("the earlier seq, committed late, is published", || async {
        consumer.has_all(&[small as u64])
    })
    .await;
    wait_until("the outbox is empty", || async {
        orders.outbox_seqs().await.is_empty()
    })
    .await;
    consumer.cleanup().await;
}

/// With no queue bound, every publish is returned: nothing may be deleted, the failure must be
/// visible, and binding a queue later drains the outbox.
#[tokio::test]
async fn unroutable_events_stay_in_the_outbox_until_a_queue_is_bound() {
    // The counter read below is process-wide: only in a process of its own does it count this
    // test's returns alone.
    if outbox_testkit::run_in_own_process(concat!(
        module_path!(),
        "::unroutable_events_stay_in_the_outbox_until_a_queue_is_bound"
    )) {
        return;
    }
    let orders = Orders::start().await;
    let exchange = outbox_testkit::unique("relay_ex");
    let consumer = Consumer::start(&exchange, None).await;
    let relay = Relay::start_for(&orders, &exchange).await;

    let mut events = Vec::new();
    for id in 1..=3 {
        for status in [OrderStatus::Pending, OrderStatus::Paid] {
            events.push((id, orders.upsert(id, status).await));
        }
    }
    wait_until("each order is held after its returns", || async {
        let live = relay.live.snapshot();
        live.refused_total >= 6 && live.held_orders == 3
    })
    .await;
    assert_eq!(orders.outbox_seqs().await.len(), 6, "returned rows stay");
    let s = relay.status().await;
    assert!(s.active && s.backlog == 6, "{s:?}");
    assert!(s.oldest_unsent_age_ms > 0);
    assert_eq!(s.published_total, 0);
    // A per-row problem is not a failure of the relay: no global backoff.
    assert_eq!(s.consecutive_failures, 0, "{s:?}");
    let metrics = relay.metrics().await;
    // Every counter is exported at 0 from the start: the returns must have counted.
    let returned = outbox_testkit::Exposition::parse(&metrics)
        .value("relay_publish_failed_total{reason=\"returned\"}");
    assert!(returned.is_some_and(|v| v >= 1.0), "{metrics}");
    assert!(metrics.contains("relay_outbox_backlog"), "{metrics}");
    assert!(metrics.contains("relay_consecutive_failures"), "{metrics}");
    assert!(metrics.contains("relay_held_orders"), "{metrics}");

    consumer.bind("order.#").await;
    all_arrive(
        "everything is delivered once routable",
        &consumer,
        &orders,
        &events,
    )
    .await;
    wait_until("GetStatus shows recovery", || async {
        let s = relay.status().await;
        s.consecutive_failures == 0 && s.backlog == 0 && s.published_total == 6
    })
    .await;
    assert_complete_and_ordered(&consumer.snapshot(), &chains_of(&events));
    consumer.cleanup().await;
}

/// Only `order.status_changed` is bound: an order's created event is returned, so its later
/// events must wait behind it (never overtake it), while nothing is deleted unconfirmed.
#[tokio::test]
async fn a_returned_event_holds_back_the_rest_of_its_order() {
    let orders = Orders::start().await;
    let exchange = outbox_testkit::unique("relay_ex");
    let consumer = Consumer::start(&exchange, Some("order.status_changed")).await;
    let relay = Relay::start_for(&orders, &exchange).await;
    let created = orders.upsert(7, OrderStatus::Pending).await;
    let paid = orders.upsert(7, OrderStatus::Paid).await;
    wait_until("the returned create is retried", || async {
        relay.live.snapshot().refused_total >= 2
    })
    .await;
    assert!(
        consumer.seqs().is_empty(),
        "the status change must not overtake its order's returned create"
    );
    assert_eq!(orders.outbox_seqs().await, [created as i64, paid as i64]);
    consumer.cleanup().await;
}

#[tokio::test]
async fn bad_urls_fail_startup_naming_the_setting() {
    let base = relay_config(
        "postgres://postgres@127.0.0.1:5432/x",
        &outbox_testkit::amqp_url(),
        "x",
    );
    let mut cfg = base.clone();
    cfg.database_url = "not a url".into();
    let err = App::build(cfg, CancellationToken::new())
        .await
        .expect_err("bad DATABASE_URL");
    assert!(err.to_string().contains("DATABASE_URL"), "{err:#}");

    let mut cfg = base.clone();
    cfg.amqp_url = "http://nope".into();
    let err = App::build(cfg, CancellationToken::new())
        .await
        .expect_err("bad AMQP_URL");
    assert!(err.to_string().contains("AMQP_URL"), "{err:#}");

    let mut cfg = base;
    cfg.backoff_min = std::time::Duration::from_secs(5);
    cfg.backoff_max = std::time::Duration::from_millis(10);
    let err = App::build(cfg, CancellationToken::new())
        .await
        .expect_err("bad backoff");
    assert!(err.to_string().contains("BACKOFF_MIN"), "{err:#}");
}
