//! CPU time per process from `/proc`, so the benchmark shows which resource each stage spends:
//! the service processes (by pid), PostgreSQL (its auxiliary processes plus the backends serving
//! the stage's databases), RabbitMQ (`beam.smp`) and the load generator (this process).
//!
//! Each process is measured against its own earlier figure: a backend that exits during a stage
//! takes only its own share of the stage with it, never a part of the others' (a group total
//! would drop by the exited process's whole life).

use std::{collections::BTreeMap, fs, sync::OnceLock};

use serde::Serialize;

/// Seconds of CPU (user + system) per process group, e.g. `{"mail-svc": 1.2, "postgres": 3.4}`.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct CpuUse(pub BTreeMap<String, f64>);

impl CpuUse {
    /// These seconds scaled to `per` units of work out of `done` (e.g. per 1,000 events).
    pub fn per(&self, done: u64, per: f64) -> CpuUse {
        let scale = if done > 0 { per / done as f64 } else { 0.0 };
        CpuUse(self.0.iter().map(|(k, v)| (k.clone(), v * scale)).collect())
    }

    /// The sum of several measurements, group by group.
    pub fn sum<'a>(all: impl IntoIterator<Item = &'a CpuUse>) -> CpuUse {
        let mut total = BTreeMap::new();
        for cpu in all {
            for (k, v) in &cpu.0 {
                *total.entry(k.clone()).or_insert(0.0) += v;
            }
        }
        CpuUse(total)
    }
}

/// What to measure: named service processes and the databases whose backends count.
#[derive(Debug, Clone, Default)]
pub struct CpuMeter {
    services: Vec<(String, u32)>,
    databases: Vec<String>,
}

/// Cumulative CPU seconds per process (by group and pid) at one instant, and the whole machine's
/// busy seconds (every process, ours and others', over all cores) at the same instant.
#[derive(Debug, Clone)]
pub struct CpuSnapshot(BTreeMap<(String, u32), f64>, f64);

impl CpuMeter {
    pub fn new(services: Vec<(String, u32)>, databases: Vec<String>) -> Self {
        Self {
            services,
            databases,
        }
    }

    /// Reads the current cumulative CPU seconds of every group.
    pub fn sample(&self) -> CpuSnapshot {
        // Both groups are always named, even with no process of theirs (pid 0 is no process).
        let mut processes: BTreeMap<(String, u32), f64> =
            [(("postgres".into(), 0), 0.0), (("rabbitmq".into(), 0), 0.0)].into();
        let mut add = |group: &str, pid: u32| {
            processes.insert((group.into(), pid), process_secs(pid).unwrap_or(0.0));
        };
        for (name, pid) in &self.services {
            add(name, *pid);
        }
        add("load", std::process::id());
        for pid in all_pids() {
            let Some(comm) = read_comm(pid) else { continue };
            match comm.as_str() {
                "postgres" if self.counts_postgres(pid) => add("postgres", pid),
                "beam.smp" => add("rabbitmq", pid),
                _ => {}
            }
        }
        CpuSnapshot(processes, machine_busy_secs().unwrap_or(0.0))
    }

    /// Auxiliary processes (WAL writer, checkpointer, autovacuum, …) always count; a client
    /// backend counts when it serves one of our databases. A backend's title is
    /// `postgres: [<cluster>:] <user> <db> <host>(<port>) <state>`.
    fn counts_postgres(&self, pid: u32) -> bool {
        let Ok(cmdline) = fs::read(format!("/proc/{pid}/cmdline")) else {
            return false;
        };
        let title = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        backend_database(&title).is_none_or(|db| self.databases.iter().any(|d| d == db))
            // The postmaster (`/usr/lib/postgresql/…/postgres -D …`) does no query work.
            && title.starts_with("postgres:")
    }
}

/// The database a client backend serves, from its process title; `None` for auxiliary processes.
fn backend_database(title: &str) -> Option<&str> {
    let words: Vec<&str> = title.split_whitespace().collect();
    let host = words
        .iter()
        .position(|w| *w == "[local]" || (w.contains('(') && w.ends_with(')')))?;
    host.checked_sub(1).map(|i| words[i])
}

