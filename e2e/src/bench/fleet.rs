//! Section 10, the relay fleet: `--fleet-databases` outbox databases on this machine's
//! PostgreSQL (made from one migrated template, dropped after), each registered in a fleet
//! database of the section's own under its index as source id, and `--fleet-relays` relay-svc
//! instances in fleet mode publishing them. Light traffic (`--fleet-rate` events/s in all) is
//! written straight into the outboxes with the `outbox` crate, spread at random over the
//! databases, while database 0, the noisy one, starts with a backlog of `--fleet-backlog` rows.
//!
//! It measures what each database costs (the relays' connections to it under traffic, its
//! queries per second while idle), commit → publish of the new rows per database (the noisy one
//! apart from the quiet ones), the rebalance times (the instances starting, one killed, a new one
//! joining, read from the registry), and checks that every row arrived exactly once and in its
//! aggregate's order, across the kill and the join.

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    str::FromStr,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicU64, Ordering},
    },
    time::{Duration, Instant, SystemTime},
};

use anyhow::Context;
use futures::StreamExt;
use lapin::{
    options::{BasicConsumeOptions, ExchangeDeleteOptions, QueueDeleteOptions},
    types::FieldTable,
};
use outbox::{NewEvent, Outbox, wire::Envelope};
use outbox_relay::fleet::registry::{By, NewDatabase, Registry};
use outbox_support::secret::SecretUrl;
use prost::Message;
use rand::{Rng, SeedableRng, rngs::StdRng};
use serde::Serialize;
use sqlx::{
    Connection, PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};
use tokio::sync::Semaphore;

use crate::{
    load::{
        outbox::reserve_seqs,
        progress,
        stack::{amqp, topic_to_queue},
    },
    options::BenchOptions,
    stack::{Binaries, ServiceProc},
    stats::Summary,
};

/// The writers' `application_name`: their connections are not the relays' and are not counted.
const WRITER: &str = "bench-fleet-writer";
/// Aggregate ids are `database * AGGREGATES + k`, so that an event names its database.
const AGGREGATES: i64 = 1_000_000;
/// The noisy database's backlog is spread over this many aggregates (ids below it).
const BACKLOG_AGGREGATES: u64 = 1_000;

/// What the fleet section measured.
#[derive(Debug, Default, Serialize)]
pub struct FleetCost {
    pub databases: usize,
    pub relays: usize,
    pub lease_secs: f64,
    pub noisy_backlog: u64,
    pub offered_per_sec: f64,
    /// The relays' connections to each outbox database under traffic: fewest, mean, most, and
    /// all of them together.
    pub connections_min: i64,
    pub connections_mean: f64,
    pub connections_max: i64,
    pub connections_total: i64,
    /// The relays' connections to the fleet database (the registry).
    pub registry_connections: i64,
    /// Transactions per second in each idle outbox database: mean and most.
    pub idle_secs: f64,
    pub idle_per_db_mean: f64,
    pub idle_per_db_max: f64,
    /// Commit → publish of the rows written to the quiet databases while the fleet was steady.
    pub quiet: Summary,
    /// The worst quiet database's p99 (ms).
    pub quiet_worst_p99_ms: f64,
    /// Commit → publish of the rows written to the noisy database (behind its backlog).
    pub noisy: Summary,
    /// From the first instance's start until every database had a live owner, none above its
    /// share; after one instance was killed; after a new one joined.
    pub start_secs: f64,
    pub kill_secs: f64,
    pub join_secs: f64,
    pub published: u64,
    pub lost: u64,
    /// Deliveries of a row already delivered: at-least-once, a row the killed instance had
    /// published but not yet deleted is published again by its new owner (a consumer's inbox
    /// drops it by (shard, seq)); not a loss of exactly-once processing.
    pub duplicated: u64,
    pub misordered: u64,
}

/// A written row: its aggregate, when its commit returned, and whether the fleet was steady.
type Committed = Arc<Mutex<HashMap<(u32, u64), (i64, SystemTime, bool)>>>;
/// An arrived event: its database, aggregate, seq and arrival time, in arrival order.
type Arrived = Arc<Mutex<Vec<(u32, i64, u64, SystemTime)>>>;

