//! The crash-consistency checker: drives concurrent upserts through the whole stack while
//! killing services, restarting the broker and cutting database connections, then checks every
//! order's mails against a ledger built from the Upsert responses. With `--cluster` it runs on
//! the 3-node RabbitMQ cluster and kills, restarts and partitions its nodes instead of
//! restarting the machine's broker. With `--shards N` orders-svc writes to N order databases and
//! every relay relays all of them: the same seqs then reach mail-svc from several shards. With
//! `--fleet` the relays are a fleet over those shards instead (see `chaos::fleet`): instances killed
//! and frozen, databases added and drained, and the time each change took to settle reported.

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicI32, AtomicI64, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use anyhow::Context;
use outbox_proto::orders::v1::{OrderStatus, STATUSES, UpsertOrderRequest};
use rand::{Rng, SeedableRng, rngs::StdRng};
use tonic::Code;

use crate::{
    cluster::{self, Cluster},
    stack::{Stack, StackConfig, db_name},
};

mod check;
mod fleet;
mod report;

pub use fleet::REBALANCE_WAIT;
pub use report::ChaosReport;

/// How hard to push.
#[derive(Debug, Clone, clap::Args)]
pub struct ChaosOptions {
    /// How long to drive load and inject faults, in seconds.
    #[arg(long, default_value_t = 120)]
    pub duration_secs: u64,
    /// Concurrent gRPC writers.
    #[arg(long, default_value_t = 8)]
    pub concurrency: usize,
    /// Orders live at any moment (writers pick among them at random; a finished order is
    /// replaced by a new one).
    #[arg(long, default_value_t = 200)]
    pub orders: i64,
    /// Mean seconds between two faults (0 disables faults).
    #[arg(long, default_value_t = 4.0)]
    pub fault_every_secs: f64,
    /// Keep driving load past `--duration-secs` until at least this many faults have been
    /// injected: on a slow machine each fault (a node restart, a service coming back) takes
    /// longer, and a run must still cover every kind of fault it promises.
    #[arg(long, default_value_t = 0)]
    pub min_faults: u32,
    /// Restart the stack's RabbitMQ application (`rabbitmqctl stop_app`/`start_app`) as one of
    /// the faults. For the `chaos` binary that is the machine's broker, and so every user of it;
    /// the suite's runs restart a node of their own. Not in `--cluster` mode, which never
    /// touches the machine's broker.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub broker_restarts: bool,
    /// Run on the 3-node RabbitMQ cluster of `deploy/rabbit-cluster.sh` (brought up for the run
    /// and down after it) instead of the machine's broker, which is then never touched: the
    /// relays and mail services get the nodes as `AMQP_URL` lists with different first nodes,
    /// and every second fault is a node fault: in turn the mail queue's leader killed, a node
    /// partitioned away for 2 to 6 s, any node killed; a killed node is restarted after up to 4 s.
    #[arg(long)]
    pub cluster: bool,
    /// relay-svc instances.
    #[arg(long, default_value_t = 2)]
    pub relays: usize,
    /// mail-svc instances.
    #[arg(long, default_value_t = 2)]
    pub mails: usize,
    /// Order databases: more than one runs orders-svc on that many shards (`SHARDS`) and every
    /// relay on all of them (`RELAY_SHARDS`, or the fleet's registry with `--fleet`); the check
    /// then also requires each order's mails to come from its own shard.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=32))]
    pub shards: u16,
    /// Run the relays as a fleet (`FLEET_DATABASE_URL`) over the order databases, each
    /// registered under its index as source id, a quarter of them only during the run. Most
    /// faults are then the fleet's, in turn: a relay killed (SIGKILL) and started again, a
    /// database added, a relay frozen (SIGSTOP) for longer than a lease and woken, a database
    /// drained, removed and added back; the summary lists how long each change took until every
    /// database was owned by a live instance, none above its share. E.g. `--fleet --shards 20
    /// --relays 3`.
    #[arg(long)]
    pub fleet: bool,
    /// The fleet's lease (`FLEET_LEASE`), seconds: short, so that a run sees many takeovers.
    #[arg(long, default_value_t = 3)]
    pub fleet_lease_secs: u64,
    /// How long to wait for the backlog to drain after the load stops, in seconds.
    #[arg(long, default_value_t = 180)]
    pub drain_timeout_secs: u64,
    /// Random seed (default: from the clock), printed so a run can be repeated.
    #[arg(long)]
    pub seed: Option<u64>,
}

