//! The benchmarks: every stage of the system next to what PostgreSQL and RabbitMQ can do on the
//! same machine, in the same run (`cargo run --release -p e2e --bin bench`).
//!
//! 1. write path: `Upsert` over gRPC vs the same SQL transaction through sqlx;
//! 2. relay drain: relay-svc draining a pre-filled outbox vs a plain confirmed lapin publisher;
//! 3. consume path: mail-svc on a pre-loaded queue vs a plain lapin consume+ack loop;
//! 4. end to end: commit→publish and commit→mail latency at fixed offered loads and at the max;
//! 5. idle cost: queries per second the relay and mail-svc make when nothing happens;
//! 6. scaling: 1, 2, 4 mail-svc instances and 1, 2, 4 order shards, with a capacity model
//!    (`crate::scaling`).

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering},
    },
    time::{Duration, Instant, SystemTime},
};

use anyhow::Context;
use futures::StreamExt;
use lapin::{
    BasicProperties, Channel, Connection, ConnectionProperties, ExchangeKind,
    options::{
        BasicAckOptions, BasicConsumeOptions, BasicPublishOptions, BasicQosOptions,
        ConfirmSelectOptions, ExchangeDeclareOptions, ExchangeDeleteOptions, QueueBindOptions,
        QueueDeclareOptions, QueueDeleteOptions,
    },
    types::{AMQPValue, FieldTable},
};
use orders_svc::{batch as orders_batch, db as orders_db, order::UpsertCommand, shard::Shard};
use outbox_proto::orders::{
    events::v1::{ORDER_CREATED, ORDER_STATUS_CHANGED, OrderEvent, OrderPayload},
    v1::{OrderStatus, UpsertOrderRequest},
};
use prost::Message;
use serde::Serialize;
use sqlx::PgPool;

use crate::{
    cpu::{CpuMeter, CpuUse},
    scaling::{self, Scaling, ScalingConfig, ScalingRun},
    stack::{Stack, StackConfig, db_name},
    stats::Summary,
};

/// Knobs of one benchmark run.
#[derive(Debug, Clone, clap::Args)]
pub struct BenchOptions {
    /// Seconds each write-path measurement runs.
    #[arg(long, default_value_t = 5.0)]
    pub write_secs: f64,
    /// Client concurrencies for the write path.
    #[arg(long, value_delimiter = ',', default_value = "1,8,32")]
    pub concurrency: Vec<usize>,
    /// Events for the relay drain and the consume path.
    #[arg(long, default_value_t = 100_000)]
    pub events: u64,
    /// Orders the consume-path events are spread over.
    #[arg(long, default_value_t = 1_000)]
    pub orders: u64,
    /// Messages in flight for the publisher ceiling (relay-svc's default BATCH_SIZE).
    #[arg(long, default_value_t = 256)]
    pub window: usize,
    /// Prefetch for the consumer ceiling (match mail-svc's prefetch).
    #[arg(long, default_value_t = 256)]
    pub prefetch: u16,
    /// Offered loads (events/s) for the end-to-end latency.
    #[arg(long, value_delimiter = ',', default_value = "100,1000")]
    pub loads: Vec<u64>,
    /// Seconds each end-to-end load runs.
    #[arg(long, default_value_t = 10.0)]
    pub e2e_secs: f64,
    /// Closed-loop writers for the maximum sustained end-to-end load.
    #[arg(long, default_value_t = 64)]
    pub max_writers: usize,
    /// Seconds to watch an idle stack.
    #[arg(long, default_value_t = 10.0)]
    pub idle_secs: f64,
    /// How often each ratio and latency measurement is repeated; the table shows the median and
    /// the spread (min–max), so one unlucky second on a noisy machine cannot decide a verdict.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub runs: u32,
    /// A smoke run: every section with small sizes, in under two minutes (overrides the sizes).
    #[arg(long)]
    pub quick: bool,
    /// mail-svc instances for the scaling section (6), each consuming the same pre-loaded queue.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4",
          value_parser = at_least_one)]
    pub mail_instances: Vec<usize>,
    /// Order shards for the scaling section (6): `--e2e-secs` of Upsert load from
    /// `--max-writers` writers each.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4",
          value_parser = at_least_one)]
    pub shards: Vec<usize>,
    /// Machine sizes (cores) the scaling section's capacity model predicts for.
    #[arg(long, value_delimiter = ',', default_value = "2,8,32",
          value_parser = at_least_one)]
    pub model_cores: Vec<usize>,
    /// Events the cost section (7) drains behind a pinned horizon, and soaks through the stack.
    #[arg(long, default_value_t = 1_000_000)]
    pub cost_events: u64,
    /// The cost section's rounds (7a) and chunks (7b): rates, CPU and sizes are per round.
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..))]
    pub cost_round: u64,
    /// Seconds of the cost section's light probe load, before the first round and after the last.
    #[arg(long, default_value_t = 10.0)]
    pub probe_secs: f64,
    /// Events pre-loaded for mail-svc's backlog drain (7c); its steady rate is measured on a
    /// tenth of them.
    #[arg(long, default_value_t = 50_000)]
    pub mail_backlog: u64,
    /// Sections to run (1-7; 7, cost vs work done, takes the longest and is not in the default).
    #[arg(long, value_delimiter = ',', default_value = "1,2,3,4,5,6")]
    pub sections: Vec<u8>,
    /// Where to write the JSON results.
    #[arg(long, default_value = "bench-results.json")]
    pub json: std::path::PathBuf,
}

/// A count of instances, shards or cores: 1 or more.
fn at_least_one(arg: &str) -> Result<usize, String> {
    match arg.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("{arg:?} is not a count of 1 or more")),
    }
}

impl BenchOptions {
    /// The sizes `--quick` runs with; other settings are kept.
    pub fn quick(mut self) -> Self {
        self.write_secs = 0.5;
        self.events = 3_000;
        self.orders = 200;
        self.e2e_secs = 1.0;
        self.idle_secs = 1.0;
        self.max_writers = 16;
        self.cost_events = 20_000;
        self.cost_round = 5_000;
        self.probe_secs = 1.0;
        self.mail_backlog = 2_000;
        self
    }
}

