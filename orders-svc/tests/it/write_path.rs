//! The one write path (`batch::apply`) straight on a database, without the service: the same
//! calls give the same rows, events and outcomes whether each runs as a batch of one or all run
//! as one batch, and a batch of one that loses a creation race goes again as an update.

use std::collections::HashMap;

use orders_svc::{
    batch::{self, Call},
    db::{self, UpsertOutcome},
    error::Error,
    order::{Status, UpsertCommand},
    shard::Shard,
};
use outbox::trace::TraceHeaders;
use outbox_proto::orders::events::v1::OrderPayload;
use prost::Message;
use sqlx::PgPool;

use crate::group_commit::{assert_chain, rival_creates_order_9, wait_blocked};

const EMAIL: &str = "path@example.com";
/// The second of two shards: every event carries the shard header, so headers are compared too.
const SHARD: Shard = Shard { index: 1, count: 2 };

async fn fresh_pool(prefix: &str) -> PgPool {
    let url = outbox_testkit::fresh_database_url(prefix);
    let pool = outbox_kit::db::connect(&url, 4).await.expect("pool");
    db::MIGRATOR.run(&pool).await.expect("migrate");
    pool
}

async fn drop_database(pool: PgPool) {
    let name: String = sqlx::query_scalar("select current_database()")
        .fetch_one(&pool)
        .await
        .expect("database name");
    pool.close().await;
    outbox_testkit::drop_database(&name)
        .await
        .expect("drop database");
}

fn cmd(id: i64, status: Status, email: Option<&str>) -> UpsertCommand {
    UpsertCommand {
        id,
        status,
        customer_email: email.map(str::to_owned),
    }
}

/// An event's place independent of the global seq: (order, its index in the order's chain).
type Place = (i64, usize);

/// Every outbox row's [`Place`], by seq.
async fn places(pool: &PgPool) -> HashMap<i64, Place> {
    let rows: Vec<(i64, i64)> = sqlx::query_as("select seq, aggregate_id from outbox order by seq")
        .fetch_all(pool)
        .await
        .expect("outbox");
    let mut next: HashMap<i64, usize> = HashMap::new();
    rows.into_iter()
        .map(|(seq, id)| {
            let index = next.entry(id).or_default();
            *index += 1;
            (seq, (id, *index - 1))
        })
        .collect()
}

/// The outbox and the orders table with every seq replaced by its [`Place`] (seqs depend on the
/// order the events were appended in, which a batch decides by rounds): what a consumer and a
/// reader of the orders see.
async fn stored(pool: &PgPool) -> (Vec<String>, Vec<String>) {
    let places = places(pool).await;
    type EventRow = (
        i64,
        String,
        i64,
        String,
        Option<i64>,
        Vec<u8>,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
    );
    let events: Vec<EventRow> = sqlx::query_as(
        "select seq, aggregate_type, aggregate_id, event_type, prev_seq, payload, traceparent,
                routing_key, content_type, headers::text
           from outbox order by aggregate_id, seq",
    )
    .fetch_all(pool)
    .await
    .expect("outbox");
    let events = events
        .into_iter()
        .map(
            |(seq, ty, id, event_type, prev, payload, tp, key, content, headers)| {
                let payload = OrderPayload::decode(payload.as_slice()).expect("payload");
                format!(
                    "{:?} {ty}/{id} {event_type} prev={:?} {payload:?} trace={tp:?} key={key:?} \
                 content={content:?} headers={headers:?}",
                    places[&seq],
                    prev.map(|p| places[&p]),
                )
            },
        )
        .collect();
    type OrderRowRaw = (i64, String, String, i64, i64, bool);
    let orders: Vec<OrderRowRaw> = sqlx::query_as(
        "select o.id, o.status, o.customer_email, o.version, o.last_event_seq,
                o.updated_at = e.created_at
           from orders o join outbox e on e.seq = o.last_event_seq
          order by o.id",
    )
    .fetch_all(pool)
    .await
    .expect("orders");
    let orders = orders
        .into_iter()
        .map(|(id, status, email, version, last, at_last_event)| {
            format!(
                "{id} {status} {email} v{version} last={:?} updated_at_last_event={at_last_event}",
                places[&last]
            )
        })
        .collect();
    (events, orders)
}

/// A call's outcome with its seqs replaced by their [`Place`]s.
fn outcome(result: &Result<UpsertOutcome, Error>, places: &HashMap<i64, Place>) -> String {
    match result {
        Ok(o) => {
            let place = |seq: i64| places[&seq];
            format!(
                "created={} event={:?} {} {} {} v{} last={:?}",
                o.created,
                o.event_seq.map(place),
                o.order.id,
                o.order.status.as_str(),
                o.order.customer_email,
                o.order.version,
                place(o.order.last_event_seq),
            )
        }
        Err(e) => format!("{e:?}"),
    }
}

/// How many transactions wrote the outbox rows after `seq`.
async fn transactions_after(pool: &PgPool, seq: i64) -> i64 {
    sqlx::query_scalar("select count(distinct xmin::text) from outbox where seq > $1")
        .bind(seq)
        .fetch_one(pool)
        .await
        .expect("xmin")
}

