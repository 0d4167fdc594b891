//! The read floor: reads and backlog figures cost O(batch) behind a pinned xmin horizon, a
//! writer left open holds back only the floor (and is named), and a database restored from a
//! dump is relayed without a skip or a stall. Real PostgreSQL and RabbitMQ; costs are counted
//! with `EXPLAIN (ANALYZE, BUFFERS)` of the statements the relay runs, never timed.

use std::{collections::HashSet, sync::Arc, time::Duration};

use futures::StreamExt;
use lapin::Connection;
use outbox::{NewEvent, Outbox, wire::Envelope};
use outbox_relay::{Relay, Settings, Status, db::Queries};
use prost::Message;
use sqlx::{Connection as _, PgConnection, PgPool};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::support::db::Db;

/// A database with the crate's outbox, a queue bound to everything its relay publishes, and the
/// seqs that reached the queue.
struct Setup {
    /// Dropped with the setup.
    _db: Db,
    database_url: String,
    pool: PgPool,
    outbox: Outbox,
    exchange: String,
    _conn: Connection,
    /// The exchange, removed with the setup.
    _names: outbox_testkit::Made,
    deliveries: lapin::Consumer,
    received: Vec<u64>,
}

impl Setup {
    async fn new(database_url: String) -> Self {
        let db = Db::at(database_url.clone(), "outbox").await;
        let (pool, outbox) = (db.pool.clone(), db.outbox.clone());
        let (exchange, conn, deliveries, names) =
            crate::support::broker::consume_all("outbox_floor", "#").await;
        Self {
            _db: db,
            database_url,
            pool,
            outbox,
            exchange,
            _conn: conn,
            _names: names,
            deliveries,
            received: Vec::new(),
        }
    }

    /// `aggregates` × `per_aggregate` events, committed in transactions of `per_tx` events.
    async fn append(
        &self,
        first_aggregate: i64,
        aggregates: i64,
        per_aggregate: usize,
    ) -> Vec<i64> {
        let mut seqs = Vec::new();
        for round in 0..per_aggregate {
            let events: Vec<NewEvent> = (first_aggregate..first_aggregate + aggregates)
                .map(|id| {
                    NewEvent::new(
                        "thing",
                        id,
                        "changed",
                        "thing.changed",
                        round.to_string().into_bytes(),
                    )
                })
                .collect();
            for chunk in events.chunks(2_000) {
                let mut tx = self.pool.begin().await.expect("begin");
                let appended = self
                    .outbox
                    .append_all(&mut tx, chunk)
                    .await
                    .expect("append");
                tx.commit().await.expect("commit");
                seqs.extend(appended.iter().map(|a| a.seq));
            }
        }
        seqs
    }

    fn start_relay(&self) -> (Arc<Status>, CancellationToken, JoinHandle<()>) {
        let mut settings = Settings::new(outbox_testkit::amqp_url(), self.exchange.clone());
        settings.table = self.outbox.table().clone();
        settings.batch_size = 500;
        // One term for the whole test: on a machine busy enough to miss a heartbeat, a new term
        // re-reads from the head (republishing what was confirmed but not yet deleted, as
        // at-least-once allows) and starts the floor afresh, which is not what these tests count.
        settings.leader_lease = Duration::from_secs(300);
        let status = Arc::new(Status::default());
        let shutdown = CancellationToken::new();
        let relay = Relay::new(
            settings,
            self.pool.clone(),
            status.clone(),
            shutdown.clone(),
        );
        (status, shutdown, tokio::spawn(relay.run()))
    }

    /// Waits until `n` more events arrived.
    async fn receive(&mut self, n: usize) {
        let want = self.received.len() + n;
        while self.received.len() < want {
            let d = tokio::time::timeout(Duration::from_secs(60), self.deliveries.next())
                .await
                .unwrap_or_else(|_| panic!("{} of {want} events arrived", self.received.len()))
                .expect("stream open")
                .expect("delivery");
            let envelope = Envelope::decode(d.data.as_slice()).expect("an envelope");
            self.received.push(envelope.seq);
        }
    }