impl ChaosOptions {
    /// The suite's short runs: 30 s of 6 writers over 100 live orders, a fault every ~3 s (about
    /// 10; each test also sets the least it needs, and the run goes on until it injected them),
    /// 2 relays and 2 mail services on the stack's broker (restarted as a fault), one shard. The
    /// writers take what CPU there is, so the length is the suite's CPU: the faults are what a
    /// short run is for. The long runs are the `chaos` binary's (docs/ARCHITECTURE.md, "Proving
    /// it").
    pub fn short() -> Self {
        Self {
            duration_secs: 30,
            concurrency: 6,
            orders: 100,
            fault_every_secs: 3.0,
            min_faults: 0,
            broker_restarts: true,
            cluster: false,
            relays: 2,
            mails: 2,
            shards: 1,
            fleet: false,
            fleet_lease_secs: 3,
            drain_timeout_secs: 180,
            seed: None,
        }
    }
}

/// A short run of the suite: `options` on the stack `cfg` describes, its report printed. The run
/// goes on until it has injected at least `min_faults` faults, however slow the machine; panics
/// unless it produced load (over 100 events) and found nothing lost, doubled, reordered or
/// invented.
pub async fn assert_clean_run(
    options: &ChaosOptions,
    cfg: StackConfig,
    min_faults: u32,
) -> ChaosReport {
    let options = ChaosOptions {
        min_faults: options.min_faults.max(min_faults),
        ..options.clone()
    };
    let report = run(&options, cfg).await.expect("chaos run completes");
    println!("{report}");
    assert!(report.events > 100, "the run produced load: {report}");
    assert!(
        report.faults() >= min_faults,
        "the run injected faults: {report}"
    );
    assert!(report.is_clean(), "{report}");
    // Generous (the aim is 30 s on a loaded 2-core machine): mail must never stop for good
    // after one node's fault.
    assert!(
        report.slowest_recovery() < RECOVERY_WAIT,
        "mail went out again after every node fault: {report}"
    );
    assert!(
        report.slowest_rebalance() < fleet::REBALANCE_WAIT,
        "the fleet settled after every change: {report}"
    );
    report
}

/// How long the cluster mode waits for mail to flow again after a node fault before it counts
/// the fault as unrecovered (and [`assert_clean_run`] fails).
pub const RECOVERY_WAIT: Duration = Duration::from_secs(120);

/// One order's history as the writers saw it.
#[derive(Debug, Default)]
struct OrderLedger {
    /// Seqs the service reported, in the order the responses arrived.
    seqs: BTreeSet<u64>,
    /// Calls that failed without a definite answer (the change may or may not have committed).
    ambiguous: u32,
}

type Ledger = Arc<Mutex<BTreeMap<i64, OrderLedger>>>;

/// One of the `--orders` places an order lives in: writers walk its order along the status path
/// (mostly forward, sometimes a cancel, sometimes a random status the rules may reject) and start
/// a new order id there once it reached a final status, so the load keeps producing events.
#[derive(Debug)]
struct Slot {
    /// The current order's id.
    id: AtomicI64,
    /// The current order's status as last reported (0 before it exists).
    status: AtomicI32,
    /// Distance between two order ids of the same slot.
    stride: i64,
}

impl Slot {
    fn new(first_id: i64, stride: i64) -> Self {
        Self {
            id: AtomicI64::new(first_id),
            status: AtomicI32::new(0),
            stride,
        }
    }

    fn next_request(&self, rng: &mut StdRng) -> (i64, OrderStatus) {
        let id = self.id.load(Ordering::Relaxed);
        let current = OrderStatus::try_from(self.status.load(Ordering::Relaxed))
            .unwrap_or(OrderStatus::Unspecified);
        let status = match rng.random_range(0..10) {
            0 => STATUSES[rng.random_range(0..STATUSES.len())],
            1 => OrderStatus::Cancelled,
            _ => match current {
                OrderStatus::Unspecified => OrderStatus::Pending,
                OrderStatus::Pending => OrderStatus::Paid,
                OrderStatus::Paid => OrderStatus::Shipped,
                _ => OrderStatus::Delivered,
            },
        };
        (id, status)
    }

    /// Records the status a response reported; a final status moves the slot to a new order.
    fn observe(&self, id: i64, status: i32) {
        if self.id.load(Ordering::Relaxed) != id {
            return;
        }
        self.status.store(status, Ordering::Relaxed);
        let finished =
            status == OrderStatus::Delivered as i32 || status == OrderStatus::Cancelled as i32;
        if finished
            && self
                .id
                .compare_exchange(id, id + self.stride, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            self.status.store(0, Ordering::Relaxed);
        }
    }
}

