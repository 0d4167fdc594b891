//! A fresh database holding an outbox of the test's own, the rows tests put in it (through the
//! `outbox` crate as a service would, or raw as a writer that predates it), and what is left.

use std::{future::Future, time::Duration};

use outbox::{NewEvent, Outbox};
use sqlx::PgPool;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The outbox the behaviour tests relay: a named, schema-qualified one, as a stranger's would be.
pub const TABLE: &str = "shipping.events";

/// The steps every test parcel walks through: four events, each under its own routing key
/// (`parcel.<step>`).
pub const LIFECYCLE: [&str; 4] = ["created", "packed", "shipped", "delivered"];

/// Event `step` of parcel `id`, routed as `parcel.<step>`.
pub fn event(id: i64, step: &str) -> NewEvent {
    let body = format!("{{\"parcel\":{id},\"step\":\"{step}\"}}").into_bytes();
    NewEvent::new("parcel", id, step, format!("parcel.{step}"), body)
        .content_type("application/json")
}

/// Headers no encoder can read (a value that is not a string): the relay must quarantine the row.
pub const UNREADABLE_HEADERS: &str = r#"{"x-broken": 1}"#;

/// Appends `event` on its own (it commits at once) and wakes the relay, as a service's write
/// does; returns its seq.
pub async fn append_and_notify(pool: &PgPool, outbox: &Outbox, event: NewEvent) -> i64 {
    let mut conn = pool.acquire().await.expect("connection");
    let seq = outbox.append(&mut conn, event).await.expect("append").seq;
    outbox.notify(&mut *conn).await.expect("notify");
    seq
}

/// A fresh database with an outbox; dropped with the value, whether the test passed or failed.
pub struct Db {
    pub database_url: String,
    pub pool: PgPool,
    pub outbox: Outbox,
}

impl Db {
    /// A fresh database with [`TABLE`].
    pub async fn fresh(prefix: &str) -> Self {
        Self::at(outbox_testkit::fresh_database_url(prefix), TABLE).await
    }

    /// The database at `database_url` (created if missing) with the outbox `table` migrated.
    pub async fn at(database_url: String, table: &str) -> Self {
        outbox_testkit::init_tracing();
        let pool = outbox_kit::db::connect(&database_url, 8)
            .await
            .expect("database");
        let outbox = Outbox::new(table).expect("name");
        outbox.table().migrator().run(&pool).await.expect("migrate");
        Self {
            database_url,
            pool,
            outbox,
        }
    }

    /// The events table's qualified name.
    pub fn events(&self) -> String {
        self.outbox.table().events()
    }

    /// The quarantine table's qualified name.
    pub fn quarantine(&self) -> String {
        self.outbox.table().quarantine()
    }

    /// Appends `events` in one transaction through the `outbox` crate; returns their seqs.
    pub async fn append(&self, events: &[NewEvent]) -> Vec<i64> {
        let mut tx = self.pool.begin().await.expect("begin");
        let appended = self
            .outbox
            .append_all(&mut tx, events)
            .await
            .expect("append");
        tx.commit().await.expect("commit");
        appended.iter().map(|a| a.seq).collect()
    }

