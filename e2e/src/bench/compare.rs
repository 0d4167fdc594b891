//! Each run against the last recorded revision: the report distilled into a flat set of named key
//! figures ([`figures`]), the baseline file that keeps the last recorded revision's figures
//! ([`Baseline`], `docs/bench/last.json` by default), and the comparison of the two
//! ([`compare`], printed by [`render`]) with a `WORSE` marker where a figure moved the wrong way
//! by more than its kind's noise allowance ([`Kind`]).
//!
//! The end-to-end path once got 3x slower over two days without anyone noticing; PostgreSQL's CPU
//! per 1,000 events at 100/s went from about 1 s to 7.7 s. CPU per event is the figure a noisy
//! machine disturbs least, so every stage's CPU per 1,000 events is a key figure, per process
//! group.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use anyhow::Context;
use serde::{Deserialize, Serialize};

use super::report::{BenchReport, Runs, ratio_spread};
use crate::{cpu::CpuUse, stats::Spread};

/// What a figure measures, which decides its direction and how far it may move the wrong way
/// before the comparison calls it worse (the noise of a shared 2-core machine between two runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Events/s, or a stage's ratio to its ceiling: higher is better; worse when it drops by more
    /// than 20 %.
    Rate,
    /// Milliseconds: lower is better; worse beyond 1.5x (and at least [`LATENCY_FLOOR_MS`]).
    Latency,
    /// CPU seconds per 1,000 events, or queries/s of an idle stack: lower is better; worse beyond
    /// 1.5x (and at least [`COST_FLOOR`]).
    Cost,
}

/// A rate more than 20 % below the last one is worse.
pub const RATE_ALLOWANCE: f64 = 0.8;
/// A latency or a cost more than 1.5 times the last one is worse.
pub const COST_ALLOWANCE: f64 = 1.5;
/// Latencies below this are too small to judge (a scheduler tick moves them by more than 1.5x).
pub const LATENCY_FLOOR_MS: f64 = 0.5;
/// Costs below this (CPU seconds per 1,000 events, idle queries/s) are too small to judge: a
/// process group that hardly takes part in a stage (RabbitMQ on the write path) reads a few
/// clock ticks.
pub const COST_FLOOR: f64 = 0.05;

impl Kind {
    /// Whether a higher value is better.
    pub fn higher_is_better(self) -> bool {
        matches!(self, Kind::Rate)
    }

    /// The verdict on a figure that went from `last` to `this`.
    pub fn verdict(self, last: f64, this: f64) -> Verdict {
        if !(last > 0.0 && this.is_finite()) {
            return Verdict::Same;
        }
        let change = this / last;
        let beyond = |worse_value: f64, floor: f64| worse_value >= floor;
        match self {
            Kind::Rate if change < RATE_ALLOWANCE => Verdict::Worse,
            Kind::Rate if change > 1.0 / RATE_ALLOWANCE => Verdict::Better,
            Kind::Rate => Verdict::Same,
            Kind::Latency | Kind::Cost => {
                let floor = if self == Kind::Latency {
                    LATENCY_FLOOR_MS
                } else {
                    COST_FLOOR
                };
                if change > COST_ALLOWANCE && beyond(this, floor) {
                    Verdict::Worse
                } else if change < 1.0 / COST_ALLOWANCE && beyond(last, floor) {
                    Verdict::Better
                } else {
                    Verdict::Same
                }
            }
        }
    }
}

/// One key figure: the median over the runs, and its kind.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    pub value: f64,
    pub kind: Kind,
}

/// Key figures by name, e.g. `write.c32.ratio_to_ceiling`, `e2e.100.cpu.postgres`.
pub type Figures = BTreeMap<String, Figure>;