#[tokio::test]
async fn a_batch_of_one_and_a_batch_of_many_write_the_same_rows_events_and_outcomes() {
    let trace = TraceHeaders::parse(
        "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        Some("vendor=1"),
    )
    .expect("traceparent");
    let setup = [
        cmd(1, Status::Pending, Some(EMAIL)),
        cmd(3, Status::Cancelled, Some(EMAIL)),
    ];
    use Status::*;
    let calls = [
        cmd(1, Paid, None),                       // change of an existing order
        cmd(2, Pending, Some(EMAIL)),             // creation
        cmd(1, Paid, None),                       // no-op after the earlier change
        cmd(3, Paid, None),                       // forbidden: CANCELLED is final
        cmd(4, Pending, None),                    // creation without email
        cmd(2, Cancelled, None),                  // second event of a new order
        cmd(1, Shipped, None),                    // second event of order 1
        cmd(1, Pending, None),                    // forbidden after the earlier changes
        cmd(4, Paid, Some("b@example.com")),      // creation, not PENDING
        cmd(1, Delivered, Some("x@example.com")), // third event; the email is ignored
        cmd(3, Cancelled, None),                  // no-op as stored
    ];
    // Every other call with a trace: both the stored trace and its absence must match.
    let with_trace: Vec<Call<'_>> = calls
        .iter()
        .enumerate()
        .map(|(i, c)| (c, (i % 2 == 0).then_some(&trace)))
        .collect();

    let (one_by_one, all_at_once) = (
        fresh_pool("orders_path_one").await,
        fresh_pool("orders_path_many").await,
    );
    for pool in [&one_by_one, &all_at_once] {
        for c in &setup {
            batch::apply_one(pool, SHARD, c, None).await.expect("setup");
        }
    }
    let mut singles = Vec::new();
    for &(c, trace) in &with_trace {
        singles.push(batch::apply_one(&one_by_one, SHARD, c, trace).await);
    }
    let together = batch::apply(&all_at_once, SHARD, &with_trace).await;

    let (places_one, places_many) = (places(&one_by_one).await, places(&all_at_once).await);
    let singles: Vec<String> = singles.iter().map(|r| outcome(r, &places_one)).collect();
    let together: Vec<String> = together.iter().map(|r| outcome(r, &places_many)).collect();
    assert_eq!(singles, together);
    assert!(
        singles[3].starts_with("ForbiddenTransition"),
        "{}",
        singles[3]
    );
    assert!(
        singles[4].starts_with("EmailRequiredOnCreate"),
        "{}",
        singles[4]
    );
    assert!(singles[2].contains("event=None"), "{}", singles[2]);

    let (rows_one, rows_many) = (stored(&one_by_one).await, stored(&all_at_once).await);
    assert_eq!(rows_one.0, rows_many.0, "the same events");
    assert_eq!(rows_one.1, rows_many.1, "the same orders");
    assert_eq!(rows_one.0.len(), 2 + 6, "setup + six changes");
    for id in 1..=4 {
        assert_chain(&one_by_one, id).await;
        assert_chain(&all_at_once, id).await;
    }
    // What was compared: six transactions against one.
    assert_eq!(transactions_after(&one_by_one, 2).await, 6);
    assert_eq!(transactions_after(&all_at_once, 2).await, 1);

    drop_database(one_by_one).await;
    drop_database(all_at_once).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_of_one_that_loses_a_creation_race_goes_again_as_an_update() {
    let pool = fresh_pool("orders_path_race").await;
    // Another writer (a second replica) is creating order 9, not committed yet.
    let rival = rival_creates_order_9(&pool).await;

    // Our call finds no row, so it creates: its insert waits for the rival on the primary key.
    let call = {
        let pool = pool.clone();
        tokio::spawn(async move {
            batch::apply_one(&pool, Shard::ONLY, &cmd(9, Status::Paid, Some(EMAIL)), None).await
        })
    };
    wait_blocked(&pool, 1).await;
    rival.commit().await.expect("the rival wins");

    let outcome = call.await.expect("task").expect("the call succeeds");
    // Order 9 exists now: the call became a change chained to the rival's creation, and its own
    // creation attempt (its outbox row with it) was rolled back.
    assert!(!outcome.created);
    assert_eq!(outcome.order.version, 2);
    assert_eq!(outcome.order.status, Status::Paid);
    let events = assert_chain(&pool, 9).await;
    assert_eq!(events.len(), 2, "the rival's creation and our change");
    assert_eq!(outcome.event_seq, Some(events[1].0));
    assert_eq!(crate::common::count(&pool, "outbox").await, 2);
    drop_database(pool).await;
}

/// The service's sessions plan every statement for its own arguments: a generic plan of the
/// batch's `where id = any($1) … for update`, cached while `orders` was small, read the table
/// by sequential scans at the end-to-end maximum, 422 rows per event (docs/BENCHMARKS.md,
/// "Speed round 3"). Which plan PostgreSQL caches depends on the statistics of the moment, so
/// the setting itself is what is checked, on a connection with the options the service's pools
/// use.
#[tokio::test]
async fn every_statement_is_planned_for_its_own_arguments() {
    use sqlx::Connection;
    let cfg = crate::common::config(outbox_testkit::fresh_database_url("orders_plans"));
    let [(setting, options)] = <[_; 1]>::try_from(cfg.shard_options().expect("options"))
        .expect("one database without SHARDS");
    assert_eq!(setting, "DATABASE_URL");
    let pool = outbox_kit::db::connect_with(&setting, options.clone(), 1)
        .await
        .expect("the database, created");
    let mut conn = sqlx::PgConnection::connect_with(&options)
        .await
        .expect("connect");
    let mode: String = sqlx::query_scalar("show plan_cache_mode")
        .fetch_one(&mut conn)
        .await
        .expect("plan_cache_mode");
    assert_eq!(mode, "force_custom_plan");
    conn.close().await.expect("close");
    drop_database(pool).await;
}
