//! The published rows (`T_published`): the relay's delete keeps each row it published with the
//! time the broker's confirm was recorded, the heads say when they last moved, and the leader's
//! roll drops expired days whole, even while a pinned xmin horizon keeps dead rows from vacuum.

use std::time::Duration;

use chrono::{DateTime, Utc};
use sqlx::{AssertSqlSafe, Connection, PgConnection};

use crate::support::{
    all_arrive,
    broker::Consumer,
    db::{Db, LIFECYCLE, event},
    relay::{Running, settings},
};

/// Seqs as (aggregate, seq) pairs for [`all_arrive`] (which reads only the seqs).
fn keyed(seqs: &[i64]) -> Vec<(i64, i64)> {
    seqs.iter().map(|s| (0, *s)).collect()
}

/// A published row as the trace and replay read it back.
#[derive(Debug, sqlx::FromRow)]
struct Published {
    seq: i64,
    aggregate_id: i64,
    event_type: String,
    prev_seq: Option<i64>,
    payload: Vec<u8>,
    created_at: DateTime<Utc>,
    published_at: DateTime<Utc>,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_published_row_is_kept_with_its_confirm_time_and_the_heads_say_when_they_moved() {
    let db = Db::fresh("outbox_relay_published").await;
    let consumer = Consumer::start("parcel.#").await;
    let events: Vec<_> = LIFECYCLE
        .iter()
        .flat_map(|step| [event(1, step), event(2, step)])
        .collect();
    let before = Utc::now();
    let seqs = db.append(&events).await;
    let mut relay = Running::start(settings(&db, &consumer.exchange), db.pool.clone());
    all_arrive("", &consumer, &db, &keyed(&seqs)).await;
    relay.stop().await;

    let published: Vec<Published> = sqlx::query_as(AssertSqlSafe(format!(
        "select seq, aggregate_id, event_type, prev_seq, payload, created_at, published_at
           from {} order by seq",
        db.outbox.table().published()
    )))
    .fetch_all(&db.pool)
    .await
    .expect("published rows");
    assert_eq!(published.iter().map(|p| p.seq).collect::<Vec<_>>(), seqs);
    let received = consumer.envelopes();
    for row in &published {
        let sent = received
            .iter()
            .find(|e| e.seq as i64 == row.seq)
            .expect("sent");
        assert_eq!(
            (
                row.aggregate_id,
                &row.event_type,
                row.prev_seq,
                &row.payload
            ),
            (
                sent.aggregate_id,
                &sent.r#type,
                sent.prev_seq.map(|p| p as i64),
                &sent.payload
            )
        );
        assert!(row.published_at >= row.created_at, "{row:?}");
    }

    let heads: Vec<(i64, i64, Option<DateTime<Utc>>)> = sqlx::query_as(AssertSqlSafe(format!(
        "select aggregate_id, last_seq, appended_at from {} order by aggregate_id",
        db.outbox.table().heads()
    )))
    .fetch_all(&db.pool)
    .await
    .expect("heads");
    for (id, last, appended_at) in heads {
        let last_row = published
            .iter()
            .rfind(|p| p.aggregate_id == id)
            .expect("rows");
        assert_eq!(last, last_row.seq);
        let at = appended_at.expect("the trigger sets it");
        assert!(
            at >= before && at <= last_row.published_at,
            "{at} for parcel {id}"
        );
    }
    consumer.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relay_without_retention_keeps_nothing() {
    let db = Db::fresh("outbox_relay_published").await;
    let consumer = Consumer::start("parcel.#").await;
    let seqs = db.append(&[event(1, "created"), event(1, "packed")]).await;
    let mut s = settings(&db, &consumer.exchange);
    s.published_retention = None;
    let mut relay = Running::start(s, db.pool.clone());
    all_arrive("", &consumer, &db, &keyed(&seqs)).await;
    relay.stop().await;
    assert_eq!(published_count(&db).await, 0);
    consumer.cleanup().await;
}

/// Expired days go whole (a dropped partition leaves no dead row, whatever pins the horizon);
/// today's and the coming days' partitions are made; a roll that cannot get its lock within
/// 200 ms fails at once instead of queueing the relay's writes behind a long reader.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_roll_drops_expired_days_whole_even_behind_a_pinned_horizon() {
    let db = Db::fresh("outbox_relay_published").await;
    let table = db.outbox.table();
    let published = table.published();
    let old_day = (Utc::now() - chrono::Duration::days(10)).date_naive();
    let old = format!("{published}_p{}", old_day.format("%Y%m%d"));
    sqlx::query(AssertSqlSafe(format!(
        "create table {old} partition of {published}
           for values from ('{old_day} 00:00+00') to ('{next} 00:00+00')",
        next = old_day.succ_opt().expect("a day after")
    )))
    .execute(&db.pool)
    .await
    .expect("an old day's partition");
    sqlx::query(AssertSqlSafe(format!(
        "insert into {published} (seq, aggregate_type, aggregate_id, event_type, routing_key,
                                  content_type, payload, created_at, published_at)
         select g, 'parcel', g, 'created', 'parcel.created', 'application/json', '{{}}',
                '{old_day} 12:00+00', '{old_day} 12:00+00'
           from generate_series(1, 1000) g"
    )))
    .execute(&db.pool)
    .await
    .expect("old published rows");
    assert_eq!(published_count(&db).await, 1000);

