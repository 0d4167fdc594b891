//! Section 6 of the benchmark: how throughput grows with mail-svc instances and with order
//! shards on this machine, what saturates first, and a capacity model for machines with more
//! cores derived from the measured CPU time per event of each stage.
//!
//! The rule for the "saturates" verdict lives in [`Verdict`], the model's arithmetic in
//! [`CapacityModel`]; both are pure and table-tested. The measurements reuse the bench's
//! stacks, names and clean-up.

use std::{
    fmt,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};

use serde::Serialize;

use crate::{
    cpu::CpuUse,
    load::{orders::request_for, stack::drop_database},
    stack::{Stack, StackConfig},
    stats::Spread,
    stats::Summary,
};

/// Share of all cores busy (every process on the machine) from which a configuration counts as
/// CPU-bound: the scheduler, interrupts and short idle gaps keep a saturated machine a little
/// under 100 %.
pub const CPU_BOUND_SHARE: f64 = 0.85;

/// A stage spending less than this share of the pipeline's CPU is left out of the capacity model
/// (e.g. an idle orders-svc next to the mail path).
pub const NEGLIGIBLE_STAGE_SHARE: f64 = 0.01;

/// The CPU group of the bench process itself: clients would run elsewhere, so it is reported
/// (it competes for this machine's cores) but never modelled as a stage.
const LOAD: &str = "load";

/// One measured run of a configuration.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ScalingRun {
    /// Events mailed, from the start until the last one was
    /// through.
    pub through: Summary,
    /// Upserts while the writers ran (shard section only).
    pub upserts: Option<Summary>,
    /// CPU seconds per group over `through.secs`.
    pub cpu: CpuUse,
    /// Busy CPU seconds of the whole machine over `through.secs` (ours and anyone else's).
    pub machine_busy_secs: f64,
}

/// One configuration (`n` instances or shards), repeated `--runs` times.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ScalingConfig {
    pub n: usize,
    pub runs: Vec<ScalingRun>,
}

impl ScalingConfig {
    /// Events/s through the stage, median and range.
    pub fn per_sec(&self) -> Spread {
        Spread::of(self.runs.iter().map(|r| r.through.per_sec).collect())
    }

    /// Upserts/s while the writers ran, median and range.
    pub fn upserts_per_sec(&self) -> Spread {
        Spread::of(
            self.runs
                .iter()
                .filter_map(|r| r.upserts.as_ref().map(|u| u.per_sec))
                .collect(),
        )
    }

    fn events(&self) -> u64 {
        self.runs.iter().map(|r| r.through.ops).sum()
    }

    /// CPU seconds per 1,000 events over all runs together.
    pub fn cpu_per_1000(&self) -> CpuUse {
        CpuUse::sum(self.runs.iter().map(|r| &r.cpu)).per(self.events(), 1000.0)
    }

    /// The verdict over all runs together.
    pub fn verdict(&self, cores: usize) -> Verdict {
        Verdict::of(
            &CpuUse::sum(self.runs.iter().map(|r| &r.cpu)),
            self.runs.iter().map(|r| r.machine_busy_secs).sum(),
            self.runs.iter().map(|r| r.through.secs).sum(),
            cores,
        )
    }
}

/// Section 6's results.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Scaling {
    pub cores: usize,
    /// Cores the capacity model predicts for.
    pub model_cores: Vec<usize>,
    /// Events each mail-svc configuration worked through.
    pub mail_events: u64,
    /// mail-svc instances on one pre-loaded queue.
    pub mail: Vec<ScalingConfig>,
    /// Seconds of Upsert load per shard configuration, and its closed-loop writers.
    pub shard_secs: f64,
    pub shard_writers: usize,
    /// orders-svc + relay-svc over N shard databases.
    pub shards: Vec<ScalingConfig>,
}

// ---------------------------------------------------------------------------------------------
// The verdict