    /// Inserts a row of parcel `id` with the chain link and headers given, raw (no head lock,
    /// no NOTIFY), as a writer outside the crate would; returns its seq.
    pub async fn insert_row(&self, id: i64, prev_seq: Option<i64>, headers: Option<&str>) -> i64 {
        sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "insert into {} (aggregate_type, aggregate_id, event_type, prev_seq, routing_key,
                             content_type, headers, payload)
             values ('parcel', $1, 'changed', $2, 'parcel.changed', 'application/json', $3::jsonb,
                     '{{}}')
             returning seq",
            self.events()
        )))
        .bind(id)
        .bind(prev_seq)
        .bind(headers)
        .fetch_one(&self.pool)
        .await
        .expect("insert outbox row")
    }

    /// `events` rows over `aggregates` chains in one insert (event i belongs to aggregate
    /// 1 + i % aggregates); returns every (aggregate, seq).
    pub async fn preload(&self, events: i64, aggregates: i64) -> Vec<(i64, i64)> {
        let table = self.events();
        let mut tx = self.pool.begin().await.expect("begin");
        let first: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "with ins as (
                 insert into {table} (aggregate_type, aggregate_id, event_type, routing_key,
                                      content_type, payload)
                 select 'parcel', 1 + (g % $2), 'changed', 'parcel.changed', 'application/json',
                        '{{}}'
                   from generate_series(0, $1 - 1) g
                 returning seq)
             select min(seq) from ins"
        )))
        .bind(events)
        .bind(aggregates)
        .fetch_one(&mut *tx)
        .await
        .expect("preload");
        // Identity values of one insert are handed out in row order: chain by position.
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "update {table} set prev_seq = seq - $1 where seq >= $2 + $1"
        )))
        .bind(aggregates)
        .bind(first)
        .execute(&mut *tx)
        .await
        .expect("chain");
        tx.commit().await.expect("commit");
        sqlx::query_as(sqlx::AssertSqlSafe(format!(
            "select aggregate_id, seq from {table} order by seq"
        )))
        .fetch_all(&self.pool)
        .await
        .expect("read back")
    }

    /// The seqs still in the outbox, ascending.
    pub async fn unsent(&self) -> Vec<i64> {
        self.seqs_in(&self.events()).await
    }

    /// The seqs in quarantine, ascending.
    pub async fn quarantined(&self) -> Vec<i64> {
        self.seqs_in(&self.quarantine()).await
    }

    async fn seqs_in(&self, table: &str) -> Vec<i64> {
        sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
            "select seq from {table} order by seq"
        )))
        .fetch_all(&self.pool)
        .await
        .expect("read seqs")
    }

    /// `writers` concurrent writers, each walking `parcels_each` parcels through [`LIFECYCLE`]
    /// (interleaved across its parcels, one transaction per event, pausing `pause` between
    /// them) and waking the relay after each commit as a service does. Returns every
    /// (parcel, seq).
    pub fn spawn_writers(
        &self,
        writers: i64,
        parcels_each: i64,
        pause: Duration,
    ) -> JoinHandle<Vec<(i64, i64)>> {
        self.writers(writers, move |w, pool, outbox| async move {
            let mut events = Vec::new();
            for step in LIFECYCLE {
                for i in 1..=parcels_each {
                    let id = w * 1_000 + i;
                    events.push((id, append_and_notify(&pool, &outbox, event(id, step)).await));
                    if !pause.is_zero() {
                        tokio::time::sleep(pause).await;
                    }
                }
            }
            events
        })
    }

    /// `writers` concurrent writers that walk fresh parcels through [`LIFECYCLE`] (40 ms between
    /// events) until `stop`. Returns every (parcel, seq).
    pub fn spawn_writers_until(
        &self,
        writers: i64,
        stop: CancellationToken,
    ) -> JoinHandle<Vec<(i64, i64)>> {
        self.writers(writers, move |w, pool, outbox| {
            let stop = stop.clone();
            async move {
                let mut events = Vec::new();
                let mut id = w * 100_000;
                while !stop.is_cancelled() {
                    id += 1;
                    for step in LIFECYCLE {
                        events.push((id, append_and_notify(&pool, &outbox, event(id, step)).await));
                        tokio::time::sleep(Duration::from_millis(40)).await;
                    }
                }
                events
            }
        })
    }

    /// Runs `writers` writer tasks (`write(w, pool, outbox)`, each returning the (parcel, seq)
    /// pairs it appended) and gathers what they appended.
    fn writers<F, Fut>(&self, writers: i64, write: F) -> JoinHandle<Vec<(i64, i64)>>
    where
        F: Fn(i64, PgPool, Outbox) -> Fut,
        Fut: Future<Output = Vec<(i64, i64)>> + Send + 'static,
    {
        outbox_testkit::spawn_gathered(
            (0..writers).map(|w| write(w, self.pool.clone(), self.outbox.clone())),
        )
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        outbox_testkit::drop_database_blocking(
            outbox_testkit::database_name(&self.database_url).to_owned(),
        );
    }
}