/// Runs the checker against a freshly started stack (logs under `cfg.log_dir`).
pub async fn run(opts: &ChaosOptions, mut cfg: StackConfig) -> anyhow::Result<ChaosReport> {
    let seed = opts.seed.unwrap_or_else(|| rand::rng().random());
    let mut rng = StdRng::seed_from_u64(seed);
    cfg.relays = opts.relays;
    cfg.mails = opts.mails;
    cfg.shards = usize::from(opts.shards);
    let cluster = if opts.cluster {
        // Spread over the nodes: relay i starts with node i+1, mail-svc i with node i+3 (so
        // with two of each: relays on 1 and 2, mail services on 3 and 1).
        cfg.relay_amqp_urls = (0..3).map(|i| cluster::urls_from(i + 1)).collect();
        cfg.mail_amqp_urls = (0..3)
            .map(|i| cluster::urls_from((i + 2) % 3 + 1))
            .collect();
        Some(Cluster::acquire().await?)
    } else {
        None
    };
    let mut fleet = match opts.fleet {
        true => Some(fleet::FleetRun::prepare(opts, &mut cfg).await?),
        false => None,
    };
    let mut stack = Stack::start(cfg).await?;
    if let Some(fleet) = &mut fleet {
        fleet.register_initial(&stack, &mut rng).await?;
    }
    let mut report = ChaosReport {
        seed,
        shards: usize::from(opts.shards),
        ..Default::default()
    };
    eprintln!(
        "chaos: seed {seed}, {}s, {} writers, {} live orders, a fault every ~{}s; logs in {}",
        opts.duration_secs,
        opts.concurrency,
        opts.orders,
        opts.fault_every_secs,
        stack.log_dir.display()
    );

    let ledger: Ledger = Arc::default();
    let stop = Arc::new(AtomicBool::new(false));
    let upserts = Arc::new(AtomicU64::new(0));
    let rejected = Arc::new(AtomicU64::new(0));
    let slots: Arc<Vec<Slot>> = Arc::new(
        (0..opts.orders)
            .map(|i| Slot::new(i + 1, opts.orders))
            .collect(),
    );
    let mut writers = Vec::new();
    for w in 0..opts.concurrency {
        let client = stack.orders_client().await?;
        let (ledger, stop, upserts, rejected) = (
            ledger.clone(),
            stop.clone(),
            upserts.clone(),
            rejected.clone(),
        );
        let slots = slots.clone();
        let mut rng = StdRng::seed_from_u64(seed ^ (w as u64 + 1));
        writers.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let slot = &slots[rng.random_range(0..slots.len())];
                let (id, status) = slot.next_request(&mut rng);
                let request = UpsertOrderRequest {
                    id,
                    status: status as i32,
                    customer_email: format!("customer{id}@example.com"),
                };
                let result = client.clone().upsert(request).await;
                upserts.fetch_add(1, Ordering::Relaxed);
                let mut ledger = ledger.lock().expect("ledger");
                let entry = ledger.entry(id).or_default();
                match result {
                    Ok(resp) => {
                        let resp = resp.into_inner();
                        if let Some(seq) = resp.event_seq {
                            entry.seqs.insert(seq);
                        }
                        if let Some(order) = resp.order {
                            slot.observe(id, order.status);
                        }
                    }
                    Err(e)
                        if matches!(e.code(), Code::FailedPrecondition | Code::InvalidArgument) =>
                    {
                        rejected.fetch_add(1, Ordering::Relaxed);
                    }
                    // No definite answer: the change may or may not have committed.
                    Err(_) => entry.ambiguous += 1,
                }
            }
        }));
    }

    let started = Instant::now();
    let until = started + Duration::from_secs(opts.duration_secs);
    let mut last_progress = Instant::now();
    // With faults on, the run goes past the duration until it has injected `min_faults`.
    let done = |report: &ChaosReport| Instant::now() >= until && report.faults() >= opts.min_faults;
    if opts.fault_every_secs <= 0.0 {
        tokio::time::sleep(until.saturating_duration_since(Instant::now())).await;
    }
    while opts.fault_every_secs > 0.0 && !done(&report) {
        let pause = Duration::from_secs_f64(rng.random_range(0.5..1.5) * opts.fault_every_secs);
        // Once no fault is owed, the last pause ends with the duration.
        let pause = if report.faults() < opts.min_faults {
            pause
        } else {
            pause.min(until.saturating_duration_since(Instant::now()))
        };
        tokio::time::sleep(pause).await;
        if done(&report) {
            break;
        }
        match &mut fleet {
            Some(fleet) if fleet.owes_fault(&report) => {
                fleet.fault(&mut stack, &mut rng, &mut report).await?;
            }
            _ => {
                let fleet = fleet.is_some();
                inject_fault(
                    &mut stack,
                    cluster.as_ref(),
                    fleet,
                    &mut rng,
                    opts,
                    &mut report,
                )
                .await?;
            }
        }
        if last_progress.elapsed() > Duration::from_secs(10) {
            last_progress = Instant::now();
            eprintln!(
                "chaos: {:>4}s  upserts {}  faults {}",
                started.elapsed().as_secs(),
                upserts.load(Ordering::Relaxed),
                report.faults()
            );
        }
    }
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.await.context("writer task")?;
    }
    heal(&mut stack, cluster.as_ref()).await?;
    if let Some(fleet) = &mut fleet {
        fleet.heal(&mut stack, &mut report).await?;
    }

    let drain_started = Instant::now();
    let ledger = Arc::try_unwrap(ledger)
        .map_err(|_| anyhow::anyhow!("ledger still shared"))?
        .into_inner()
        .map_err(|_| anyhow::anyhow!("ledger poisoned"))?;
    report.upserts = upserts.load(Ordering::Relaxed);
    report.rejected = rejected.load(Ordering::Relaxed);
    report.events = ledger.values().map(|l| l.seqs.len() as u64).sum();
    report.ambiguous = ledger.values().map(|l| l.ambiguous as u64).sum();
    report.orders = ledger.values().filter(|l| !l.seqs.is_empty()).count();
    check::wait_drained(
        &stack,
        report.events,
        Duration::from_secs(opts.drain_timeout_secs),
    )
    .await?;
    report.drain = drain_started.elapsed();
    eprintln!(
        "chaos: drained in {:.1}s; checking every order",
        report.drain.as_secs_f64()
    );
    check::check(&stack, &ledger, &mut report).await?;
    stack.stop().await;
    // Drops the run's databases, now that no service uses them.
    drop(fleet);
    Ok(report)
}