/// What saturated a configuration, from its CPU accounting: how busy the machine's cores were
/// over the run (everything on the machine, and the part our processes spent), and which process
/// group spent the most.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub cores: usize,
    /// Busy share of all cores, every process on the machine (0–1).
    pub machine: f64,
    /// The part of `machine` our groups spent (stack, PostgreSQL, RabbitMQ, load generator).
    pub ours: f64,
    /// The group with the most CPU and its share of ours.
    pub top: Option<(String, f64)>,
}

impl Verdict {
    /// `cpu`: seconds per group over `wall_secs`; `machine_busy_secs`: the whole machine's busy
    /// seconds over the same time.
    pub fn of(cpu: &CpuUse, machine_busy_secs: f64, wall_secs: f64, cores: usize) -> Self {
        let capacity = wall_secs * cores.max(1) as f64;
        let ours_secs: f64 = cpu.0.values().sum();
        let share = |secs: f64| {
            if capacity > 0.0 { secs / capacity } else { 0.0 }
        };
        let top = cpu
            .0
            .iter()
            .max_by(|a, b| a.1.total_cmp(b.1))
            .filter(|_| ours_secs > 0.0)
            .map(|(group, secs)| (group.clone(), secs / ours_secs));
        Self {
            cores,
            // Two readings of different counters: ours can come out a hair above the machine's.
            machine: share(machine_busy_secs.max(ours_secs)),
            ours: share(ours_secs),
            top,
        }
    }