/// The key figures of a report, for the sections that ran: medians over the runs; CPU seconds per
/// 1,000 events per process group over all runs together.
pub fn figures(r: &BenchReport) -> Figures {
    let mut f = Figures::new();
    let mut put = |name: String, value: f64, kind: Kind| {
        if value.is_finite() {
            f.insert(name, Figure { value, kind });
        }
    };
    let cpu = |put: &mut dyn FnMut(String, f64, Kind), prefix: &str, cpu: &CpuUse| {
        for (group, secs) in &cpu.0 {
            put(format!("{prefix}.cpu.{group}"), *secs, Kind::Cost);
        }
    };
    let median = |s: Spread| s.median;
    for w in &r.write_path {
        let p = format!("write.c{}", w.concurrency);
        let service = &w.service;
        put(
            format!("{p}.per_sec"),
            median(service.spread(|s| s.per_sec)),
            Kind::Rate,
        );
        put(
            format!("{p}.p50_ms"),
            median(service.spread(|s| s.p50_ms)),
            Kind::Latency,
        );
        put(
            format!("{p}.p99_ms"),
            median(service.spread(|s| s.p99_ms)),
            Kind::Latency,
        );
        put(
            format!("{p}.ratio_to_ceiling"),
            median(ratio_spread(service, &w.ceiling)),
            Kind::Rate,
        );
        if let Some(pgbench) = &w.pgbench {
            put(
                format!("{p}.pgbench.per_sec"),
                median(pgbench.spread(|s| s.per_sec)),
                Kind::Rate,
            );
            put(
                format!("{p}.ratio_to_pgbench"),
                median(ratio_spread(service, pgbench)),
                Kind::Rate,
            );
        }
        cpu(&mut put, &p, &service.cpu_per_1000());
    }
    let pair = |put: &mut dyn FnMut(String, f64, Kind), name: &str, ceiling: &Runs, s: &Runs| {
        put(
            format!("{name}.per_sec"),
            median(s.spread(|s| s.per_sec)),
            Kind::Rate,
        );
        put(
            format!("{name}.ratio"),
            median(ratio_spread(s, ceiling)),
            Kind::Rate,
        );
        cpu(put, name, &s.cpu_per_1000());
    };
    if let Some(p) = &r.relay_drain {
        pair(&mut put, "drain", &p.ceiling, &p.service);
    }
    if let Some(p) = &r.consume {
        pair(&mut put, "consume", &p.ceiling, &p.service);
    }
    for e in &r.end_to_end {
        let load = e
            .offered
            .map_or_else(|| "max".to_owned(), |o| o.to_string());
        let p = format!("e2e.{load}");
        if e.offered.is_none() {
            put(
                format!("{p}.per_sec"),
                median(e.spread(|r| r.achieved_per_sec)),
                Kind::Rate,
            );
        }
        for (stage, pick) in [
            (
                "commit_to_publish",
                (|r: &super::EndToEndRun| &r.commit_to_publish)
                    as fn(&super::EndToEndRun) -> &crate::stats::Summary,
            ),
            ("commit_to_mail", |r| &r.commit_to_mail),
        ] {
            put(
                format!("{p}.{stage}.p50_ms"),
                median(e.spread(|r| pick(r).p50_ms)),
                Kind::Latency,
            );
            put(
                format!("{p}.{stage}.p99_ms"),
                median(e.spread(|r| pick(r).p99_ms)),
                Kind::Latency,
            );
        }
        cpu(&mut put, &p, &e.cpu_per_1000());
    }
    if let Some(i) = &r.idle {
        put(
            "idle.relay.queries_per_sec".into(),
            i.relay_queries_per_sec,
            Kind::Cost,
        );
        put(
            "idle.mail.queries_per_sec".into(),
            i.mail_queries_per_sec,
            Kind::Cost,
        );
    }
    if let Some(s) = &r.scaling {
        for c in &s.mail {
            put(
                format!("scaling.mail.n{}.per_sec", c.n),
                c.per_sec().median,
                Kind::Rate,
            );
        }
        for c in &s.shards {
            put(
                format!("scaling.shards.n{}.per_sec", c.n),
                c.per_sec().median,
                Kind::Rate,
            );
        }
    }
    if let Some(a) = &r.audit {
        let ratios: Vec<f64> = a
            .with
            .iter()
            .zip(&a.without)
            .filter(|(_, wo)| wo.achieved_per_sec > 0.0)
            .map(|(w, wo)| w.achieved_per_sec / wo.achieved_per_sec)
            .collect();
        if !ratios.is_empty() {
            put(
                "audit.with_over_without".into(),
                Spread::of(ratios).median,
                Kind::Rate,
            );
        }
    }
    f
}

/// The default baseline file, relative to the workspace root (where `cargo run` runs the bench).
pub const DEFAULT_BASELINE: &str = "docs/bench/last.json";

/// How a run compares itself with the last recorded revision (the bench binary's flags).
#[derive(Debug, Clone, clap::Args)]
pub struct CompareOptions {
    /// The last recorded revision's key figures, compared with this run's at the end.
    #[arg(long, default_value = DEFAULT_BASELINE)]
    pub baseline: PathBuf,
    /// Compare with nothing.
    #[arg(long, conflicts_with = "record")]
    pub no_baseline: bool,
    /// Keep this run's key figures as the new baseline (written to `--baseline`), after comparing.
    #[arg(long)]
    pub record: bool,
}

/// Flags that do not change what is measured, left out of a baseline's recorded arguments.
const NOT_MEASURED: [&str; 4] = ["--baseline", "--json", "--record", "--no-baseline"];