    // A pinned horizon: a transaction holding a snapshot (as pg_dump does).
    let mut pin = PgConnection::connect(&db.database_url).await.expect("pin");
    sqlx::query("begin isolation level repeatable read")
        .execute(&mut pin)
        .await
        .expect("begin");
    sqlx::query("select pg_current_xact_id()")
        .execute(&mut pin)
        .await
        .expect("snapshot");

    let queries = outbox_relay::db::Queries::new(table);
    let week = Duration::from_secs(7 * 24 * 3600);
    let done = outbox_relay::db::roll_published(&queries, &db.pool, week)
        .await
        .expect("roll");
    assert!(done.contains(&format!("dropped {old}")), "{done:?}");
    assert_eq!(published_count(&db).await, 0, "gone whole despite the pin");
    let parts: Vec<String> = sqlx::query_scalar(AssertSqlSafe(format!(
        "select c.relname::text from pg_inherits i join pg_class c on c.oid = i.inhrelid
          where i.inhparent = '{published}'::regclass order by 1"
    )))
    .fetch_all(&db.pool)
    .await
    .expect("partitions");
    let today = Utc::now().date_naive();
    let name = |d: chrono::NaiveDate| format!("{}_published_p{}", "events", d.format("%Y%m%d"));
    for d in [
        today,
        today.succ_opt().expect("day"),
        today + chrono::Days::new(2),
    ] {
        assert!(parts.contains(&name(d)), "{parts:?} lacks {}", name(d));
    }

    // A reader holding the table (a long report) while another day has expired: the roll
    // gives up after its lock timeout instead of queueing the relay's writes behind it.
    let expired = Utc::now().date_naive() - chrono::Days::new(20);
    sqlx::query(AssertSqlSafe(format!(
        "create table {published}_p{d} partition of {published}
           for values from ('{expired} 00:00+00') to ('{next} 00:00+00')",
        d = expired.format("%Y%m%d"),
        next = expired.succ_opt().expect("a day after")
    )))
    .execute(&db.pool)
    .await
    .expect("an expired day's partition");
    sqlx::query(AssertSqlSafe(format!("select count(*) from {published}")))
        .execute(&mut pin)
        .await
        .expect("read in the pinned transaction");
    let started = std::time::Instant::now();
    let refused = outbox_relay::db::roll_published(&queries, &db.pool, week).await;
    assert!(refused.is_err(), "{refused:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    pin.close().await.expect("close");
    let done = outbox_relay::db::roll_published(&queries, &db.pool, week)
        .await
        .expect("roll once the reader is gone");
    assert_eq!(
        done,
        [format!("dropped {published}_p{}", expired.format("%Y%m%d"))]
    );
}

async fn published_count(db: &Db) -> i64 {
    sqlx::query_scalar(AssertSqlSafe(format!(
        "select count(*) from {}",
        db.outbox.table().published()
    )))
    .fetch_one(&db.pool)
    .await
    .expect("count")
}