/// Everything one run measured.
#[derive(Debug, Default, Serialize)]
pub struct BenchReport {
    pub machine: Machine,
    pub runs: u32,
    pub write_path: Vec<WritePath>,
    pub relay_drain: Option<Pair>,
    pub consume: Option<Pair>,
    pub end_to_end: Vec<EndToEnd>,
    pub idle: Option<Idle>,
    pub scaling: Option<Scaling>,
    pub cost: Option<crate::cost::Cost>,
}

#[derive(Debug, Default, Serialize)]
pub struct Machine {
    pub cores: usize,
    pub memory_gib: f64,
    pub cpu: String,
    pub date: String,
}

/// One measurement repeated `--runs` times: each run's summary and the CPU it cost.
#[derive(Debug, Default, Serialize)]
pub struct Runs {
    pub runs: Vec<Summary>,
    pub cpu: Vec<CpuUse>,
}

/// The median of several runs with their range.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    /// The median (the lower middle one of an even count: no value the runs did not produce)
    /// and the range of `values`.
    pub fn of(mut values: Vec<f64>) -> Self {
        values.sort_by(f64::total_cmp);
        match (values.first(), values.last()) {
            (Some(&min), Some(&max)) => Self {
                median: values[(values.len() - 1) / 2],
                min,
                max,
            },
            _ => Self::default(),
        }
    }
}

impl Runs {
    fn push(&mut self, (summary, cpu): (Summary, CpuUse)) {
        self.runs.push(summary);
        self.cpu.push(cpu);
    }

    /// A figure of every run, as median and range.
    pub fn spread(&self, figure: impl Fn(&Summary) -> f64) -> Spread {
        Spread::of(self.runs.iter().map(figure).collect())
    }

    /// CPU seconds per 1,000 operations over all runs together.
    pub fn cpu_per_1000(&self) -> CpuUse {
        CpuUse::sum(&self.cpu).per(self.runs.iter().map(|r| r.ops).sum(), 1000.0)
    }
}

/// Per-run ratios of a service to its ceiling (runs are paired: each ceiling run is measured
/// right before its service run).
pub fn ratio_spread(service: &Runs, ceiling: &Runs) -> Spread {
    Spread::of(
        service
            .runs
            .iter()
            .zip(&ceiling.runs)
            .filter(|(_, c)| c.per_sec > 0.0)
            .map(|(s, c)| s.per_sec / c.per_sec)
            .collect(),
    )
}

#[derive(Debug, Serialize)]
pub struct WritePath {
    pub concurrency: usize,
    pub ceiling: Runs,
    pub service: Runs,
}

/// A stage next to its ceiling.
#[derive(Debug, Default, Serialize)]
pub struct Pair {
    pub ceiling: Runs,
    pub service: Runs,
}

/// One end-to-end load, repeated.
#[derive(Debug, Serialize)]
pub struct EndToEnd {
    /// Offered events/s, or `None` for the closed-loop maximum.
    pub offered: Option<u64>,
    pub runs: Vec<EndToEndRun>,
}

#[derive(Debug, Serialize)]
pub struct EndToEndRun {
    pub achieved_per_sec: f64,
    pub commit_to_publish: Summary,
    pub commit_to_mail: Summary,
    pub cpu: CpuUse,
}

impl EndToEnd {
    pub fn spread(&self, figure: impl Fn(&EndToEndRun) -> f64) -> Spread {
        Spread::of(self.runs.iter().map(figure).collect())
    }

    /// CPU seconds per 1,000 events over all runs together.
    pub fn cpu_per_1000(&self) -> CpuUse {
        let events = self.runs.iter().map(|r| r.commit_to_mail.ops).sum();
        CpuUse::sum(self.runs.iter().map(|r| &r.cpu)).per(events, 1000.0)
    }
}

#[derive(Debug, Serialize)]
pub struct Idle {
    pub secs: f64,
    pub relay_queries_per_sec: f64,
    pub mail_queries_per_sec: f64,
}

fn progress(msg: impl AsRef<str>) {
    eprintln!("bench: {}", msg.as_ref());
}

/// Runs the selected sections.
pub async fn run(opts: &BenchOptions) -> anyhow::Result<BenchReport> {
    let opts = if opts.quick {
        opts.clone().quick()
    } else {
        opts.clone()
    };
    let mut report = BenchReport {
        machine: machine(),
        runs: opts.runs,
        ..Default::default()
    };
    let on = |s: u8| opts.sections.contains(&s);
    let runs = 1..=opts.runs;
    if on(1) {
        for &c in &opts.concurrency {
            let (mut ceiling, mut service) = (Runs::default(), Runs::default());
            for run in runs.clone() {
                progress(format!("1. write path, C={c}, run {run}: database ceiling"));
                ceiling.push(write_ceiling(c, opts.write_secs).await?);
                progress(format!("1. write path, C={c}, run {run}: Upsert over gRPC"));
                service.push(write_service(c, opts.write_secs).await?);
            }
            report.write_path.push(WritePath {
                concurrency: c,
                ceiling,
                service,
            });
        }
    }
    if on(2) {
        let mut pair = Pair::default();
        for run in runs.clone() {
            progress(format!(
                "2. relay drain, run {run}: broker ceiling, {} messages",
                opts.events
            ));
            pair.ceiling
                .push(publish_ceiling(opts.events, opts.window).await?);
            progress(format!(
                "2. relay drain, run {run}: relay-svc draining {} events",
                opts.events
            ));
            pair.service
                .push(relay_drain(opts.events, opts.orders).await?);
        }
        report.relay_drain = Some(pair);
    }
    if on(3) {
        let mut pair = Pair::default();
        for run in runs.clone() {
            progress(format!(
                "3. consume path, run {run}: consumer ceiling, {} messages",
                opts.events
            ));
            pair.ceiling
                .push(consume_ceiling(opts.events, opts.prefetch).await?);
            progress(format!(
                "3. consume path, run {run}: mail-svc processing {} events",
                opts.events
            ));
            let run = mail_consume(opts.events, opts.orders, opts.prefetch, 1).await?;
            pair.service.push((run.through, run.cpu));
        }
        report.consume = Some(pair);
    }
    if on(4) || on(5) {
        let stack = bench_stack(1, 1).await?;
        // Idle first: right after heavy load, autovacuum's own transactions on the freshly
        // written tables would count as queries for a while.
        if on(5) {
            progress(format!("5. idle cost over {}s", opts.idle_secs));
            report.idle = Some(idle(&stack, opts.idle_secs).await?);
        }
        if on(4) {
            let loads = opts.loads.iter().map(|&l| Some(l)).chain([None]);
            for offered in loads {
                let mut e = EndToEnd {
                    offered,
                    runs: Vec::new(),
                };
                for run in runs.clone() {
                    progress(match offered {
                        Some(load) => format!("4. end to end at {load} events/s, run {run}"),
                        None => format!(
                            "4. end to end, maximum with {} writers, run {run}",
                            opts.max_writers
                        ),
                    });
                    e.runs
                        .push(end_to_end(&stack, offered, opts.e2e_secs, opts.max_writers).await?);
                }
                report.end_to_end.push(e);
            }
        }
    }
    if on(6) {
        report.scaling = Some(scaling_section(&opts, report.machine.cores).await?);
    }
    if on(7) {
        report.cost = Some(crate::cost::run(&opts).await?);
    }
    Ok(report)
}

