//! The append API against the real PostgreSQL: chains, concurrency, rollback, deleted rows,
//! writers that bypass the crate, bad input.

use std::collections::BTreeMap;

use outbox::{Error, NewEvent, Outbox, trace::TraceHeaders};
use sqlx::PgPool;
use tracing::Instrument;

async fn setup(table: &str) -> (PgPool, Outbox) {
    let pool = outbox::doctest_pool().await.expect("fresh database");
    let outbox = Outbox::new(table).expect("table name");
    outbox.table().migrator().run(&pool).await.expect("migrate");
    (pool, outbox)
}

fn event(id: i64, ty: &str) -> NewEvent {
    NewEvent::new("invoice", id, ty, "invoice.changed", ty.as_bytes().to_vec())
}

/// (seq, prev_seq) of one aggregate's rows present, in seq order.
async fn chain(pool: &PgPool, table: &str, id: i64) -> Vec<(i64, Option<i64>)> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "select seq, prev_seq from {table} where aggregate_id = $1 order by seq"
    )))
    .bind(id)
    .fetch_all(pool)
    .await
    .expect("chain")
}

fn assert_linked(chain: &[(i64, Option<i64>)]) {
    for pair in chain.windows(2) {
        assert_eq!(pair[1].1, Some(pair[0].0), "{chain:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_writers_of_one_aggregate_build_one_chain() {
    let (pool, outbox) = setup("outbox").await;
    let mut tasks = Vec::new();
    for w in 0..8 {
        let (pool, outbox) = (pool.clone(), outbox.clone());
        tasks.push(tokio::spawn(async move {
            for i in 0..10 {
                let mut tx = pool.begin().await.expect("begin");
                outbox
                    .append(&mut tx, event(1, &format!("E{w}.{i}")))
                    .await
                    .expect("append");
                tx.commit().await.expect("commit");
            }
        }));
    }
    for t in tasks {
        t.await.expect("writer");
    }
    let c = chain(&pool, "outbox", 1).await;
    assert_eq!(c.len(), 80);
    assert_eq!(c[0].1, None, "one root");
    assert_linked(&c);
}

#[tokio::test]
async fn the_chain_survives_deleted_rows_and_rollbacks() {
    let (pool, outbox) = setup("billing.events").await;
    let mut conn = pool.acquire().await.expect("conn");
    let first = outbox.append(&mut conn, event(5, "A")).await.expect("a");
    // The relay published and deleted it: the head is kept apart from the rows.
    sqlx::query("delete from billing.events")
        .execute(&pool)
        .await
        .expect("delete");
    let mut tx = pool.begin().await.expect("begin");
    outbox.append(&mut tx, event(5, "lost")).await.expect("b");
    tx.rollback().await.expect("rollback");
    let second = outbox.append(&mut conn, event(5, "C")).await.expect("c");
    assert_eq!(
        second.prev_seq,
        Some(first.seq),
        "the rolled-back event is no link"
    );
}

#[tokio::test]
async fn a_batch_chains_each_aggregate_in_slice_order() {
    let (pool, outbox) = setup("outbox").await;
    let mut tx = pool.begin().await.expect("begin");
    let before = outbox
        .append(&mut tx, event(2, "first"))
        .await
        .expect("first");
    let events = [
        event(2, "a"),
        event(3, "b"),
        event(2, "c"),
        NewEvent::new("customer", 2, "d", "customer.changed", vec![]),
        event(2, "e"),
    ];
    let out = outbox.append_all(&mut tx, &events).await.expect("batch");
    tx.commit().await.expect("commit");
    assert_eq!(out[0].prev_seq, Some(before.seq));
    assert_eq!(out[2].prev_seq, Some(out[0].seq));
    assert_eq!(out[4].prev_seq, Some(out[2].seq));
    // Another aggregate, and another aggregate type with the same id: chains of their own.
    assert_eq!((out[1].prev_seq, out[3].prev_seq), (None, None));
    // One transaction.
    let xmins: i64 = sqlx::query_scalar("select count(distinct xmin::text) from outbox")
        .fetch_one(&pool)
        .await
        .expect("xmin");
    assert_eq!(xmins, 1);
}

#[tokio::test]
async fn rows_inserted_without_the_crate_move_the_head_too() {
    let (pool, outbox) = setup("outbox").await;
    // An operator moving a row back from quarantine, or a writer that predates the crate.
    let seq: i64 = sqlx::query_scalar(
        "insert into outbox (aggregate_type, aggregate_id, event_type, routing_key, \
                             content_type, payload) \
         values ('invoice', 9, 'X', 'invoice.x', 'text/plain', '') returning seq",
    )
    .fetch_one(&pool)
    .await
    .expect("raw insert");
    let mut conn = pool.acquire().await.expect("conn");
    let next = outbox
        .append(&mut conn, event(9, "Y"))
        .await
        .expect("append");
    assert_eq!(next.prev_seq, Some(seq));
}

#[tokio::test]
async fn stored_fields_are_the_given_ones() {
    let (pool, outbox) = setup("outbox").await;
    let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let mut conn = pool.acquire().await.expect("conn");
    outbox
        .append(
            &mut conn,
            event(4, "Issued")
                .content_type("application/json")
                .header("tenant", "acme")
                .trace(TraceHeaders::parse(tp, Some("congo=t61rcWkgMzE")).expect("valid")),
        )
        .await
        .expect("append");
    let row: (String, String, String, String, String, Option<String>) = sqlx::query_as(
        "select aggregate_type, event_type, routing_key, content_type, headers::text, \
                traceparent from outbox",
    )
    .fetch_one(&pool)
    .await
    .expect("row");
    assert_eq!(
        row,
        (
            "invoice".into(),
            "Issued".into(),
            "invoice.changed".into(),
            "application/json".into(),
            r#"{"tenant": "acme", "tracestate": "congo=t61rcWkgMzE"}"#.into(),
            Some(tp.into())
        )
    );
    let headers = outbox::wire::parse_headers(&row.4).expect("headers");
    assert_eq!(
        headers,
        BTreeMap::from([
            ("tenant".into(), "acme".into()),
            ("tracestate".into(), "congo=t61rcWkgMzE".into())
        ])
    );
}

#[tokio::test]
async fn bad_events_are_refused_before_anything_is_written() {
    let (pool, outbox) = setup("outbox").await;
    let mut conn = pool.acquire().await.expect("conn");
    let cases = [
        (NewEvent::new("", 1, "T", "k", vec![]), "aggregate_type"),
        (NewEvent::new("a", 1, " ", "k", vec![]), "event_type"),
        (NewEvent::new("a", 1, "T", "", vec![]), "routing_key"),
        (event(1, "T").content_type(""), "content_type"),
        (event(1, "T").header("prev_seq", "3"), "headers"),
        (event(1, "T").header("tracestate", "a=b"), "headers"),
    ];
    for (bad, field) in cases {
        // A good event first in the same call: nothing of the call may be written.
        let err = outbox
            .append_all(&mut conn, &[event(1, "ok"), bad])
            .await
            .expect_err(field);
        match err {
            Error::InvalidEvent { field: f, .. } => assert_eq!(f, field),
            other => panic!("{field}: {other}"),
        }
    }
    let rows: i64 = sqlx::query_scalar("select count(*) from outbox")
        .fetch_one(&pool)
        .await
        .expect("count");
    assert_eq!(rows, 0);
}

#[tokio::test]
async fn notify_wakes_a_listener_on_the_tables_channel() {
    let (pool, outbox) = setup("outbox").await;
    let mut listener = sqlx::postgres::PgListener::connect_with(&pool)
        .await
        .expect("listener");
    listener
        .listen(&outbox.table().notify_channel())
        .await
        .expect("listen");
    outbox.notify(&pool).await.expect("notify");
    let n = tokio::time::timeout(std::time::Duration::from_secs(5), listener.recv())
        .await
        .expect("in time")
        .expect("notification");
    assert_eq!(n.channel(), "outbox_events");
}

/// `(traceparent, headers)` of the only row.
async fn stored_trace(pool: &sqlx::PgPool) -> (Option<String>, Option<String>) {
    sqlx::query_as("select traceparent, headers::text from outbox")
        .fetch_one(pool)
        .await
        .expect("row")
}

#[tokio::test(flavor = "current_thread")]
async fn append_stores_the_current_spans_trace_context() {
    use opentelemetry::trace::TracerProvider as _;
    use tracing_subscriber::layer::SubscriberExt;

    let (pool, outbox) = setup("outbox").await;
    // The layer without an exporter: ids are handed out, nothing is sent anywhere.
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")));
    // A current-thread runtime: the default subscriber covers the whole test.
    let _default = tracing::subscriber::set_default(subscriber);
    let span = tracing::info_span!("request");
    let caller = TraceHeaders::parse(
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        Some("congo=t61rcWkgMzE"),
    )
    .expect("valid");
    caller.continue_in(&span);
    let expected = span.in_scope(TraceHeaders::current).expect("a context");

    let mut conn = pool.acquire().await.expect("conn");
    outbox
        .append(&mut conn, event(4, "Issued"))
        .instrument(span.clone())
        .await
        .expect("append");
    let (traceparent, headers) = stored_trace(&pool).await;
    let stored = TraceHeaders::parse(&traceparent.expect("stored"), Some("congo=t61rcWkgMzE"))
        .expect("valid");
    assert_eq!(stored, expected, "the current span's own context");
    assert_eq!(
        stored.trace_id(),
        caller.trace_id(),
        "in the caller's trace"
    );
    assert_ne!(
        stored.traceparent(),
        caller.traceparent(),
        "a span of ours, not the caller's"
    );
    assert_eq!(
        headers.as_deref(),
        Some(r#"{"tracestate": "congo=t61rcWkgMzE"}"#)
    );
}

#[tokio::test(flavor = "current_thread")]
async fn without_the_opentelemetry_layer_nothing_is_stored() {
    let (pool, outbox) = setup("outbox").await;
    let mut conn = pool.acquire().await.expect("conn");
    outbox
        .append(&mut conn, event(4, "Issued"))
        .instrument(tracing::info_span!("request"))
        .await
        .expect("append");
    assert_eq!(stored_trace(&pool).await, (None, None));
}