async fn inject_fault(
    stack: &mut Stack,
    cluster: Option<&Cluster>,
    fleet: bool,
    rng: &mut StdRng,
    opts: &ChaosOptions,
    report: &mut ChaosReport,
) -> anyhow::Result<()> {
    // In cluster mode every second fault is a node fault (see `cluster_fault`), so a short run
    // kills the queue leader and partitions a node for sure.
    if let Some(cluster) = cluster
        && report.faults() % 2 == 1
    {
        return cluster_fault(stack, cluster, rng, report).await;
    }
    let kinds = if opts.broker_restarts && cluster.is_none() {
        4
    } else {
        3
    };
    // A fleet's relays are killed by its own faults, which also wait for the takeover.
    let first = if fleet { 1 } else { 0 };
    match rng.random_range(first..kinds) {
        0 => {
            let i = rng.random_range(0..stack.relays.len());
            stack.relays[i].kill9().await;
            report.relay_kills += 1;
            tokio::time::sleep(Duration::from_millis(rng.random_range(0..2000))).await;
            stack.relays[i].start().await?;
        }
        1 => {
            let i = rng.random_range(0..stack.mails.len());
            stack.mails[i].kill9().await;
            report.mail_kills += 1;
            tokio::time::sleep(Duration::from_millis(rng.random_range(0..2000))).await;
            stack.mails[i].start().await?;
        }
        2 => {
            terminate_db_connections(stack).await?;
            report.db_terminations += 1;
        }
        _ => {
            stack.broker.ctl("stop_app").await?;
            report.broker_restarts += 1;
            tokio::time::sleep(Duration::from_millis(rng.random_range(500..4000))).await;
            stack.broker.ctl("start_app").await?;
        }
    }
    Ok(())
}