    pub fn cpu_bound(&self) -> bool {
        self.machine >= CPU_BOUND_SHARE
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pct = |v: f64| format!("{:.0}%", 100.0 * v);
        let busy = format!(
            "{} of {} cores busy (ours {}, others {})",
            pct(self.machine),
            self.cores,
            pct(self.ours),
            pct((self.machine - self.ours).max(0.0))
        );
        if self.cpu_bound() {
            write!(f, "machine CPU-bound: {busy}")?;
        } else {
            write!(
                f,
                "not CPU-bound, {busy}: waiting (commits, locks, round trips) limits it"
            )?;
        }
        if let Some((group, share)) = &self.top {
            write!(f, "; most CPU: {group} {}", pct(*share))?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// The capacity model

/// What one configuration (N instances or shards) would pass on a machine of `C` cores, from
/// the CPU seconds per event its stages spent here: all stages sharing the `C` cores pass at most
/// `C / Σ cpu_per_event` events/s, and the stage with the largest CPU per event is the first to
/// run out (on a machine of its own it would pass `C / its cpu_per_event`). A configuration that
/// was not CPU-bound here was limited by waiting (commits, round trips, ordering): more cores do
/// not raise that, so its measured rate caps the prediction. The model assumes the work spreads
/// over the cores and costs the same CPU per event there: a ceiling, not a promise.
#[derive(Debug, Clone, PartialEq)]
pub struct CapacityModel {
    /// CPU seconds per event of each stage.
    pub stages: Vec<(String, f64)>,
    /// The measured events/s when the configuration was not CPU-bound.
    pub wait_limit: Option<f64>,
}

/// A predicted rate and what limits it.
#[derive(Debug, Clone, PartialEq)]
pub struct Prediction {
    pub per_sec: f64,
    /// True when the measured, wait-limited rate is the lower of the two.
    pub waits: bool,
}

impl CapacityModel {
    /// From CPU seconds per 1,000 events per group (the load generator and negligible stages
    /// left out), the configuration's verdict and its measured events/s.
    pub fn new(cpu_per_1000: &CpuUse, verdict: &Verdict, measured_per_sec: f64) -> Self {
        let stages: Vec<(String, f64)> = cpu_per_1000
            .0
            .iter()
            .filter(|(group, _)| group.as_str() != LOAD)
            .map(|(group, secs)| (group.clone(), secs / 1000.0))
            .collect();
        let total: f64 = stages.iter().map(|(_, s)| s).sum();
        Self {
            stages: stages
                .into_iter()
                .filter(|(_, s)| *s > 0.0 && *s >= NEGLIGIBLE_STAGE_SHARE * total)
                .collect(),
            wait_limit: (!verdict.cpu_bound()).then_some(measured_per_sec),
        }
    }

    /// CPU seconds per event of the whole pipeline.
    pub fn total(&self) -> f64 {
        self.stages.iter().map(|(_, s)| s).sum()
    }

    /// Events/s on a machine of `cores` cores shared by every stage.
    pub fn predict(&self, cores: f64) -> Prediction {
        let cpu = if self.total() > 0.0 {
            cores / self.total()
        } else {
            f64::INFINITY
        };
        match self.wait_limit {
            Some(limit) if limit < cpu => Prediction {
                per_sec: limit,
                waits: true,
            },
            _ => Prediction {
                per_sec: cpu,
                waits: false,
            },
        }
    }

    /// The stage with the most CPU per event and its share of the pipeline's CPU.
    pub fn bottleneck(&self) -> Option<(&str, f64)> {
        let total = self.total();
        self.stages
            .iter()
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(stage, s)| (stage.as_str(), s / total))
    }
}

impl fmt::Display for Prediction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.per_sec.is_finite() {
            write!(f, "{:.0}", self.per_sec)?;
        } else {
            write!(f, "–")?;
        }
        if self.waits {
            write!(f, " (waits)")?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Measurements

/// The whole path on `shards` order databases: orders-svc with `SHARDS`, one relay-svc relaying
/// all of them (`RELAY_SHARDS`) and one mail-svc: `writers` closed-loop Upsert clients for
/// `secs`, then until mail-svc has processed every event (the shards' seqs overlap: mail-svc
/// keys them by shard).
pub async fn shard_writes(shards: usize, secs: f64, writers: usize) -> anyhow::Result<ScalingRun> {
    static BASE: AtomicI64 = AtomicI64::new(1_000_000);
    let base = BASE.fetch_add(100_000_000, Ordering::Relaxed);
    let mut cfg = StackConfig::new("bench");
    cfg.relays = 1;
    cfg.mails = 1;
    cfg.shards = shards;
    cfg.rust_log = "warn".into();
    let mut stack = Stack::start(cfg).await?;
    let mut mail = stack.mail_client(0).await?;
    let mut clients = Vec::new();
    for _ in 0..writers {
        clients.push(stack.orders_client().await?);
    }

    let next = Arc::new(AtomicI64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let (committed, errors) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let meter = stack.cpu_meter();
    let before = meter.sample();
    let started = Instant::now();
    let mut tasks = Vec::new();
    for mut client in clients {
        let (next, stop, committed, errors) = (
            next.clone(),
            stop.clone(),
            committed.clone(),
            errors.clone(),
        );
        tasks.push(tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let i = next.fetch_add(1, Ordering::Relaxed);
                match client.upsert(request_for(base, i)).await {
                    Ok(_) => committed.fetch_add(1, Ordering::Relaxed),
                    Err(_) => errors.fetch_add(1, Ordering::Relaxed),
                };
            }
        }));
    }
    tokio::time::sleep(Duration::from_secs_f64(secs)).await;
    stop.store(true, Ordering::Relaxed);
    for t in tasks {
        t.await?;
    }
    let load_secs = started.elapsed();
    let events = committed.load(Ordering::Relaxed);
    anyhow::ensure!(
        errors.load(Ordering::Relaxed) == 0,
        "{} upserts failed",
        errors.load(Ordering::Relaxed)
    );
    loop {
        let processed = mail
            .get_status(outbox_proto::mail::v1::GetStatusRequest {})
            .await?
            .into_inner()
            .processed;
        if processed >= events {
            break;
        }
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(600),
            "stalled with {processed} of {events} events mailed"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let through = Summary::new(events, started.elapsed(), Vec::new());
    let after = meter.sample();
    stack.stop().await;
    for url in stack.orders_shard_urls.iter().chain([&stack.mail_db_url]) {
        drop_database(url).await;
    }
    Ok(ScalingRun {
        through,
        upserts: Some(Summary::new(events, load_secs, Vec::new())),
        cpu: after.since(&before),
        machine_busy_secs: after.machine_busy_since(&before),
    })
}

// ---------------------------------------------------------------------------------------------
// The tables (markdown, so docs/BENCHMARKS.md takes them as printed)

/// `6311 (6161–6343)`: median and range, or the median alone for one run.
fn figure(s: Spread, runs: usize) -> String {
    if runs > 1 {
        format!("{:.0} ({:.0}–{:.0})", s.median, s.min, s.max)
    } else {
        format!("{:.0}", s.median)
    }
}

/// The groups with CPU in any configuration, the load generator last.
fn groups(configs: &[ScalingConfig]) -> Vec<String> {
    let all = CpuUse::sum(configs.iter().flat_map(|c| c.runs.iter().map(|r| &r.cpu)));
    let mut groups: Vec<String> = all
        .0
        .into_iter()
        .filter(|(g, secs)| *secs > 0.0 && g != LOAD)
        .map(|(g, _)| g)
        .collect();
    groups.push(LOAD.into());
    groups
}

/// The configuration with one instance (or the smallest), whose figure the others compare with.
fn single(configs: &[ScalingConfig]) -> Option<&ScalingConfig> {
    configs.iter().min_by_key(|c| c.n)
}

fn vs_single(value: f64, single: f64) -> String {
    if single > 0.0 {
        format!("{:.0}%", 100.0 * value / single)
    } else {
        "–".into()
    }
}

/// The CPU cells of one row: milliseconds per 1,000 events (= µs per event) of each group.
fn cpu_cells(config: &ScalingConfig, groups: &[String]) -> String {
    let cpu = config.cpu_per_1000();
    groups
        .iter()
        .map(|g| format!(" {:.0} |", 1000.0 * cpu.0.get(g).copied().unwrap_or(0.0)))
        .collect()
}

fn cpu_headings(groups: &[String]) -> (String, String) {
    let heads: String = groups.iter().map(|g| format!(" {g} ms |")).collect();
    let rule: String = groups.iter().map(|_| "---:|").collect();
    (heads, rule)
}

/// The capacity model of each configuration for each of `cores`.
fn capacity_table(
    out: &mut String,
    unit: &str,
    configs: &[ScalingConfig],
    cores: &[usize],
    here: usize,
) {
    use std::fmt::Write;
    let heads: String = cores.iter().map(|c| format!(" {c} cores |")).collect();
    let rule: String = cores.iter().map(|_| "---:|").collect();
    let _ = writeln!(
        out,
        "\ncapacity model: events/s on a machine of C cores shared by every stage = C / CPU per \
         event (µs, this machine's {here} cores measured); \"(waits)\": not CPU-bound here, the \
         measured rate caps it\n"
    );
    let _ = writeln!(
        out,
        "| {unit} | CPU µs per event | first bottleneck |{heads}"
    );
    let _ = writeln!(out, "|---:|---:|---|{rule}");
    for c in configs {
        let model = CapacityModel::new(&c.cpu_per_1000(), &c.verdict(here), c.per_sec().median);
        let bottleneck = model.bottleneck().map_or("–".into(), |(stage, share)| {
            format!("{stage} ({:.0}% of the CPU)", 100.0 * share)
        });
        let cells: String = cores
            .iter()
            .map(|&n| format!(" {} |", model.predict(n as f64)))
            .collect();
        let _ = writeln!(
            out,
            "| {} | {:.0} | {bottleneck} |{cells}",
            c.n,
            1e6 * model.total()
        );
    }
}

/// Section 6 as markdown tables.
pub fn table(s: &Scaling) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    if !s.mail.is_empty() {
        let runs = s.mail[0].runs.len();
        let groups = groups(&s.mail);
        let (heads, rule) = cpu_headings(&groups);
        let one = single(&s.mail).map_or(0.0, |c| c.per_sec().median);
        let _ = writeln!(
            out,
            "\n6a. scaling: mail-svc instances on one pre-loaded queue ({} events, one mail database); \
             cpu: ms per 1,000 events\n",
            s.mail_events
        );
        let _ = writeln!(
            out,
            "| mail-svc instances | mails/s | vs 1 |{heads} saturates |"
        );
        let _ = writeln!(out, "|---:|---:|---:|{rule}---|");
        for c in &s.mail {
            let _ = writeln!(
                out,
                "| {} | {} | {} |{} {} |",
                c.n,
                figure(c.per_sec(), runs),
                vs_single(c.per_sec().median, one),
                cpu_cells(c, &groups),
                c.verdict(s.cores)
            );
        }
        capacity_table(
            &mut out,
            "mail-svc instances",
            &s.mail,
            &s.model_cores,
            s.cores,
        );
    }
    if !s.shards.is_empty() {
        let runs = s.shards[0].runs.len();
        let groups = groups(&s.shards);
        let (heads, rule) = cpu_headings(&groups);
        let one = single(&s.shards).map_or(0.0, |c| c.per_sec().median);
        let _ = writeln!(
            out,
            "\n6b. scaling: order shards, the whole path ({}s of Upsert from {} closed-loop \
             writers; orders-svc `SHARDS` and one relay-svc `RELAY_SHARDS` over N databases, one \
             mail-svc; mailed/s until mail-svc processed every event); cpu: ms per 1,000 \
             events\n",
            s.shard_secs, s.shard_writers
        );
        let _ = writeln!(
            out,
            "| shards | Upsert/s | mailed/s | vs 1 |{heads} saturates |"
        );
        let _ = writeln!(out, "|---:|---:|---:|---:|{rule}---|");
        for c in &s.shards {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |{} {} |",
                c.n,
                figure(c.upserts_per_sec(), runs),
                figure(c.per_sec(), runs),
                vs_single(c.per_sec().median, one),
                cpu_cells(c, &groups),
                c.verdict(s.cores)
            );
        }
        capacity_table(&mut out, "shards", &s.shards, &s.model_cores, s.cores);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(groups: &[(&str, f64)]) -> CpuUse {
        CpuUse(groups.iter().map(|(g, s)| (g.to_string(), *s)).collect())
    }

    #[test]
    fn the_verdict_names_a_busy_machine_and_the_largest_group() {
        // (cpu per group over 10 s on 2 cores, machine busy seconds) → cpu-bound?, top group.
        let cases = [
            // Our processes alone fill both cores.
            (
                cpu(&[("postgres", 10.0), ("mail-svc", 4.0), ("load", 4.0)]),
                18.5,
                true,
                "postgres",
            ),
            // Ours fill half; other people's builds fill the rest: still no CPU to spare.
            (
                cpu(&[("rabbitmq", 6.0), ("relay-svc", 4.0)]),
                19.0,
                true,
                "rabbitmq",
            ),
            // Half the machine idle: something other than CPU limits the stage.
            (
                cpu(&[("postgres", 3.0), ("orders-svc", 5.0)]),
                9.0,
                false,
                "orders-svc",
            ),
            // Just under the line.
            (cpu(&[("postgres", 16.0)]), 16.9, false, "postgres"),
        ];
        for (cpu, machine, bound, top) in cases {
            let v = Verdict::of(&cpu, machine, 10.0, 2);
            assert_eq!(v.cpu_bound(), bound, "{v}");
            assert_eq!(v.top.as_ref().map(|t| t.0.as_str()), Some(top), "{v}");
            let text = v.to_string();
            assert_eq!(text.starts_with("machine CPU-bound"), bound, "{text}");
            assert!(text.contains(&format!("most CPU: {top}")), "{text}");
        }
    }

    #[test]
    fn the_verdict_splits_ours_from_others_and_survives_nothing_measured() {
        let v = Verdict::of(&cpu(&[("postgres", 6.0), ("load", 2.0)]), 18.0, 10.0, 2);
        assert_eq!((v.machine, v.ours), (0.9, 0.4));
        assert_eq!(v.top, Some(("postgres".into(), 0.75)));
        assert!(
            v.to_string()
                .contains("90% of 2 cores busy (ours 40%, others 50%)"),
            "{v}"
        );
        // Ours read a hair above the machine's counter: never "others -1%".
        let v = Verdict::of(&cpu(&[("postgres", 10.2)]), 10.0, 10.0, 2);
        assert_eq!(v.machine, v.ours);
        let v = Verdict::of(&CpuUse::default(), 0.0, 0.0, 2);
        assert_eq!((v.machine, v.ours, v.top.clone()), (0.0, 0.0, None));
        assert!(!v.cpu_bound());
    }

    fn bound(cpu_bound: bool) -> Verdict {
        Verdict {
            cores: 2,
            machine: if cpu_bound { 0.95 } else { 0.5 },
            ours: 0.5,
            top: None,
        }
    }

    #[test]
    fn the_model_divides_cores_by_cpu_per_event() {
        // Seconds per 1,000 events: postgres 0.2, rabbitmq 0.05, mail-svc 0.03; the load
        // generator and a negligible idle service are left out.
        let cpu = cpu(&[
            ("postgres", 0.2),
            ("rabbitmq", 0.05),
            ("mail-svc", 0.03),
            ("orders-svc", 0.0001),
            ("load", 0.5),
        ]);
        let model = CapacityModel::new(&cpu, &bound(true), 5000.0);
        let stages: Vec<&str> = model.stages.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(stages, ["mail-svc", "postgres", "rabbitmq"]);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-6 * b.abs().max(1.0);
        assert!(close(model.total(), 0.28e-3));
        // 8 cores shared by all stages: 8 / 0.28 ms = 28,571/s; CPU-bound here, so no cap.
        let p = model.predict(8.0);
        assert!(close(p.per_sec, 8.0 / 0.28e-3) && !p.waits, "{p:?}");
        // Four times the cores, four times the events.
        assert!(close(model.predict(32.0).per_sec, 4.0 * p.per_sec));
        let (stage, share) = model.bottleneck().expect("a bottleneck");
        assert_eq!(stage, "postgres");
        assert!(close(share, 0.2 / 0.28));
    }

    #[test]
    fn a_configuration_that_waited_is_capped_at_its_measured_rate() {
        // 0.1 ms per event: 20,000/s on 2 cores by CPU, but it passed 3,000/s with cores to spare.
        let model = CapacityModel::new(&cpu(&[("postgres", 0.1)]), &bound(false), 3000.0);
        for cores in [2.0, 32.0] {
            let p = model.predict(cores);
            assert_eq!((p.per_sec, p.waits), (3000.0, true));
            assert_eq!(p.to_string(), "3000 (waits)");
        }
        // Below the cap the CPU decides: 0.1 core passes 1,000/s.
        let p = model.predict(0.1);
        assert!(!p.waits && (p.per_sec - 1000.0).abs() < 1e-6, "{p:?}");
    }

    #[test]
    fn an_empty_model_predicts_nothing_rather_than_dividing_by_zero() {
        let model = CapacityModel::new(&cpu(&[("load", 1.0)]), &bound(true), 0.0);
        assert!(model.stages.is_empty());
        assert!(model.bottleneck().is_none());
        assert_eq!(model.predict(8.0).per_sec, f64::INFINITY);
        assert_eq!(model.predict(8.0).to_string(), "–");
    }

    #[test]
    fn rows_compare_with_the_single_configuration() {
        let run = |per_sec: f64, secs: f64| ScalingRun {
            through: Summary::new(
                (per_sec * secs) as u64,
                Duration::from_secs_f64(secs),
                vec![],
            ),
            upserts: None,
            cpu: cpu(&[("postgres", 0.8 * secs), ("mail-svc", 0.2 * secs)]),
            machine_busy_secs: 1.9 * secs,
        };
        let scaling = Scaling {
            cores: 2,
            model_cores: vec![2, 8],
            mail_events: 1000,
            mail: vec![
                ScalingConfig {
                    n: 1,
                    runs: vec![run(1000.0, 1.0)],
                },
                ScalingConfig {
                    n: 2,
                    runs: vec![run(1500.0, 1.0)],
                },
            ],
            ..Default::default()
        };
        let text = table(&scaling);
        assert!(text.contains("| 2 | 1500 | 150% |"), "{text}");
        assert!(text.contains("machine CPU-bound"), "{text}");
        assert!(
            text.contains("| 1 | 1000 | postgres (80% of the CPU) |"),
            "{text}"
        );
        assert!(!text.contains("6b."), "{text}");
    }
}