/// Every configuration once per run, runs interleaved (1, 2, 4, 1, 2, 4, …) so that a noisy
/// minute on the machine does not land on one configuration only.
async fn scaling_section(opts: &BenchOptions, cores: usize) -> anyhow::Result<Scaling> {
    let configs = |ns: &[usize]| -> Vec<ScalingConfig> {
        ns.iter()
            .map(|&n| ScalingConfig {
                n,
                runs: Vec::new(),
            })
            .collect()
    };
    let mut s = Scaling {
        cores,
        model_cores: opts.model_cores.clone(),
        mail_events: opts.events,
        mail: configs(&opts.mail_instances),
        shard_secs: opts.e2e_secs,
        shard_writers: opts.max_writers,
        shards: configs(&opts.shards),
    };
    for run in 1..=opts.runs {
        for c in &mut s.mail {
            progress(format!(
                "6a. scaling, run {run}: {} mail-svc instance(s) processing {} events",
                c.n, opts.events
            ));
            c.runs
                .push(mail_consume(opts.events, opts.orders, opts.prefetch, c.n).await?);
        }
        for c in &mut s.shards {
            progress(format!(
                "6b. scaling, run {run}: {} shard(s), Upsert + relay for {}s",
                c.n, opts.e2e_secs
            ));
            c.runs
                .push(scaling::shard_writes(c.n, opts.e2e_secs, opts.max_writers).await?);
        }
    }
    Ok(s)
}

fn machine() -> Machine {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let kib: f64 = meminfo
        .lines()
        .find(|l| l.starts_with("MemTotal:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(|s| s.trim().to_owned())
        .unwrap_or_default();
    let date = std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    Machine {
        cores: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(0),
        memory_gib: kib / 1024.0 / 1024.0,
        cpu,
        date,
    }
}

// ---------------------------------------------------------------------------------------------
// 1. Write path

const WRITE_STEPS: [OrderStatus; 4] = [
    OrderStatus::Pending,
    OrderStatus::Paid,
    OrderStatus::Shipped,
    OrderStatus::Delivered,
];

/// Each worker walks its own orders through create → paid → shipped → delivered, so every
/// operation appends exactly one event, as a real order's life does.
async fn run_writers<F, Fut>(c: usize, secs: f64, op: F) -> anyhow::Result<Summary>
where
    F: Fn(usize, i64, OrderStatus) -> Fut + Send + Sync + Clone + 'static,
    Fut: std::future::Future<Output = anyhow::Result<()>> + Send,
{
    let next_order = Arc::new(AtomicI64::new(1));
    let deadline = Instant::now() + Duration::from_secs_f64(secs);
    let started = Instant::now();
    let mut tasks = Vec::new();
    for worker in 0..c {
        let (op, next_order) = (op.clone(), next_order.clone());
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            while Instant::now() < deadline {
                let id = next_order.fetch_add(1, Ordering::Relaxed);
                for status in WRITE_STEPS {
                    let t = Instant::now();
                    op(worker, id, status).await?;
                    latencies.push(t.elapsed());
                }
            }
            anyhow::Ok(latencies)
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await??);
    }
    Ok(Summary::new(all.len() as u64, started.elapsed(), all))
}

const EMAIL: &str = "bench@example.com";
const TRACEPARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

/// The write path's database ceiling: orders-svc's own transaction for one call
/// (`batch::apply_one`, the code a batch of any size runs), one call per transaction, straight on
/// a pool.
async fn write_ceiling(c: usize, secs: f64) -> anyhow::Result<(Summary, CpuUse)> {
    let url = outbox_kit::testing::fresh_database_url("bench_test_ceiling");
    let pool = outbox_kit::db::connect(&url, c as u32).await?;
    orders_db::MIGRATOR.run(&pool).await?;
    let meter = CpuMeter::new(Vec::new(), vec![db_name(&url)]);
    let before = meter.sample();
    let trace =
        outbox::trace::TraceHeaders::parse(TRACEPARENT, None).context("the bench's traceparent")?;
    let summary = run_writers(c, secs, move |_, id, status| {
        let (pool, trace) = (pool.clone(), trace.clone());
        async move {
            let cmd = UpsertCommand::parse(id, status as i32, EMAIL)?;
            // The write path's transaction for one call, straight on the pool: no queue, no gRPC.
            orders_batch::apply_one(&pool, Shard::ONLY, &cmd, Some(&trace)).await?;
            Ok(())
        }
    })
    .await?;
    let cpu = meter.sample().since(&before);
    drop_database(&url).await;
    Ok((summary, cpu))
}

async fn write_service(c: usize, secs: f64) -> anyhow::Result<(Summary, CpuUse)> {
    let mut stack = bench_stack(0, 0).await?;
    let mut clients = Vec::new();
    for _ in 0..c {
        // One HTTP/2 connection per client, as separate callers would have.
        clients.push(stack.orders_client().await?);
    }
    let clients = Arc::new(clients);
    let meter = stack.cpu_meter();
    let before = meter.sample();
    let summary = run_writers(c, secs, move |worker, id, status| {
        let mut client = clients[worker].clone();
        async move {
            client
                .upsert(UpsertOrderRequest {
                    id,
                    status: status as i32,
                    customer_email: EMAIL.into(),
                })
                .await?;
            Ok(())
        }
    })
    .await?;
    let cpu = meter.sample().since(&before);
    stack.stop().await;
    drop_database(&stack.orders_db_url).await;
    Ok((summary, cpu))
}

/// A fresh stack with `relays` relay-svc and `mails` mail-svc, logging warnings only (a benchmark
/// measures the services, not their log output).
pub(crate) async fn bench_stack(relays: usize, mails: usize) -> anyhow::Result<Stack> {
    let mut cfg = StackConfig::new("bench");
    cfg.db_max_connections = None;
    cfg.relays = relays;
    cfg.mails = mails;
    cfg.rust_log = "warn".into();
    Stack::start(cfg).await
}

/// Drops a stage's database (best effort: a leftover is swept by the next test run).
pub(crate) async fn drop_database(url: &str) {
    let _ = outbox_kit::testing::drop_database(outbox_kit::testing::database_name(url)).await;
}

// ---------------------------------------------------------------------------------------------
// 2. Relay drain

/// A realistic event body: what relay-svc publishes for a status change.
fn sample_event(seq: u64, order: i64, prev_seq: Option<u64>) -> OrderEvent {
    OrderEvent {
        seq,
        r#type: if prev_seq.is_some() {
            ORDER_STATUS_CHANGED
        } else {
            ORDER_CREATED
        }
        .into(),
        aggregate_id: order,
        prev_seq,
        payload: Some(OrderPayload {
            id: order,
            status: if prev_seq.is_some() {
                OrderStatus::Paid
            } else {
                OrderStatus::Pending
            } as i32,
            customer_email: format!("customer{order}@example.com"),
            previous_status: if prev_seq.is_some() {
                OrderStatus::Pending as i32
            } else {
                0
            },
        }),
        ts_ms: 1_792_076_127_301,
    }
}