impl CpuSnapshot {
    /// `newer`, plus the processes this snapshot saw that `newer` no longer does, at their last
    /// figure: sampling often while a stage runs keeps the share of processes that exit before
    /// its end (the backends of a client that disconnects), up to the last sample.
    pub fn then(mut self, newer: CpuSnapshot) -> CpuSnapshot {
        self.0.extend(newer.0);
        CpuSnapshot(self.0, newer.1)
    }

    /// CPU seconds spent per group between `earlier` and this snapshot.
    /// A process that started since `earlier` counts with all it spent; one that exited is
    /// left out (its last moments are lost, not the other processes' work).
    pub fn since(&self, earlier: &CpuSnapshot) -> CpuUse {
        let mut groups: BTreeMap<String, f64> = BTreeMap::new();
        for ((group, pid), secs) in &self.0 {
            let before = earlier.0.get(&(group.clone(), *pid)).unwrap_or(&0.0);
            // (A pid reused by a new process would read less than before: count nothing.)
            *groups.entry(group.clone()).or_insert(0.0) += (secs - before).max(0.0);
        }
        CpuUse(groups)
    }

    /// Busy CPU seconds of the whole machine between `earlier` and this snapshot: what our
    /// groups spent plus whatever else ran (on a shared machine, other people's builds).
    pub fn machine_busy_since(&self, earlier: &CpuSnapshot) -> f64 {
        (self.1 - earlier.1).max(0.0)
    }
}

/// Busy CPU seconds of the machine since boot, summed over all cores (`/proc/stat`).
fn machine_busy_secs() -> Option<f64> {
    let stat = fs::read_to_string("/proc/stat").ok()?;
    parse_busy_ticks(stat.lines().next()?).map(|t| t as f64 / ticks_per_sec())
}

/// Busy ticks from the `cpu` line of `/proc/stat`: every field but idle (4th) and iowait (5th).
/// guest and guest_nice (9th, 10th) are already counted in user and nice.
fn parse_busy_ticks(line: &str) -> Option<u64> {
    let mut words = line.split_whitespace();
    if words.next()? != "cpu" {
        return None;
    }
    let ticks: Vec<u64> = words.map(str::parse).collect::<Result<_, _>>().ok()?;
    let field = |i: usize| ticks.get(i).copied().unwrap_or(0);
    (ticks.len() >= 4).then(|| (0..8).filter(|i| *i != 3 && *i != 4).map(field).sum())
}

/// Clock ticks per second for `/proc/<pid>/stat` times (`getconf CLK_TCK`, 100 on Linux).
fn ticks_per_sec() -> f64 {
    static TICKS: OnceLock<f64> = OnceLock::new();
    *TICKS.get_or_init(|| {
        std::process::Command::new("getconf")
            .arg("CLK_TCK")
            .output()
            .ok()
            .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
            .unwrap_or(100.0)
    })
}

/// User + system CPU seconds of one process (its threads included).
fn process_secs(pid: u32) -> Option<f64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat_ticks(&stat).map(|t| t as f64 / ticks_per_sec())
}

/// CPU seconds (user + system) of this process's children that have exited and been waited for
/// (`cutime` + `cstime` of `/proc/self/stat`): how a child that is gone by the time of the next
/// sample (pgbench) is measured.
pub fn waited_children_secs() -> f64 {
    fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|stat| parse_children_ticks(&stat))
        .map_or(0.0, |t| t as f64 / ticks_per_sec())
}

/// cutime + cstime (fields 16 and 17) from a `/proc/<pid>/stat` line.
fn parse_children_ticks(stat: &str) -> Option<u64> {
    let after = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    let cutime: u64 = fields.get(13)?.parse().ok()?;
    let cstime: u64 = fields.get(14)?.parse().ok()?;
    Some(cutime + cstime)
}