    /// Waits until the relay counted `n` events published (its confirms may come after the
    /// deliveries), then asserts exactly `n`.
    async fn published(&self, status: &Status, n: u64) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while status.snapshot().published_total < n && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(status.snapshot().published_total, n);
    }

    /// The floor the relay persisted for the figures.
    async fn persisted_floor(&self) -> i64 {
        sqlx::query_scalar("select last_value from outbox_read_floor")
            .fetch_one(&self.pool)
            .await
            .expect("floor")
    }

    /// Waits until the persisted floor passed `seq`.
    async fn floor_passes(&self, seq: i64) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let floor = self.persisted_floor().await;
            if floor > seq {
                return;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the floor stays at {floor}, not past {seq}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Shared buffers an `EXPLAIN (ANALYZE, BUFFERS)` of `sql` touched, and the plan.
    async fn buffers(&self, sql: &str, floor: Option<i64>) -> (i64, String) {
        let explain = format!("explain (analyze, buffers, format json) {sql}");
        let empty: Vec<i64> = Vec::new();
        let query = sqlx::query_scalar::<_, serde_json::Value>(sqlx::AssertSqlSafe(explain));
        let query = match floor {
            Some(floor) => query
                .bind(500_i64)
                .bind(&empty)
                .bind(&empty)
                .bind(&empty)
                .bind(floor),
            None => query,
        };
        // As the relay runs it: the figures in a transaction that plans index walks only.
        let mut tx = self.pool.begin().await.expect("begin");
        if floor.is_none() {
            outbox_relay::db::index_walks_only(&mut tx)
                .await
                .expect("set");
        }
        let plan = query.fetch_one(&mut *tx).await.expect("explain");
        tx.commit().await.expect("commit");
        let top = &plan[0]["Plan"];
        let blocks = |k: &str| top[k].as_i64().unwrap_or(0);
        (
            blocks("Shared Hit Blocks") + blocks("Shared Read Blocks"),
            serde_json::to_string_pretty(&plan).unwrap_or_default(),
        )
    }
}