pub(crate) async fn amqp() -> anyhow::Result<Connection> {
    Connection::connect(
        &outbox_kit::testing::amqp_url(),
        ConnectionProperties::default(),
    )
    .await
    .context("connecting to RabbitMQ")
}

fn persistent() -> BasicProperties {
    BasicProperties::default()
        .with_delivery_mode(2)
        .with_content_type("application/x-protobuf".into())
}

/// The properties relay-svc gives an event (its wire format: message id, type, timestamp, app
/// id and the chain headers), so the ceiling asks the broker for the same work per message.
fn event_properties(
    seq: u64,
    order: i64,
    prev_seq: Option<u64>,
    event_type: &str,
) -> BasicProperties {
    let mut headers = FieldTable::default();
    headers.insert("aggregate_id".into(), AMQPValue::LongLongInt(order));
    if let Some(p) = prev_seq {
        headers.insert("prev_seq".into(), AMQPValue::LongLongInt(p as i64));
    }
    persistent()
        .with_message_id(seq.to_string().into())
        .with_type(event_type.into())
        .with_timestamp(1_792_076_127)
        .with_app_id("relay-svc".into())
        .with_headers(headers)
}

/// A durable topic exchange with a durable classic queue bound to every key: what the relay
/// drain publishes into.
pub(crate) async fn topic_to_queue(
    ch: &Channel,
    exchange: &str,
    queue: &str,
) -> anyhow::Result<()> {
    ch.exchange_declare(
        exchange.into(),
        ExchangeKind::Topic,
        ExchangeDeclareOptions {
            durable: true,
            ..Default::default()
        },
        FieldTable::default(),
    )
    .await?;
    ch.queue_declare(
        queue.into(),
        QueueDeclareOptions {
            durable: true,
            ..Default::default()
        },
        FieldTable::default(),
    )
    .await?;
    ch.queue_bind(
        queue.into(),
        exchange.into(),
        "#".into(),
        QueueBindOptions::default(),
        FieldTable::default(),
    )
    .await?;
    Ok(())
}

/// A plain publisher doing what relay-svc asks of the broker: persistent, mandatory messages
/// with the relay's properties to a topic exchange bound to a durable queue, with confirms,
/// `window` in flight.
async fn publish_ceiling(events: u64, window: usize) -> anyhow::Result<(Summary, CpuUse)> {
    let conn = amqp().await?;
    let ch = conn.create_channel().await?;
    let queue = outbox_kit::testing::unique("bench.ceiling");
    let exchange = format!("{queue}.events");
    topic_to_queue(&ch, &exchange, &queue).await?;
    ch.confirm_select(ConfirmSelectOptions::default()).await?;
    let body = sample_event(1, 1, Some(1)).encode_to_vec();
    // relay-svc stamps its connection's user on every message and the broker verifies it.
    let user = url::Url::parse(&outbox_kit::testing::amqp_url())?
        .username()
        .to_owned();
    let meter = CpuMeter::default();
    let before = meter.sample();
    let started = Instant::now();
    let mut sent = 0u64;
    while sent < events {
        let n = (window as u64).min(events - sent);
        let mut confirms = Vec::with_capacity(n as usize);
        for i in sent..sent + n {
            confirms.push(
                ch.basic_publish(
                    exchange.as_str().into(),
                    "order.status_changed".into(),
                    BasicPublishOptions {
                        mandatory: true,
                        ..Default::default()
                    },
                    &body,
                    event_properties(i + 1, 1, Some(i), ORDER_STATUS_CHANGED)
                        .with_user_id(user.as_str().into()),
                )
                .await?,
            );
        }
        for c in confirms {
            anyhow::ensure!(c.await?.is_ack(), "broker nacked");
        }
        sent += n;
    }
    let summary = Summary::new(events, started.elapsed(), Vec::new());
    let cpu = meter.sample().since(&before);
    ch.queue_delete(queue.as_str().into(), QueueDeleteOptions::default())
        .await?;
    ch.exchange_delete(exchange.as_str().into(), ExchangeDeleteOptions::default())
        .await?;
    Ok((summary, cpu))
}

