//! What one run measured, section by section, and the machine it ran on.

use serde::Serialize;

use crate::{
    cost::Cost,
    cpu::CpuUse,
    scaling::Scaling,
    stats::{Spread, Summary},
};

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
    pub cost: Option<Cost>,
    pub audit: Option<super::AuditCost>,
    pub console: Option<super::ConsoleCost>,
    pub fleet: Option<super::FleetCost>,
    /// This run against the last recorded revision (set by the bench binary).
    pub comparison: Option<super::Comparison>,
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

impl Runs {
    pub(super) fn push(&mut self, (summary, cpu): (Summary, CpuUse)) {
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
    /// pgbench running the same transaction; `None` when pgbench is not installed.
    pub pgbench: Option<Runs>,
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

#[derive(Debug, Clone, Serialize)]
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

pub(super) fn machine() -> Machine {
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