/// One fault of a broker node, in turn: the mail queue's leader killed, a node partitioned away,
/// a node picked at random killed (the node and the durations are random); then restarts the
/// killed node, or waits until the partitioned one is back, so that no two nodes are ever down
/// together (the quorum queues need two of three).
async fn cluster_fault(
    stack: &Stack,
    cluster: &Cluster,
    rng: &mut StdRng,
    report: &mut ChaosReport,
) -> anyhow::Result<()> {
    let mail_db = sqlx::PgPool::connect(&stack.mail_db_url)
        .await
        .context("connecting to mail-svc's database")?;
    let since: chrono::DateTime<chrono::Utc> = sqlx::query_scalar("select clock_timestamp()")
        .fetch_one(&mail_db)
        .await?;
    let (what, killed) = match (report.leader_kills + report.node_kills + report.partitions) % 3 {
        0 => {
            let (leader, _) = cluster.queue_placement(&stack.queue).await?;
            eprintln!("chaos: killing node {leader} (leads {})", stack.queue);
            cluster.kill_node(leader).await?;
            report.leader_kills += 1;
            ("leader kill", Some(leader))
        }
        1 => {
            let node = cluster::NODES[rng.random_range(0..cluster::NODES.len())];
            let seconds = rng.random_range(2..=6);
            eprintln!("chaos: partitioning node {node} away for {seconds}s");
            cluster.partition_node(node, seconds).await?;
            report.partitions += 1;
            tokio::time::sleep(Duration::from_secs(u64::from(seconds))).await;
            ("partition", None)
        }
        _ => {
            let node = cluster::NODES[rng.random_range(0..cluster::NODES.len())];
            eprintln!("chaos: killing node {node}");
            cluster.kill_node(node).await?;
            report.node_kills += 1;
            ("node kill", Some(node))
        }
    };
    tokio::time::sleep(Duration::from_millis(rng.random_range(0..4000))).await;
    match killed {
        Some(node) => cluster.restart_node(node).await?,
        // The node resumes by itself: wait until the three run together.
        None => cluster.heal().await?,
    }
    let healed: chrono::DateTime<chrono::Utc> = sqlx::query_scalar("select clock_timestamp()")
        .fetch_one(&mail_db)
        .await?;
    let recovered = mail_silence_after(&mail_db, since, healed).await?;
    eprintln!(
        "chaos: no mail for {:.1}s at most after the {what}",
        recovered.as_secs_f64()
    );
    report.recoveries.push((what, recovered));
    mail_db.close().await;
    Ok(())
}

/// The longest time no mail went out from `since` (the fault, the database's clock) until the
/// first mail sent after `healed` (the node back): the silence the fault caused. Waits at most
/// [`RECOVERY_WAIT`] from `since` for that mail (the writers keep queueing mail throughout);
/// without one, the silence counts as that long.
async fn mail_silence_after(
    mail_db: &sqlx::PgPool,
    since: chrono::DateTime<chrono::Utc>,
    healed: chrono::DateTime<chrono::Utc>,
) -> anyhow::Result<Duration> {
    loop {
        let (silence, waited): (Option<f64>, f64) = sqlx::query_as(
            "with flowing as (select min(sent_at) as at from mails where sent_at > $2)
             select (select max(extract(epoch from gap))::float8
                       from (select sent_at - lag(sent_at, 1, $1) over (order by sent_at) as gap
                               from mails, flowing
                              where sent_at > $1 and sent_at <= flowing.at) g),
                    extract(epoch from clock_timestamp() - $1)::float8",
        )
        .bind(since)
        .bind(healed)
        .fetch_one(mail_db)
        .await?;
        if let Some(secs) = silence {
            return Ok(Duration::from_secs_f64(secs.max(0.0)));
        }
        if waited >= RECOVERY_WAIT.as_secs_f64() {
            return Ok(RECOVERY_WAIT);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `pg_terminate_backend` on every connection the services hold to their databases.
async fn terminate_db_connections(stack: &Stack) -> anyhow::Result<()> {
    let admin = sqlx::PgPool::connect(&format!("{}/postgres", outbox_testkit::pg_server_url()))
        .await
        .context("connecting to PostgreSQL as admin")?;
    let dbs: Vec<String> = stack
        .orders_shard_urls
        .iter()
        .chain([&stack.mail_db_url])
        .map(|url| db_name(url))
        .collect();
    sqlx::query(
        "select pg_terminate_backend(pid) from pg_stat_activity
          where datname = any($1) and pid <> pg_backend_pid()",
    )
    .bind(&dbs[..])
    .execute(&admin)
    .await?;
    admin.close().await;
    Ok(())
}

/// Makes sure the broker (or every cluster node) runs and every service process is up again.
async fn heal(stack: &mut Stack, cluster: Option<&Cluster>) -> anyhow::Result<()> {
    match cluster {
        Some(cluster) => cluster.heal().await?,
        None => stack.broker.ctl("start_app").await?,
    }
    for p in stack.relays.iter_mut().chain(stack.mails.iter_mut()) {
        if !p.is_running() {
            p.start().await?;
        }
    }
    Ok(())
}