/// Appends `events` rows in the outbox's format in one transaction, as a writer would: event `i`
/// belongs to order `first_order + i % orders`, each order's events chained by `prev_seq`. The
/// seqs are reserved up front, after the transaction took its xid (the order the outbox's
/// trigger keeps for every writer, which the relay's read floor relies on), so the chains are
/// written by the insert itself and no dead row versions are left behind. No other writer may
/// run meanwhile.
pub(crate) async fn fill_outbox(
    pool: &PgPool,
    events: u64,
    orders: u64,
    first_order: i64,
) -> anyhow::Result<()> {
    let payload = sample_event(1, 1, Some(1))
        .payload
        .unwrap_or_default()
        .encode_to_vec();
    let mut tx = pool.begin().await?;
    sqlx::query("select pg_current_xact_id()")
        .execute(&mut *tx)
        .await?;
    let last: i64 = sqlx::query_scalar(
        "select setval(pg_get_serial_sequence('outbox', 'seq'),
                       nextval(pg_get_serial_sequence('outbox', 'seq')) + $1 - 1)",
    )
    .bind(events as i64)
    .fetch_one(&mut *tx)
    .await?;
    sqlx::query(
        "insert into outbox (seq, aggregate_id, event_type, prev_seq, payload)
         overriding system value
         select $4 + g, $5 + (g % $2),
                case when g < $2 then 'OrderCreated' else 'OrderStatusChanged' end,
                case when g >= $2 then $4 + g - $2 end, $3
           from generate_series(0, $1 - 1) g",
    )
    .bind(events as i64)
    .bind(orders as i64)
    .bind(&payload)
    .bind(last - events as i64 + 1)
    .bind(first_order)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Wakes the relay now rather than at its next poll.
pub(crate) async fn notify_relay(pool: &PgPool) -> anyhow::Result<()> {
    sqlx::query("select pg_notify($1, '')")
        .bind(outbox_kit::outbox::NOTIFY_CHANNEL)
        .execute(pool)
        .await?;
    Ok(())
}