/// The bench's arguments that decide what it measures: `args` without the program name and
/// without the flags (and values) of `NOT_MEASURED`.
pub fn measured_args(args: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip_value = false;
    for arg in args.into_iter().skip(1) {
        if std::mem::take(&mut skip_value) {
            continue;
        }
        let name = arg.split('=').next().unwrap_or_default();
        if NOT_MEASURED.contains(&name) {
            skip_value = !arg.contains('=') && matches!(name, "--baseline" | "--json");
            continue;
        }
        out.push(arg);
    }
    out
}

/// The last recorded revision: its key figures and where they were measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    /// `git rev-parse --short HEAD`.
    pub revision: String,
    /// Whether the tree had uncommitted changes.
    pub dirty: bool,
    pub date: String,
    pub cores: usize,
    pub cpu: String,
    /// The bench's arguments ([`measured_args`]).
    pub args: Vec<String>,
    pub figures: Figures,
}

impl Baseline {
    /// This run as a baseline: its figures, the machine it ran on and the checkout's revision.
    pub fn of(report: &BenchReport, args: Vec<String>) -> Self {
        let (revision, dirty) = revision();
        Self {
            revision,
            dirty,
            date: report.machine.date.clone(),
            cores: report.machine.cores,
            cpu: report.machine.cpu.clone(),
            args,
            figures: figures(report),
        }
    }

    /// Reads a baseline file; `Ok(None)` when there is none.
    pub fn read(path: &Path) -> anyhow::Result<Option<Self>> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text)
                .with_context(|| format!("reading the baseline {}", path.display()))
                .map(Some),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e).with_context(|| format!("reading the baseline {}", path.display())),
        }
    }

    pub fn write(&self, path: &Path) -> anyhow::Result<()> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, serde_json::to_string_pretty(self)? + "\n")
            .with_context(|| format!("writing the baseline {}", path.display()))
    }

    fn revision_label(&self) -> String {
        if self.dirty {
            format!("{} (uncommitted changes)", self.revision)
        } else {
            self.revision.clone()
        }
    }
}

/// The checkout's short revision and whether its tree is dirty; `unknown` outside a git checkout.
fn revision() -> (String, bool) {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
    };
    match git(&["rev-parse", "--short", "HEAD"]) {
        Some(rev) => {
            let dirty = git(&["status", "--porcelain"]).is_some_and(|s| !s.is_empty());
            (rev, dirty)
        }
        None => ("unknown".into(), false),
    }
}

/// A figure present in both runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub name: String,
    pub last: f64,
    pub this: f64,
    pub kind: Kind,
    pub verdict: Verdict,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Moved the wrong way by more than its kind's allowance.
    Worse,
    /// Moved the right way by more than its kind's allowance.
    Better,
    /// Within the noise.
    Same,
}

/// This run against the last recorded revision.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub revision: String,
    pub dirty: bool,
    pub date: String,
    /// Differences in what was measured, stated above the figures (machine, arguments).
    pub notes: Vec<String>,
    pub rows: Vec<Row>,
    /// Figures of this run the baseline does not have.
    pub new: Vec<String>,
    /// Figures of the baseline this run does not have.
    pub missing: Vec<String>,
}

impl Comparison {
    /// The figures that got worse beyond the noise.
    pub fn worse(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(|r| r.verdict == Verdict::Worse)
    }
}

/// Compares `this` run (as a baseline: its figures, machine and arguments) with the `last`
/// recorded revision.
pub fn compare(last: &Baseline, this: &Baseline) -> Comparison {
    let mut notes = Vec::new();
    if (last.cores, &last.cpu) != (this.cores, &this.cpu) {
        notes.push(format!(
            "different machine: last {} cores {}, this {} cores {}",
            last.cores, last.cpu, this.cores, this.cpu
        ));
    }
    if last.args != this.args {
        notes.push(format!(
            "different arguments: last `{}`, this `{}`",
            last.args.join(" "),
            this.args.join(" ")
        ));
    }
    let rows = this
        .figures
        .iter()
        .filter_map(|(name, f)| {
            let l = last.figures.get(name)?;
            Some(Row {
                name: name.clone(),
                last: l.value,
                this: f.value,
                kind: f.kind,
                verdict: f.kind.verdict(l.value, f.value),
            })
        })
        .collect();
    let only = |a: &Figures, b: &Figures| -> Vec<String> {
        a.keys().filter(|k| !b.contains_key(*k)).cloned().collect()
    };
    Comparison {
        revision: last.revision_label(),
        dirty: last.dirty,
        date: last.date.clone(),
        notes,
        rows,
        new: only(&this.figures, &last.figures),
        missing: only(&last.figures, &this.figures),
    }
}