/// utime + stime from a `/proc/<pid>/stat` line. The command name (field 2) may contain spaces
/// and parentheses, so fields are counted from its closing parenthesis.
fn parse_stat_ticks(stat: &str) -> Option<u64> {
    let after = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // fields[0] is field 3 (state): utime is field 14, stime field 15.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some(utime + stime)
}

fn read_comm(pid: u32) -> Option<String> {
    fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|s| s.trim().to_owned())
}

fn all_pids() -> Vec<u32> {
    fs::read_dir("/proc")
        .map(|dir| {
            dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_after_the_command_name() {
        let stat = "42 (tokio (rt) x) S 1 42 42 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 4 0 100";
        assert_eq!(parse_stat_ticks(stat), Some(325));
        let waited = "42 (bench) S 1 42 42 0 -1 4194560 100 0 0 0 250 75 7 13 20 0 4 0 100";
        assert_eq!(parse_children_ticks(waited), Some(20));
        assert_eq!(parse_stat_ticks("garbage"), None);
    }

    #[test]
    fn this_process_spends_measurable_cpu() {
        // Spins until the meter sees 0.1 s of CPU: on a busy machine 0.1 s of CPU can take
        // much longer than 0.1 s. A meter that never sees it fails at the deadline.
        let meter = CpuMeter::default();
        let before = meter.sample();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let mut x = 0u64;
        loop {
            for _ in 0..1_000_000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            }
            let used = meter.sample().since(&before);
            if used.0["load"] > 0.1 {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "{used:?}");
        }
        std::hint::black_box(x);
    }

    #[test]
    fn backend_titles_name_their_database() {
        let title = "postgres: 15/main: postgres bench_1_2_3 127.0.0.1(5040) idle";
        assert_eq!(backend_database(title), Some("bench_1_2_3"));
        assert_eq!(backend_database("postgres: 15/main: walwriter "), None);
        assert_eq!(
            backend_database("postgres: app db [local] idle"),
            Some("db")
        );
    }

    #[test]
    fn machine_busy_leaves_out_idle_iowait_and_guest() {
        let line = "cpu  100 5 50 1000 20 3 2 1 40 0";
        assert_eq!(parse_busy_ticks(line), Some(161));
        assert_eq!(parse_busy_ticks("cpu0 1 2 3 4"), None);
        assert_eq!(parse_busy_ticks("cpu  1 2"), None);
    }

    #[test]
    fn an_exited_process_takes_only_its_own_share_with_it() {
        let snapshot = |procs: &[(&str, u32, f64)]| {
            CpuSnapshot(
                procs
                    .iter()
                    .map(|(g, pid, secs)| (((*g).to_string(), *pid), *secs))
                    .collect(),
                0.0,
            )
        };
        // A process seen by an earlier sample only keeps its last figure.
        let seen = snapshot(&[("postgres", 7, 1.0), ("postgres", 8, 2.0)])
            .then(snapshot(&[("postgres", 8, 3.0)]));
        assert_eq!(
            seen.since(&snapshot(&[])).0,
            [("postgres".to_owned(), 4.0)].into()
        );
        // Backend 7 (5 s spent before the stage) exits during it; backend 8 spends 0.5 s and
        // backend 9 starts during the stage and spends 0.25 s.
        let before = snapshot(&[("postgres", 7, 5.0), ("postgres", 8, 1.0)]);
        let after = snapshot(&[("postgres", 8, 1.5), ("postgres", 9, 0.25)]);
        assert_eq!(after.since(&before).0["postgres"], 0.75);
    }

    #[test]
    fn per_scales_and_sum_adds() {
        let a = CpuUse([("x".to_string(), 2.0)].into());
        let b = CpuUse([("x".to_string(), 1.0), ("y".to_string(), 1.0)].into());
        let total = CpuUse::sum([&a, &b]);
        assert_eq!(total.0["x"], 3.0);
        assert_eq!(total.per(3000, 1000.0).0["x"], 1.0);
    }
}