/// Drops the section's databases when it ends, also when it fails half-way.
struct Databases(Vec<String>);

impl Drop for Databases {
    fn drop(&mut self) {
        progress(format!(
            "10. the fleet: dropping {} databases",
            self.0.len()
        ));
        for db in self.0.drain(..) {
            outbox_testkit::drop_database_blocking(db);
        }
    }
}

/// Runs the section (see the module's doc).
pub(super) async fn fleet(opts: &BenchOptions) -> anyhow::Result<FleetCost> {
    let n = opts.fleet_databases;
    anyhow::ensure!(
        opts.fleet_relays >= 2,
        "--fleet-relays must be 2 or more: one is killed while the others take over"
    );
    let tag = outbox_testkit::unique("bench_fleet");
    let server = outbox_testkit::pg_server_url();
    let mut dbs = Databases(Vec::new());
    // Before anything is made: a missing binary fails at once, not after 200 databases.
    let bin = Binaries::locate()?.path("relay-svc")?;
    progress(format!("10. the fleet: creating {n} outbox databases"));
    let template = format!("{tag}_template");
    crate::fleet::create_database(&template).await?;
    dbs.0.push(template.clone());
    let outbox = Outbox::new("outbox")?;
    {
        let pool = PgPool::connect(&format!("{server}/{template}")).await?;
        outbox.table().migrator().run(&pool).await?;
        pool.close().await;
    }
    let names: Vec<String> = (0..n).map(|i| format!("{tag}_{i}")).collect();
    let admin = PgPool::connect(&format!("{server}/postgres")).await?;
    for name in &names {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "create database \"{name}\" template \"{template}\""
        )))
        .execute(&admin)
        .await
        .with_context(|| format!("creating {name}"))?;
        dbs.0.push(name.clone());
    }
    let urls: Vec<String> = names.iter().map(|d| format!("{server}/{d}")).collect();
    let fleet_db = format!("{tag}_fleet");
    let (fleet_url, registry) = crate::fleet::fleet_database(&fleet_db).await?;
    dbs.0.push(fleet_db.clone());

    if opts.fleet_backlog > 0 {
        progress(format!(
            "10. the fleet: {} rows of backlog in the noisy database",
            opts.fleet_backlog
        ));
        let pool = PgPool::connect(&urls[0]).await?;
        fill_backlog(&pool, opts.fleet_backlog).await?;
        pool.close().await;
    }

    // The broker: an exchange of the section's own, a queue taking every event.
    let exchange = format!("{tag}.events");
    let queue = format!("{tag}.all");
    let conn = amqp().await?;
    let ch = conn.create_channel().await?;
    topic_to_queue(&ch, &exchange, &queue).await?;
    let arrived: Arrived = Arc::default();
    let mut consumer = ch
        .basic_consume(
            queue.as_str().into(),
            "bench-fleet".into(),
            // Counting only: a lost ack must not bring an event back as a duplicate.
            BasicConsumeOptions {
                no_ack: true,
                ..Default::default()
            },
            FieldTable::default(),
        )
        .await?;
    let into = arrived.clone();
    let consuming = tokio::spawn(async move {
        while let Some(Ok(delivery)) = consumer.next().await {
            let now = SystemTime::now();
            if let Ok(e) = Envelope::decode(delivery.data.as_slice()) {
                let db = (e.aggregate_id / AGGREGATES) as u32;
                lock(&into).push((db, e.aggregate_id, e.seq, now));
            }
        }
    });

    let by = By {
        who: "bench".into(),
        reason: "section 10".into(),
    };
    for (i, url) in urls.iter().enumerate() {
        let new = NewDatabase {
            name: format!("db-{i:03}"),
            source_id: i32::try_from(i)?,
            url: SecretUrl::new(url.clone()),
            table: "outbox".into(),
            exchange: exchange.clone(),
        };
        registry.add(&new, &by).await?;
    }

    let mut cost = FleetCost {
        databases: n,
        relays: opts.fleet_relays,
        lease_secs: opts.fleet_lease_secs as f64,
        noisy_backlog: opts.fleet_backlog,
        offered_per_sec: opts.fleet_rate,
        ..Default::default()
    };
    let log_dir = std::env::temp_dir().join(&tag);
    std::fs::create_dir_all(&log_dir)?;
    let relay = |i: usize| {
        let id = format!("relay-svc-{i}");
        let env = vec![
            ("FLEET_DATABASE_URL".to_owned(), fleet_url.clone()),
            ("FLEET_INSTANCE_ID".to_owned(), id.clone()),
            (
                "FLEET_LEASE".to_owned(),
                format!("{}s", opts.fleet_lease_secs),
            ),
            ("AMQP_URL".to_owned(), outbox_testkit::amqp_url()),
            ("AMQP_EXCHANGE".to_owned(), exchange.clone()),
            ("RUST_LOG".to_owned(), "warn".to_owned()),
            ("NO_COLOR".to_owned(), "1".to_owned()),
        ];
        ServiceProc::new(id, bin.clone(), env, &log_dir)
    };
    progress(format!(
        "10. the fleet: starting {} relay-svc instances in fleet mode",
        opts.fleet_relays
    ));
    let since = Instant::now();
    let mut relays = Vec::new();
    for i in 1..=opts.fleet_relays {
        let mut r = relay(i)?;
        r.start().await?;
        relays.push(r);
    }
    cost.start_secs = settle(&registry, &relays, since).await?;

    // Light traffic over every database, the noisy one included.
    let committed: Committed = Arc::default();
    let steady = Arc::new(AtomicBool::new(true));
    let stop = Arc::new(AtomicBool::new(false));
    let failed = Arc::new(AtomicU64::new(0));
    let targets: Vec<PgConnectOptions> = urls
        .iter()
        .map(|u| PgConnectOptions::from_str(u).map(|o| o.application_name(WRITER)))
        .collect::<Result<_, _>>()?;
    let writer = tokio::spawn(write_load(
        Arc::new(targets),
        opts.fleet_rate,
        committed.clone(),
        steady.clone(),
        stop.clone(),
        failed.clone(),
    ));
    progress(format!(
        "10. the fleet: {} events/s over {n} databases for {}s",
        opts.fleet_rate, opts.fleet_secs
    ));
    tokio::time::sleep(Duration::from_secs_f64(opts.fleet_secs / 2.0)).await;
    let per_db = connections(&admin, &names).await?;
    // Less the section's own registry pool's.
    cost.registry_connections = connections(&admin, std::slice::from_ref(&fleet_db))
        .await?
        .first()
        .copied()
        .unwrap_or(0)
        - i64::from(registry.pool().size());
    cost.connections_min = per_db.iter().copied().min().unwrap_or(0);
    cost.connections_max = per_db.iter().copied().max().unwrap_or(0);
    cost.connections_total = per_db.iter().sum();
    cost.connections_mean = cost.connections_total as f64 / n.max(1) as f64;
    tokio::time::sleep(Duration::from_secs_f64(opts.fleet_secs / 2.0)).await;

    // One instance killed, then a new one joining, under the same traffic.
    steady.store(false, Ordering::Relaxed);
    progress("10. the fleet: killing an instance");
    relays[0].kill9().await;
    relays.remove(0);
    cost.kill_secs = settle(&registry, &relays, Instant::now()).await?;
    progress("10. the fleet: a new instance joins");
    let since = Instant::now();
    let mut joined = relay(opts.fleet_relays + 1)?;
    joined.start().await?;
    relays.push(joined);
    cost.join_secs = settle(&registry, &relays, since).await?;
    stop.store(true, Ordering::Relaxed);
    writer.await.context("the writer")?;

    // Everything written must arrive: the backlog and every committed row.
    let mut expected: BTreeSet<(u32, u64)> = lock(&committed).keys().copied().collect();
    expected.extend((1..=opts.fleet_backlog).map(|seq| (0, seq)));
    let deadline = Instant::now() + Duration::from_secs(1800);
    let mut last_report = Instant::now();
    loop {
        let seen: BTreeSet<(u32, u64)> = lock(&arrived).iter().map(|a| (a.0, a.2)).collect();
        if expected.is_subset(&seen) || Instant::now() > deadline {
            break;
        }
        if last_report.elapsed() > Duration::from_secs(10) {
            last_report = Instant::now();
            progress(format!(
                "10. the fleet: {} of {} events arrived",
                seen.len(),
                expected.len()
            ));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    progress(format!("10. the fleet: idle for {}s", opts.idle_secs));
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = transactions(&admin, &names).await?;
    tokio::time::sleep(Duration::from_secs_f64(opts.idle_secs)).await;
    // Statistics are flushed by each backend at most once a second: wait for the last flush.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let after = transactions(&admin, &names).await?;
    let rates: Vec<f64> = names
        .iter()
        .map(|d| {
            (after.get(d).copied().unwrap_or(0) - before.get(d).copied().unwrap_or(0)) as f64
                / opts.idle_secs
        })
        .collect();
    cost.idle_secs = opts.idle_secs;
    cost.idle_per_db_mean = rates.iter().sum::<f64>() / n.max(1) as f64;
    cost.idle_per_db_max = rates.iter().copied().fold(0.0, f64::max);

    for r in &mut relays {
        r.terminate(Duration::from_secs(10)).await;
    }
    consuming.abort();
    let _ = ch
        .queue_delete(queue.as_str().into(), QueueDeleteOptions::default())
        .await;
    let _ = ch
        .exchange_delete(exchange.as_str().into(), ExchangeDeleteOptions::default())
        .await;
    let _ = conn.close(200, "bye".into()).await;
    admin.close().await;
    registry.pool().close().await;

    let committed = Arc::try_unwrap(committed)
        .map_err(|_| anyhow::anyhow!("the writer still holds its rows"))?
        .into_inner()
        .map_err(|_| anyhow::anyhow!("poisoned"))?;
    let arrived = std::mem::take(&mut *lock(&arrived));
    check(&mut cost, &expected, &committed, &arrived);
    anyhow::ensure!(
        failed.load(Ordering::Relaxed) == 0,
        "{} writes failed",
        failed.load(Ordering::Relaxed)
    );
    drop(dbs);
    Ok(cost)
}

/// `rows` rows in the outbox in one transaction, over [`BACKLOG_AGGREGATES`] aggregates (ids
/// below it: database 0's), each aggregate's rows chained, as `crate::load::outbox::fill_outbox`
/// writes orders-svc's outbox (whose `aggregate_type` has a default; this outbox's has none).
/// The seqs are reserved after the transaction took its xid, the order the relay's read floor
/// relies on.
async fn fill_backlog(pool: &PgPool, rows: u64) -> anyhow::Result<()> {
    let rows = i64::try_from(rows)?;
    let mut tx = pool.begin().await?;
    let last = reserve_seqs(&mut tx, rows).await?;
    sqlx::query(
        "insert into outbox (seq, aggregate_type, aggregate_id, event_type, routing_key,
                             content_type, prev_seq, payload)
         overriding system value
         select $3 + g, 'order', g % $2, 'OrderStatusChanged', 'order.status_changed',
                'application/json', case when g >= $2 then $3 + g - $2 end, '\\x7b7d'::bytea
           from generate_series(0, $1 - 1) g",
    )
    .bind(rows)
    .bind(BACKLOG_AGGREGATES as i64)
    .bind(last - rows + 1)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Waits until every database has an owner among `relays`, none above its share; the seconds
/// that took from `since`.
async fn settle(
    registry: &Registry,
    relays: &[ServiceProc],
    since: Instant,
) -> anyhow::Result<f64> {
    let live: BTreeSet<String> = relays.iter().map(|r| r.name.clone()).collect();
    let mut why = String::new();
    while since.elapsed() < crate::chaos::REBALANCE_WAIT {
        match crate::fleet::unsettled(registry, &live).await? {
            None => return Ok(since.elapsed().as_secs_f64()),
            Some(w) => why = w,
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    anyhow::bail!(
        "the fleet had not settled after {:?}: {why}",
        crate::chaos::REBALANCE_WAIT
    )
}

/// Open-loop writes at `rate`/s, each into a database picked at random, on a connection of its
/// own (a pool per database would hold as many connections as the relays do): append, commit,
/// note the commit's time, notify.
async fn write_load(
    targets: Arc<Vec<PgConnectOptions>>,
    rate: f64,
    committed: Committed,
    steady: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    failed: Arc<AtomicU64>,
) {
    let outbox = Arc::new(Outbox::new("outbox").expect("a valid table name"));
    // As an application writes: a pooled session per database, kept between its writes (a new
    // session per event would have PostgreSQL spend most of the machine starting and ending
    // backends, which is the writer's cost, not the outbox's).
    let pools: Arc<Vec<PgPool>> = Arc::new(
        targets
            .iter()
            .map(|t| {
                PgPoolOptions::new()
                    .max_connections(1)
                    .min_connections(0)
                    .idle_timeout(Some(Duration::from_secs(30)))
                    .connect_lazy_with(t.clone())
            })
            .collect(),
    );
    let at_once = Arc::new(Semaphore::new(16));
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate.max(0.1)));
    let mut rng = StdRng::seed_from_u64(rand::rng().random());
    let mut tasks = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        tick.tick().await;
        let db = rng.random_range(0..targets.len());
        let aggregate =
            db as i64 * AGGREGATES + BACKLOG_AGGREGATES as i64 + rng.random_range(0..10);
        let Ok(permit) = at_once.clone().acquire_owned().await else {
            break;
        };
        let (pools, outbox, committed, steady, failed) = (
            pools.clone(),
            outbox.clone(),
            committed.clone(),
            steady.clone(),
            failed.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let _permit = permit;
            let written = async {
                let mut conn = pools[db].acquire().await?;
                let mut tx = conn.begin().await?;
                let event = NewEvent::new(
                    "order",
                    aggregate,
                    "OrderStatusChanged",
                    "order.status_changed",
                    b"{}".to_vec(),
                )
                .header(outbox::wire::HEADER_SHARD, db.to_string());
                let appended = outbox.append(&mut tx, event).await?;
                tx.commit().await?;
                let at = SystemTime::now();
                lock(&committed).insert(
                    (db as u32, appended.seq as u64),
                    (aggregate, at, steady.load(Ordering::Relaxed)),
                );
                outbox.notify(&mut *conn).await?;
                anyhow::Ok(())
            };
            if let Err(e) = written.await {
                failed.fetch_add(1, Ordering::Relaxed);
                progress(format!("10. the fleet: a write failed: {e:#}"));
            }
        }));
    }
    futures::future::join_all(tasks).await;
    for pool in pools.iter() {
        pool.close().await;
    }
}