/// A REPEATABLE READ session left open: it pins the xmin horizon, so nothing deleted after its
/// snapshot can be vacuumed (a `pg_dump`, a long report).
async fn pin_horizon(database_url: &str) -> PgConnection {
    let mut pin = PgConnection::connect(database_url).await.expect("pin");
    sqlx::query("begin isolation level repeatable read")
        .execute(&mut pin)
        .await
        .expect("begin");
    sqlx::query("select count(*) from outbox")
        .execute(&mut pin)
        .await
        .expect("snapshot");
    pin
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_and_figures_cost_a_batch_not_the_dead_rows_behind_a_pinned_horizon() {
    let mut s = Setup::new(outbox_testkit::fresh_database_url("outbox_floor")).await;
    let mut pin = pin_horizon(&s.database_url).await;
    let seqs = s.append(1, 2_000, 10).await;
    let (status, shutdown, relay) = s.start_relay();
    s.receive(seqs.len()).await;
    let last = *seqs.iter().max().expect("appended");
    s.floor_passes(last).await;

    // 20,000 rows relayed and deleted, none vacuumable: the head of the table is all dead rows.
    let queries = Queries::new(s.outbox.table());
    let floor = s.persisted_floor().await;
    let (from_floor, plan) = s.buffers(queries.fetch_batch_sql(), Some(floor)).await;
    let (from_head, _) = s.buffers(queries.fetch_batch_sql(), Some(1)).await;
    println!("relay read: {from_floor} buffers from the floor, {from_head} from the head");
    assert!(
        from_head > 20 * from_floor.max(1),
        "the dead rows are not there: {from_head} buffers from the head\n{plan}"
    );
    assert!(
        from_floor <= 20,
        "the relay's read walks past relayed rows: {from_floor} buffers\n{plan}"
    );
    let (figures, plan) = s.buffers(queries.backlog_sql(), None).await;
    println!("backlog figures: {figures} buffers");
    assert!(
        figures <= 20,
        "the backlog figures walk relayed rows: {figures}\n{plan}"
    );
    // Not compiled either: the seq scan penalty must not buy a JIT that costs more than the walk.
    assert!(
        !plan.contains("\"JIT\""),
        "the backlog figures' plan is JIT-compiled:\n{plan}"
    );

    // New rows are still read (and counted) from the floor.
    let more = s.append(5_000, 10, 1).await;
    s.receive(more.len()).await;
    // The broker may deliver before the relay has taken the last confirm.
    s.published(&status, (seqs.len() + more.len()) as u64).await;
    let unique: HashSet<u64> = s.received.iter().copied().collect();
    assert_eq!(
        unique.len(),
        s.received.len(),
        "an event was published twice"
    );

    sqlx::query("rollback")
        .execute(&mut pin)
        .await
        .expect("unpin");
    shutdown.cancel();
    relay.await.expect("relay stops");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_left_open_holds_back_only_the_floor_and_is_named() {
    let mut s = Setup::new(outbox_testkit::fresh_database_url("outbox_floor")).await;
    let (status, shutdown, relay) = s.start_relay();
    let early = s.append(1, 5, 1).await;
    s.receive(early.len()).await;

    // A writer appends and stays open: its seq is lower than everything committed after it.
    let mut writer = s.pool.begin().await.expect("begin");
    let open = s
        .outbox
        .append(
            &mut writer,
            NewEvent::new("thing", 99, "changed", "thing.changed", b"late".to_vec()),
        )
        .await
        .expect("append")
        .seq;
    let later = s.append(100, 50, 4).await;
    s.receive(later.len()).await;
    assert!(later.iter().all(|seq| *seq > open));

    // Everything committed was published; the floor waits at the open writer's seq, and the
    // relay names the writer.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while status.snapshot().oldest_writer_age_ms == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the open writer is never named"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        s.persisted_floor().await <= open,
        "the floor passed a running writer's seq"
    );

    // It commits late: its event is published (not skipped), and the floor moves on.
    writer.commit().await.expect("commit");
    s.receive(1).await;
    assert_eq!(*s.received.last().expect("received"), open as u64);
    s.floor_passes(*later.iter().max().expect("later")).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while status.snapshot().oldest_writer_age_ms != 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the writer gauge stays up"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(s.received.len(), early.len() + later.len() + 1);
    shutdown.cancel();
    relay.await.expect("relay stops");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_restored_from_a_dump_is_relayed_without_a_skip_or_a_stall() {
    // The source: unsent rows, some already behind a floor a relay reached there.
    let source = Setup::new(outbox_testkit::fresh_database_url("outbox_floor")).await;
    let unsent = source.append(1, 100, 3).await;

    // `pg_dump | psql` into a fresh database (new transaction ids for its writers).
    let target_url = outbox_testkit::fresh_database_url("outbox_floor");
    let target_db = target_url.rsplit('/').next().expect("db name").to_owned();
    let mut admin = PgConnection::connect(&outbox_testkit::pg_server_url())
        .await
        .expect("server");
    sqlx::query(sqlx::AssertSqlSafe(format!("create database {target_db}")))
        .execute(&mut admin)
        .await
        .expect("create");
    let pipeline = format!(
        "set -o pipefail; pg_dump --dbname='{}' | psql -q -v ON_ERROR_STOP=1 --dbname='{target_url}'",
        source.database_url
    );
    let out = std::process::Command::new("bash")
        .args(["-c", &pipeline])
        .output()
        .expect("pg_dump | psql");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let mut s = Setup::new(target_url).await;
    let (status, shutdown, relay) = s.start_relay();
    s.receive(unsent.len()).await;
    let after = s.append(1_000, 20, 2).await;
    assert!(
        after
            .iter()
            .all(|seq| *seq > *unsent.iter().max().expect("unsent"))
    );
    s.receive(after.len()).await;
    let want: HashSet<u64> = unsent.iter().chain(&after).map(|s| *s as u64).collect();
    let got: HashSet<u64> = s.received.iter().copied().collect();
    assert_eq!(got, want);
    assert_eq!(s.received.len(), want.len(), "an event was published twice");
    // The broker may deliver before the relay has taken the last confirm.
    s.published(&status, want.len() as u64).await;
    s.floor_passes(*after.iter().max().expect("after")).await;
    shutdown.cancel();
    relay.await.expect("relay stops");
}