/// `1,234.5`-free plain figures: enough digits to see a change at any magnitude.
fn value(v: f64) -> String {
    match v.abs() {
        a if a >= 100.0 => format!("{v:.0}"),
        a if a >= 1.0 => format!("{v:.2}"),
        _ => format!("{v:.3}"),
    }
}

/// `+12%`, `-35%`; `x7.7` beyond doubling (a percentage of several hundred reads poorly).
fn change(last: f64, this: f64) -> String {
    if last == 0.0 {
        return if this == 0.0 {
            "0%".into()
        } else {
            "new".into()
        };
    }
    let r = this / last;
    if r >= 2.0 {
        format!("x{r:.1}")
    } else {
        format!("{:+.0}%", 100.0 * (r - 1.0))
    }
}

/// The comparison as text: the section printed after the bench's table.
pub fn render(c: &Comparison) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(out, "\nvs last revision {} ({})", c.revision, c.date);
    for note in &c.notes {
        let _ = writeln!(out, "   NOTE {note}");
    }
    let _ = writeln!(
        out,
        "   {:<46} {:>10} {:>10} {:>8}",
        "figure", "last", "this", "change"
    );
    for r in &c.rows {
        let marker = match r.verdict {
            Verdict::Worse => "  WORSE",
            Verdict::Better => "  better",
            Verdict::Same => "",
        };
        let _ = writeln!(
            out,
            "   {:<46} {:>10} {:>10} {:>8}{marker}",
            r.name,
            value(r.last),
            value(r.this),
            change(r.last, r.this)
        );
    }
    if !c.new.is_empty() {
        let _ = writeln!(out, "   new (not in the last run): {}", c.new.join(", "));
    }
    if !c.missing.is_empty() {
        let _ = writeln!(
            out,
            "   missing (in the last run only): {}",
            c.missing.join(", ")
        );
    }
    let worse = c.worse().count();
    let _ = writeln!(
        out,
        "   {worse} figure(s) WORSE beyond the noise allowance (rates: more than {:.0} % lower; \
         latencies and CPU per event: more than {COST_ALLOWANCE}x higher)",
        100.0 * (1.0 - RATE_ALLOWANCE)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn baseline(figures: &[(&str, f64, Kind)]) -> Baseline {
        Baseline {
            revision: "abc1234".into(),
            dirty: false,
            date: "2026-12-01 01:25 UTC".into(),
            cores: 2,
            cpu: "AMD EPYC".into(),
            args: vec!["--quick".into()],
            figures: figures
                .iter()
                .map(|&(n, value, kind)| (n.to_owned(), Figure { value, kind }))
                .collect(),
        }
    }

    #[test]
    fn a_regression_beyond_the_allowance_is_flagged_an_improvement_and_noise_are_not() {
        let last = baseline(&[
            ("e2e.100.cpu.postgres", 1.0, Kind::Cost),
            ("e2e.max.per_sec", 2500.0, Kind::Rate),
            ("write.c32.ratio_to_ceiling", 1.0, Kind::Rate),
            ("write.c1.p50_ms", 2.0, Kind::Latency),
            ("drain.ratio", 0.6, Kind::Rate),
            ("e2e.100.commit_to_publish.p50_ms", 6.0, Kind::Latency),
            ("consume.cpu.rabbitmq", 0.002, Kind::Cost),
        ]);
        let this = baseline(&[
            // 7.7x: the regression that went unnoticed.
            ("e2e.100.cpu.postgres", 7.7, Kind::Cost),
            // -66 %.
            ("e2e.max.per_sec", 847.0, Kind::Rate),
            // -15 %: within the noise.
            ("write.c32.ratio_to_ceiling", 0.85, Kind::Rate),
            // 1.4x: within the noise.
            ("write.c1.p50_ms", 2.8, Kind::Latency),
            // Improvements.
            ("drain.ratio", 0.9, Kind::Rate),
            ("e2e.100.commit_to_publish.p50_ms", 0.9, Kind::Latency),
            // 5x, but a few clock ticks: below the floor.
            ("consume.cpu.rabbitmq", 0.01, Kind::Cost),
        ]);
        let c = compare(&last, &this);
        let verdict = |name: &str| c.rows.iter().find(|r| r.name == name).unwrap().verdict;
        assert_eq!(verdict("e2e.100.cpu.postgres"), Verdict::Worse);
        assert_eq!(verdict("e2e.max.per_sec"), Verdict::Worse);
        assert_eq!(verdict("write.c32.ratio_to_ceiling"), Verdict::Same);
        assert_eq!(verdict("write.c1.p50_ms"), Verdict::Same);
        assert_eq!(verdict("drain.ratio"), Verdict::Better);
        assert_eq!(verdict("e2e.100.commit_to_publish.p50_ms"), Verdict::Better);
        assert_eq!(verdict("consume.cpu.rabbitmq"), Verdict::Same);
        assert_eq!(c.worse().count(), 2);
        assert!(c.notes.is_empty(), "{:?}", c.notes);

        let text = render(&c);
        assert!(text.contains("vs last revision abc1234 (2026-12-01 01:25 UTC)"));
        let line = |name: &str| text.lines().find(|l| l.contains(name)).unwrap().to_owned();
        assert!(
            line("e2e.100.cpu.postgres").ends_with("x7.7  WORSE"),
            "{text}"
        );
        assert!(line("e2e.max.per_sec").ends_with("-66%  WORSE"), "{text}");
        assert!(!line("write.c32.ratio_to_ceiling").contains("WORSE"));
        assert!(!line("drain.ratio").contains("WORSE"));
        assert!(text.contains("2 figure(s) WORSE"), "{text}");
    }

    #[test]
    fn the_allowance_is_per_kind_and_exact_at_its_edge() {
        assert_eq!(Kind::Rate.verdict(100.0, 80.0), Verdict::Same);
        assert_eq!(Kind::Rate.verdict(100.0, 79.0), Verdict::Worse);
        assert_eq!(Kind::Latency.verdict(2.0, 3.0), Verdict::Same);
        assert_eq!(Kind::Latency.verdict(2.0, 3.1), Verdict::Worse);
        assert_eq!(Kind::Latency.verdict(0.1, 0.4), Verdict::Same);
        assert_eq!(Kind::Cost.verdict(1.0, 1.6), Verdict::Worse);
        // Nothing to compare with: no verdict.
        assert_eq!(Kind::Cost.verdict(0.0, 5.0), Verdict::Same);
        assert_eq!(Kind::Rate.verdict(0.0, 5.0), Verdict::Same);
    }

    #[test]
    fn new_and_missing_figures_and_a_different_machine_are_reported() {
        let last = baseline(&[
            ("write.c1.p50_ms", 2.0, Kind::Latency),
            ("drain.ratio", 0.6, Kind::Rate),
        ]);
        let mut this = baseline(&[
            ("write.c1.p50_ms", 2.0, Kind::Latency),
            ("write.c32.ratio_to_pgbench", 1.07, Kind::Rate),
        ]);
        this.cores = 4;
        this.args = vec!["--sections".into(), "1".into()];
        let c = compare(&last, &this);
        assert_eq!(c.new, ["write.c32.ratio_to_pgbench"]);
        assert_eq!(c.missing, ["drain.ratio"]);
        assert_eq!(c.rows.len(), 1);
        assert_eq!(c.notes.len(), 2, "{:?}", c.notes);
        let text = render(&c);
        assert!(text.contains("NOTE different machine: last 2 cores AMD EPYC, this 4 cores"));
        assert!(text.contains("NOTE different arguments: last `--quick`, this `--sections 1`"));
        assert!(text.contains("new (not in the last run): write.c32.ratio_to_pgbench"));
        assert!(text.contains("missing (in the last run only): drain.ratio"));
    }

    #[test]
    fn the_baseline_file_round_trips_and_a_missing_one_is_none() {
        let dir = std::env::temp_dir().join(outbox_testkit::unique("bench-baseline"));
        let path = dir.join("bench/last.json");
        assert_eq!(Baseline::read(&path).unwrap(), None);
        let mut b = baseline(&[
            ("e2e.100.cpu.postgres", 1.25, Kind::Cost),
            ("e2e.max.per_sec", 2519.0, Kind::Rate),
        ]);
        b.dirty = true;
        b.write(&path).unwrap();
        assert_eq!(Baseline::read(&path).unwrap(), Some(b.clone()));
        assert!(compare(&b, &b).worse().next().is_none());
        std::fs::write(&path, "{").unwrap();
        assert!(Baseline::read(&path).is_err());
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn recorded_arguments_leave_out_the_flags_that_measure_nothing() {
        let args = |s: &str| s.split(' ').map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(
            measured_args(args(
                "bench --quick --record --json out.json --baseline=x.json --sections 1"
            )),
            args("--quick --sections 1")
        );
        assert_eq!(
            measured_args(args("bench --no-baseline --baseline b.json --runs 1")),
            args("--runs 1")
        );
    }
}