/// The relays' connections to each of `dbs` (the writers' not counted), in the order given.
async fn connections(admin: &PgPool, dbs: &[String]) -> anyhow::Result<Vec<i64>> {
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "select datname::text, count(*) from pg_stat_activity
          where datname = any($1) and application_name <> $2 group by datname",
    )
    .bind(dbs)
    .bind(WRITER)
    .fetch_all(admin)
    .await?;
    let by_db: HashMap<String, i64> = rows.into_iter().collect();
    Ok(dbs
        .iter()
        .map(|d| by_db.get(d).copied().unwrap_or(0))
        .collect())
}

/// Transactions (each autocommit query is one) so far in each of `dbs`.
async fn transactions(admin: &PgPool, dbs: &[String]) -> anyhow::Result<HashMap<String, i64>> {
    sqlx::query("select pg_stat_clear_snapshot()")
        .execute(admin)
        .await?;
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "select datname::text, (xact_commit + xact_rollback)::bigint from pg_stat_database
          where datname = any($1)",
    )
    .bind(dbs)
    .fetch_all(admin)
    .await?;
    Ok(rows.into_iter().collect())
}

/// Latencies, and what was lost, doubled or misordered.
fn check(
    cost: &mut FleetCost,
    expected: &BTreeSet<(u32, u64)>,
    committed: &HashMap<(u32, u64), (i64, SystemTime, bool)>,
    arrived: &[(u32, i64, u64, SystemTime)],
) {
    let mut first: HashMap<(u32, u64), SystemTime> = HashMap::new();
    let mut last_of: HashMap<(u32, i64), u64> = HashMap::new();
    for &(db, aggregate, seq, at) in arrived {
        if first.insert((db, seq), at).is_some() {
            cost.duplicated += 1;
            continue;
        }
        // An aggregate's events arrive in seq order (its chain's order).
        let last = last_of.entry((db, aggregate)).or_insert(0);
        if seq < *last {
            cost.misordered += 1;
        }
        *last = (*last).max(seq);
    }
    cost.published = first.len() as u64;
    cost.lost = expected.iter().filter(|k| !first.contains_key(k)).count() as u64;
    let mut quiet = Vec::new();
    let mut noisy = Vec::new();
    let mut per_db: BTreeMap<u32, Vec<Duration>> = BTreeMap::new();
    for (key, (_, at, steady)) in committed {
        let Some(arrival) = first.get(key) else {
            continue;
        };
        let latency = arrival.duration_since(*at).unwrap_or_default();
        if key.0 == 0 {
            noisy.push(latency);
        } else if *steady {
            quiet.push(latency);
            per_db.entry(key.0).or_default().push(latency);
        }
    }
    let window = Duration::ZERO;
    cost.quiet = Summary::new(quiet.len() as u64, window, quiet);
    cost.noisy = Summary::new(noisy.len() as u64, window, noisy);
    cost.quiet_worst_p99_ms = per_db
        .into_values()
        .map(|l| Summary::new(l.len() as u64, window, l).p99_ms)
        .fold(0.0, f64::max);
}