/// relay-svc draining `events` rows committed at once (`orders` chains, in chain order).
async fn relay_drain(events: u64, orders: u64) -> anyhow::Result<(Summary, CpuUse)> {
    let mut stack = bench_stack(1, 0).await?;
    let conn = amqp().await?;
    let ch = conn.create_channel().await?;
    let queue = outbox_kit::testing::unique("bench.drain");
    topic_to_queue(&ch, &stack.exchange, &queue).await?;
    let pool = PgPool::connect(&stack.orders_db_url).await?;
    fill_outbox(&pool, events, orders, 1).await?;
    let meter = stack.cpu_meter();
    let before = meter.sample();
    let started = Instant::now();
    notify_relay(&pool).await?;
    let mut last_report = Instant::now();
    loop {
        let left: i64 = sqlx::query_scalar("select count(*) from outbox")
            .fetch_one(&pool)
            .await?;
        if left == 0 {
            break;
        }
        if last_report.elapsed() > Duration::from_secs(2) {
            last_report = Instant::now();
            progress(format!("   {} of {events} published", events as i64 - left));
        }
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(600),
            "relay drain stalled at {left}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let summary = Summary::new(events, started.elapsed(), Vec::new());
    let cpu = meter.sample().since(&before);
    ch.queue_delete(queue.as_str().into(), QueueDeleteOptions::default())
        .await?;
    stack.stop().await;
    drop_database(&stack.orders_db_url).await;
    Ok((summary, cpu))
}

// ---------------------------------------------------------------------------------------------
// 3. Consume path

fn quorum() -> FieldTable {
    let mut args = FieldTable::default();
    args.insert(
        "x-queue-type".into(),
        AMQPValue::LongString("quorum".into()),
    );
    args
}

async fn preload(
    ch: &Channel,
    exchange: &str,
    routing: impl Fn(u64) -> (String, Vec<u8>, BasicProperties),
    events: u64,
) -> anyhow::Result<()> {
    ch.confirm_select(ConfirmSelectOptions::default()).await?;
    let mut i = 0;
    while i < events {
        let mut confirms = Vec::new();
        for _ in 0..1000.min(events - i) {
            let (key, body, props) = routing(i);
            confirms.push(
                ch.basic_publish(
                    exchange.into(),
                    key.as_str().into(),
                    BasicPublishOptions::default(),
                    &body,
                    props,
                )
                .await?,
            );
            i += 1;
        }
        for c in confirms {
            anyhow::ensure!(c.await?.is_ack(), "broker nacked a preload message");
        }
    }
    Ok(())
}

/// A plain consumer on a pre-loaded quorum queue: ack each message, `prefetch` unacked.
async fn consume_ceiling(events: u64, prefetch: u16) -> anyhow::Result<(Summary, CpuUse)> {
    let conn = amqp().await?;
    let ch = conn.create_channel().await?;
    let queue = outbox_kit::testing::unique("bench.consume");
    ch.queue_declare(
        queue.as_str().into(),
        QueueDeclareOptions {
            durable: true,
            ..Default::default()
        },
        quorum(),
    )
    .await?;
    let body = sample_event(1, 1, Some(1)).encode_to_vec();
    let q = queue.clone();
    preload(
        &ch,
        "",
        move |_| (q.clone(), body.clone(), persistent()),
        events,
    )
    .await?;
    let consumer_ch = conn.create_channel().await?;
    consumer_ch
        .basic_qos(prefetch, BasicQosOptions::default())
        .await?;
    let mut consumer = consumer_ch
        .basic_consume(
            queue.as_str().into(),
            "bench".into(),
            BasicConsumeOptions::default(),
            FieldTable::default(),
        )
        .await?;
    let meter = CpuMeter::default();
    let before = meter.sample();
    let started = Instant::now();
    let mut got = 0;
    while got < events {
        let delivery = consumer.next().await.context("consumer ended")??;
        delivery.ack(BasicAckOptions::default()).await?;
        got += 1;
    }
    let summary = Summary::new(events, started.elapsed(), Vec::new());
    let cpu = meter.sample().since(&before);
    ch.queue_delete(queue.as_str().into(), QueueDeleteOptions::default())
        .await?;
    Ok((summary, cpu))
}

/// `instances` mail-svc (sharing one queue and one mail database) working through `events`
/// pre-loaded events for `orders` orders, each order's chain in order, orders interleaved.
async fn mail_consume(
    events: u64,
    orders: u64,
    prefetch: u16,
    instances: usize,
) -> anyhow::Result<ScalingRun> {
    mail_consume_until(events, orders, prefetch, instances, Done::Processed).await
}

/// One mail-svc from `events` pre-loaded events until every mail is sent (its mailer included):
/// the rate of the whole consume side.
pub(crate) async fn mail_consume_until_sent(
    events: u64,
    orders: u64,
    prefetch: u16,
) -> anyhow::Result<Summary> {
    Ok(mail_consume_until(events, orders, prefetch, 1, Done::Sent)
        .await?
        .through)
}

/// When a mail-svc run is done.
#[derive(Clone, Copy, PartialEq)]
enum Done {
    /// Every event turned into a queued mail.
    Processed,
    /// And every mail sent.
    Sent,
}

async fn mail_consume_until(
    events: u64,
    orders: u64,
    prefetch: u16,
    instances: usize,
    done: Done,
) -> anyhow::Result<ScalingRun> {
    let mut cfg = StackConfig::new("bench");
    cfg.db_max_connections = None;
    cfg.relays = 0;
    cfg.mails = instances;
    cfg.rust_log = "warn".into();
    cfg.mail_env.push(("PREFETCH".into(), prefetch.to_string()));
    let mut stack = Stack::start(cfg).await?;
    // Let mail-svc declare its topology, then stop it and fill its queue.
    let stopping = stack.mails.iter_mut();
    futures::future::join_all(stopping.map(|mail| mail.terminate(Duration::from_secs(10)))).await;
    let conn = amqp().await?;
    let ch = conn.create_channel().await?;
    preload(
        &ch,
        &stack.exchange,
        move |i| {
            let order = (i % orders) as i64 + 1;
            let seq = i + 1;
            let prev = (i >= orders).then(|| seq - orders);
            let event = sample_event(seq, order, prev);
            let key = if prev.is_some() {
                "order.status_changed"
            } else {
                "order.created"
            };
            let props = event_properties(seq, order, prev, &event.r#type);
            (key.to_owned(), event.encode_to_vec(), props)
        },
        events,
    )
    .await?;
    let started = Instant::now();
    // All at once: started one after another, the first would work alone for a while.
    futures::future::try_join_all(stack.mails.iter_mut().map(|mail| mail.start())).await?;
    let meter = stack.cpu_meter();
    let before = meter.sample();
    let mut client = stack.mail_client(0).await?;
    let mut last_report = Instant::now();
    loop {
        let status = client
            .get_status(outbox_proto::mail::v1::GetStatusRequest {})
            .await?
            .into_inner();
        if status.processed >= events && (done == Done::Processed || status.unsent_mails == 0) {
            break;
        }
        if last_report.elapsed() > Duration::from_secs(2) {
            last_report = Instant::now();
            progress(format!("   {} of {events} processed", status.processed));
        }
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(900),
            "mail-svc stalled at {}",
            status.processed
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let through = Summary::new(events, started.elapsed(), Vec::new());
    let after = meter.sample();
    stack.stop().await;
    drop_database(&stack.orders_db_url).await;
    drop_database(&stack.mail_db_url).await;
    Ok(ScalingRun {
        through,
        upserts: None,
        cpu: after.since(&before),
        machine_busy_secs: after.machine_busy_since(&before),
    })
}

// ---------------------------------------------------------------------------------------------
// 4. End to end

/// Event `i` of a load: lanes of orders walked through their four statuses, so requests for one
/// order are `LANES` requests apart and never race each other.
const LANES: i64 = 1000;

pub(crate) fn request_for(base: i64, i: i64) -> UpsertOrderRequest {
    let lane = i % LANES;
    let step = i / LANES;
    UpsertOrderRequest {
        id: base + lane + LANES * (step / 4),
        status: WRITE_STEPS[(step % 4) as usize] as i32,
        customer_email: EMAIL.into(),
    }
}

/// Drives upserts (open loop at `offered`/s, or closed loop with `writers` when `None`), and
/// measures from each Upsert's response (sent right after COMMIT) to the event's arrival on an
/// independent queue bound to the exchange, and to mail-svc queueing its mail.
async fn end_to_end(
    stack: &Stack,
    offered: Option<u64>,
    secs: f64,
    writers: usize,
) -> anyhow::Result<EndToEndRun> {
    static BASE: AtomicI64 = AtomicI64::new(1_000_000);
    let base = BASE.fetch_add(100_000_000, Ordering::Relaxed);
    let conn = amqp().await?;
    let ch = conn.create_channel().await?;
    ch.basic_qos(1000, BasicQosOptions::default()).await?;
    let mut consumer = stack
        .tap(&ch, &outbox_kit::testing::unique("bench-e2e"))
        .await?;
    let received: Arc<Mutex<HashMap<u64, SystemTime>>> = Arc::default();
    let rx = received.clone();
    let consuming = tokio::spawn(async move {
        while let Some(Ok(delivery)) = consumer.next().await {
            let now = SystemTime::now();
            if let Ok(event) = OrderEvent::decode(delivery.data.as_slice()) {
                rx.lock().expect("received").entry(event.seq).or_insert(now);
            }
        }
    });

    let committed: Arc<Mutex<HashMap<u64, SystemTime>>> = Arc::default();
    let next = Arc::new(AtomicI64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let errors = Arc::new(AtomicU64::new(0));
    let meter = stack.cpu_meter();
    let before = meter.sample();
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(secs);
    let mut tasks = Vec::new();
    let record = |committed: &Arc<Mutex<HashMap<u64, SystemTime>>>,
                  resp: Result<
        tonic::Response<outbox_proto::orders::v1::UpsertOrderResponse>,
        tonic::Status,
    >,
                  errors: &AtomicU64| {
        let now = SystemTime::now();
        match resp.map(|r| r.into_inner().event_seq) {
            Ok(Some(seq)) => {
                committed.lock().expect("committed").insert(seq, now);
            }
            _ => {
                errors.fetch_add(1, Ordering::Relaxed);
            }
        }
    };
    match offered {
        Some(rate) => {
            let client = stack.orders_client().await?;
            let mut ticker = tokio::time::interval(Duration::from_secs_f64(1.0 / rate as f64));
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
            while Instant::now() < deadline {
                ticker.tick().await;
                let i = next.fetch_add(1, Ordering::Relaxed);
                let (mut client, committed, errors) =
                    (client.clone(), committed.clone(), errors.clone());
                tasks.push(tokio::spawn(async move {
                    let resp = client.upsert(request_for(base, i)).await;
                    record(&committed, resp, &errors);
                }));
            }
        }
        None => {
            for _ in 0..writers {
                let mut client = stack.orders_client().await?;
                let (committed, errors, next, stop) = (
                    committed.clone(),
                    errors.clone(),
                    next.clone(),
                    stop.clone(),
                );
                tasks.push(tokio::spawn(async move {
                    while !stop.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let resp = client.upsert(request_for(base, i)).await;
                        record(&committed, resp, &errors);
                    }
                }));
            }
            tokio::time::sleep_until(deadline.into()).await;
            stop.store(true, Ordering::Relaxed);
        }
    }
    for t in tasks {
        t.await?;
    }
    let load_secs = started.elapsed();
    let committed = committed.lock().expect("committed").clone();
    let events = committed.len() as u64;
    anyhow::ensure!(
        errors.load(Ordering::Relaxed) == 0,
        "{} upserts failed",
        errors.load(Ordering::Relaxed)
    );

    // Wait until every event reached the queue and mail-svc.
    let mail_pool = PgPool::connect(&stack.mail_db_url).await?;
    let seqs: Vec<i64> = committed.keys().map(|&s| s as i64).collect();
    let wait_started = Instant::now();
    let mailed: HashMap<u64, SystemTime> = loop {
        let arrived = received.lock().expect("received").len() as u64;
        let rows: Vec<(i64, chrono::DateTime<chrono::Utc>)> = sqlx::query_as(MAIL_QUEUED_AT_SQL)
            .bind(&seqs)
            .fetch_all(&mail_pool)
            .await
            .context("reading mail-svc's mails")?;
        if arrived >= events && rows.len() as u64 >= events {
            break rows
                .into_iter()
                .map(|(s, t)| (s as u64, SystemTime::from(t)))
                .collect();
        }
        anyhow::ensure!(
            wait_started.elapsed() < Duration::from_secs(300),
            "end to end stalled: {arrived} published, {} mailed of {events}",
            rows.len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let all_done = started.elapsed();
    let cpu = meter.sample().since(&before);
    consuming.abort();
    let received = received.lock().expect("received").clone();
    let since = |at: &HashMap<u64, SystemTime>| -> Vec<Duration> {
        committed
            .iter()
            .filter_map(|(seq, c)| {
                at.get(seq)
                    .map(|t| t.duration_since(*c).unwrap_or_default())
            })
            .collect()
    };
    let last_mail = mailed.values().max().copied();
    let first_commit = committed.values().min().copied();
    let span = match (first_commit, last_mail) {
        (Some(a), Some(b)) => b.duration_since(a).unwrap_or(all_done),
        _ => all_done,
    };
    Ok(EndToEndRun {
        cpu,
        achieved_per_sec: events as f64 / span.as_secs_f64().max(1e-9),
        commit_to_publish: Summary::new(events, load_secs, since(&received)),
        commit_to_mail: Summary::new(events, span, since(&mailed)),
    })
}

/// mail-svc's record of when each mail was queued (its `mails` table).
const MAIL_QUEUED_AT_SQL: &str = "select seq, queued_at from mails where seq = any($1)";

// ---------------------------------------------------------------------------------------------
// 5. Idle cost

/// Transactions (each autocommit query is one) per second in the orders database (the relay's;
/// orders-svc makes none while no calls arrive) and in mail-svc's database, with no load.
async fn idle(stack: &Stack, secs: f64) -> anyhow::Result<Idle> {
    let admin = PgPool::connect(&format!(
        "{}/postgres",
        outbox_kit::testing::pg_server_url()
    ))
    .await?;
    let dbs = [db_name(&stack.orders_db_url), db_name(&stack.mail_db_url)];
    // Wait until the end-to-end load has fully settled (nothing unsent, no mail queued), then
    // let the statistics flush.
    let mut mail = stack.mail_client(0).await?;
    let orders_pool = PgPool::connect(&stack.orders_db_url).await?;
    let settle_deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let status = mail
            .get_status(outbox_proto::mail::v1::GetStatusRequest {})
            .await?
            .into_inner();
        let backlog: i64 = sqlx::query_scalar("select count(*) from outbox")
            .fetch_one(&orders_pool)
            .await?;
        if backlog == 0 && status.held == 0 && status.unsent_mails == 0 {
            break;
        }
        anyhow::ensure!(
            Instant::now() < settle_deadline,
            "the stack never settled: {status:?}"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    orders_pool.close().await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let count = |admin: PgPool, dbs: [String; 2]| async move {
        sqlx::query("select pg_stat_clear_snapshot()")
            .execute(&admin)
            .await?;
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "select datname::text, (xact_commit + xact_rollback)::bigint from pg_stat_database where datname = any($1)",
        )
        .bind(&dbs[..])
        .fetch_all(&admin)
        .await?;
        anyhow::Ok(rows.into_iter().collect::<HashMap<_, _>>())
    };
    let before = count(admin.clone(), dbs.clone()).await?;
    tokio::time::sleep(Duration::from_secs_f64(secs)).await;
    // Statistics are flushed by each backend at most once a second: wait for the last flush.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let after = count(admin.clone(), dbs.clone()).await?;
    let rate = |db: &String| {
        (after.get(db).copied().unwrap_or(0) - before.get(db).copied().unwrap_or(0)) as f64 / secs
    };
    Ok(Idle {
        secs,
        relay_queries_per_sec: rate(&dbs[0]),
        mail_queries_per_sec: rate(&dbs[1]),
    })
}

// ---------------------------------------------------------------------------------------------
// The table

/// `58%` for one run, `58% (55–61)` for several: the median and the range of the per-run ratios.
fn ratio(r: Spread, runs: u32) -> String {
    let pct = |v: f64| format!("{:.0}%", 100.0 * v);
    if runs > 1 {
        format!(
            "{} ({:.0}–{:.0})",
            pct(r.median),
            100.0 * r.min,
            100.0 * r.max
        )
    } else {
        pct(r.median)
    }
}

/// `1,234 (1,100–1,300)`: a median with its range when there were several runs.
fn figure(s: Spread, runs: u32, decimals: usize) -> String {
    if runs > 1 {
        format!(
            "{:.d$} ({:.d$}–{:.d$})",
            s.median,
            s.min,
            s.max,
            d = decimals
        )
    } else {
        format!("{:.d$}", s.median, d = decimals)
    }
}

/// `cpu s/1000: mail-svc 0.41, postgres 0.30, …`: where a stage's CPU went, per 1,000 events.
fn cpu_line(cpu: &CpuUse) -> String {
    let parts: Vec<String> = cpu.0.iter().map(|(k, v)| format!("{k} {v:.3}")).collect();
    format!("cpu s per 1,000: {}", parts.join(", "))
}

/// A throughput stage next to its ceiling.
fn write_pair(out: &mut String, title: &str, ceiling: &str, service: &str, p: &Pair, runs: u32) {
    use std::fmt::Write;
    let ops = p.service.runs.first().map_or(0, |r| r.ops);
    let heading = format!("{title} ({ops} events)");
    let _ = writeln!(out, "\n{heading:<44} events/s (median, range)   ratio");
    let rate = |r: &Summary| r.per_sec;
    let _ = writeln!(
        out,
        "   {ceiling:<40} {:<26}",
        figure(p.ceiling.spread(rate), runs, 0)
    );
    let _ = writeln!(out, "      {}", cpu_line(&p.ceiling.cpu_per_1000()));
    let _ = writeln!(
        out,
        "   {service:<40} {:<26} {}",
        figure(p.service.spread(rate), runs, 0),
        ratio(ratio_spread(&p.service, &p.ceiling), runs)
    );
    let _ = writeln!(out, "      {}", cpu_line(&p.service.cpu_per_1000()));
}

/// The human-readable table of a report.
pub fn table(r: &BenchReport) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let m = &r.machine;
    let runs = r.runs;
    let _ = writeln!(
        out,
        "\noutbox benchmark, {} — {} cores, {:.0} GiB, {}",
        m.date, m.cores, m.memory_gib, m.cpu
    );
    let _ = writeln!(
        out,
        "each figure: median of {runs} run(s), range in parentheses; cpu: seconds per 1,000 events"
    );
    if !r.write_path.is_empty() {
        let _ = writeln!(
            out,
            "\n1. write path (one event per call)   ops/s                p50 ms             p99 ms             ratio"
        );
        for w in &r.write_path {
            for (name, side) in [
                ("SQL transaction (ceiling)", &w.ceiling),
                ("Upsert over gRPC", &w.service),
            ] {
                let _ = writeln!(
                    out,
                    "   C={:<3} {name:<27} {:<20} {:<18} {:<18} {}",
                    w.concurrency,
                    figure(side.spread(|s| s.per_sec), runs, 0),
                    figure(side.spread(|s| s.p50_ms), runs, 2),
                    figure(side.spread(|s| s.p99_ms), runs, 2),
                    if std::ptr::eq(side, &w.service) {
                        ratio(ratio_spread(&w.service, &w.ceiling), runs)
                    } else {
                        String::new()
                    }
                );
                let _ = writeln!(out, "      {}", cpu_line(&side.cpu_per_1000()));
            }
        }
    }
    if let Some(p) = &r.relay_drain {
        write_pair(
            &mut out,
            "2. relay drain",
            "lapin publisher, relay's wire (ceiling)",
            "relay-svc draining the outbox",
            p,
            runs,
        );
    }
    if let Some(p) = &r.consume {
        write_pair(
            &mut out,
            "3. consume path",
            "lapin consume+ack (ceiling)",
            "mail-svc processing",
            p,
            runs,
        );
    }
    if !r.end_to_end.is_empty() {
        let _ = writeln!(
            out,
            "\n4. end to end   achieved/s          commit->publish p50 / p99 ms          commit->mail p50 / p99 ms"
        );
        for e in &r.end_to_end {
            let load = e
                .offered
                .map(|o| format!("{o}/s"))
                .unwrap_or_else(|| "max".into());
            let _ = writeln!(
                out,
                "   {:<8} {:<19} {:<17} / {:<19} {:<16} / {}",
                load,
                figure(e.spread(|r| r.achieved_per_sec), runs, 0),
                figure(e.spread(|r| r.commit_to_publish.p50_ms), runs, 2),
                figure(e.spread(|r| r.commit_to_publish.p99_ms), runs, 2),
                figure(e.spread(|r| r.commit_to_mail.p50_ms), runs, 2),
                figure(e.spread(|r| r.commit_to_mail.p99_ms), runs, 2),
            );
            let _ = writeln!(out, "      {}", cpu_line(&e.cpu_per_1000()));
        }
    }
    if let Some(i) = &r.idle {
        let _ = writeln!(
            out,
            "\n5. idle cost over {:.1}s: relay-svc {:.1} queries/s, mail-svc {:.1} queries/s",
            i.secs, i.relay_queries_per_sec, i.mail_queries_per_sec
        );
    }
    if let Some(s) = &r.scaling {
        out.push_str(&scaling::table(s));
    }
    if let Some(c) = &r.cost {
        out.push_str(&crate::cost::table(c));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_is_the_median_and_range_of_the_runs() {
        let s = Spread::of(vec![0.7, 0.5, 0.9]);
        assert_eq!((s.median, s.min, s.max), (0.7, 0.5, 0.9));
        assert_eq!(Spread::of(vec![2.0, 1.0]).median, 1.0);
        assert_eq!(Spread::of(vec![]), Spread::default());
        assert_eq!(ratio(s, 3), "70% (50–90)");
        assert_eq!(ratio(s, 1), "70%");
    }

    #[test]
    fn ratios_pair_each_service_run_with_its_own_ceiling() {
        let run = |per_sec| Summary {
            per_sec,
            ..Default::default()
        };
        let ceiling = Runs {
            runs: vec![run(100.0), run(200.0)],
            cpu: vec![CpuUse::default(); 2],
        };
        let service = Runs {
            runs: vec![run(90.0), run(100.0)],
            cpu: vec![CpuUse::default(); 2],
        };
        let r = ratio_spread(&service, &ceiling);
        assert_eq!((r.min, r.max), (0.5, 0.9));
    }
}