impl FleetCost {
    /// The section as the bench's table prints it, each figure beside its target (issue 41's).
    pub fn table(&self) -> String {
        let lease = self.lease_secs;
        let row = |what: &str, s: &Summary| {
            format!(
                "     {what:<22} {:>8.1} {:>8.1} {:>8.1} {:>8}\n",
                s.p50_ms, s.p99_ms, s.max_ms, s.ops
            )
        };
        format!(
            "\n10. the relay fleet: {} databases, {} relay-svc instances (lease {lease:.0}s), \
             {:.0} events/s spread over them, the noisy one with {} rows of backlog\n   \
             connections per database  min {}  mean {:.2}  max {}  (all {}; to the registry {})   \
             target: O(databases)\n   \
             idle queries/s per database  mean {:.3}  max {:.3}  over {:.1}s   target: <= 0.2\n   \
             commit->publish ms           p50      p99      max   events\n{}{}   \
             (worst quiet database's p99: {:.1} ms)   target: quiet p50 <= 2, p99 <= 50\n   \
             rebalance s   start {:.1}   kill {:.1}   join {:.1}   target: <= 2 leases ({:.0}s)\n   \
             lost / misordered   {} / {}   of {} published   target: 0 / 0 \
             (republished after the kill, at-least-once: {})\n",
            self.databases,
            self.relays,
            self.offered_per_sec,
            self.noisy_backlog,
            self.connections_min,
            self.connections_mean,
            self.connections_max,
            self.connections_total,
            self.registry_connections,
            self.idle_per_db_mean,
            self.idle_per_db_max,
            self.idle_secs,
            row("quiet databases", &self.quiet),
            row("noisy database", &self.noisy),
            self.quiet_worst_p99_ms,
            self.start_secs,
            self.kill_secs,
            self.join_secs,
            2.0 * lease,
            self.lost,
            self.misordered,
            self.published,
            self.duplicated,
        )
    }
}
