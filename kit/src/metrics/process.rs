//! The `process_*` figures every Prometheus client library exports, read from `/proc` on each
//! scrape (no background task, nothing stale). Where `/proc` is missing (not Linux) they are
//! left out rather than reported as 0.

use std::fmt::Write as _;

/// The figures, by metric name: the `process_*` metrics every service exports (read by the
/// tests, which check that each is rendered).
pub(crate) const NAMES: &[&str] = &[
    "process_cpu_seconds_total",
    "process_resident_memory_bytes",
    "process_virtual_memory_bytes",
    "process_open_fds",
    "process_max_fds",
    "process_start_time_seconds",
    "process_threads",
];

/// Clock ticks per second in `/proc/<pid>/stat`. The kernel reports these times in USER_HZ,
/// which is 100 on every Linux architecture (the kernel's own HZ may differ; USER_HZ does not).
const USER_HZ: f64 = 100.0;

/// The fields of `/proc/self/stat` that the figures need.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Stat {
    cpu_seconds: f64,
    threads: u64,
    /// Seconds after boot at which the process started.
    start_after_boot: f64,
    virtual_bytes: u64,
}

/// Parses `/proc/<pid>/stat`. The command name (field 2) is in parentheses and may hold spaces
/// or parentheses itself, so the fields are counted from the last `)`.
fn parse_stat(text: &str) -> Option<Stat> {
    let rest = &text[text.rfind(')')? + 1..];
    // After the name: field 3 (state) has index 0, so field N has index N - 3.
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |n: usize| fields.get(n - 3).and_then(|f| f.parse::<u64>().ok());
    let utime = field(14)?;
    let stime = field(15)?;
    Some(Stat {
        cpu_seconds: (utime + stime) as f64 / USER_HZ,
        threads: field(20)?,
        start_after_boot: field(22)? as f64 / USER_HZ,
        virtual_bytes: field(23)?,
    })
}

/// `VmRSS` of `/proc/<pid>/status`, in bytes (the file says kB, meaning KiB).
fn parse_rss(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// `btime` of `/proc/stat`: the boot time, seconds since the epoch.
fn parse_boot_time(stat: &str) -> Option<u64> {
    stat.lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())
}

/// The soft limit on open files from `/proc/<pid>/limits` (`None` when unlimited).
fn parse_max_fds(limits: &str) -> Option<u64> {
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line["Max open files".len()..]
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn push(out: &mut String, name: &str, kind: &str, help: &str, value: impl std::fmt::Display) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} {kind}");
    let _ = writeln!(out, "{name} {value}");
}

/// The figures of this process in Prometheus text format; empty where `/proc` is unreadable.
pub(super) fn render() -> String {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let mut out = String::new();
    let stat = read("/proc/self/stat").and_then(|s| parse_stat(&s));
    if let Some(stat) = stat {
        push(
            &mut out,
            "process_cpu_seconds_total",
            "counter",
            "Total user and system CPU time spent in seconds.",
            stat.cpu_seconds,
        );
        push(
            &mut out,
            "process_virtual_memory_bytes",
            "gauge",
            "Virtual memory size in bytes.",
            stat.virtual_bytes,
        );
        push(
            &mut out,
            "process_threads",
            "gauge",
            "Number of OS threads in the process.",
            stat.threads,
        );
        if let Some(boot) = read("/proc/stat").and_then(|s| parse_boot_time(&s)) {
            push(
                &mut out,
                "process_start_time_seconds",
                "gauge",
                "Start time of the process since unix epoch in seconds.",
                boot as f64 + stat.start_after_boot,
            );
        }
    }
    if let Some(rss) = read("/proc/self/status").and_then(|s| parse_rss(&s)) {
        push(
            &mut out,
            "process_resident_memory_bytes",
            "gauge",
            "Resident memory size in bytes.",
            rss,
        );
    }
    if let Ok(fds) = std::fs::read_dir("/proc/self/fd") {
        push(
            &mut out,
            "process_open_fds",
            "gauge",
            "Number of open file descriptors.",
            fds.count(),
        );
    }
    if let Some(max) = read("/proc/self/limits").and_then(|s| parse_max_fds(&s)) {
        push(
            &mut out,
            "process_max_fds",
            "gauge",
            "Maximum number of open file descriptors.",
            max,
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_fields_are_counted_from_the_last_parenthesis() {
        // Field 14 utime=250, 15 stime=50, 20 threads=7, 22 starttime=12345, 23 vsize=8192.
        let tail = "S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 7 0 12345 8192 300 rest";
        for name in ["relay-svc", "a b", "odd) name (x)"] {
            let stat = parse_stat(&format!("4242 ({name}) {tail}")).expect(name);
            assert_eq!(
                stat,
                Stat {
                    cpu_seconds: 3.0,
                    threads: 7,
                    start_after_boot: 123.45,
                    virtual_bytes: 8192,
                },
                "{name}"
            );
        }
        assert_eq!(parse_stat("4242 (cut) S 1 2"), None, "a short line");
        assert_eq!(parse_stat("no parenthesis"), None);
    }

    #[test]
    fn rss_boot_time_and_fd_limit() {
        assert_eq!(
            parse_rss("Name:\tx\nVmSize:\t  100 kB\nVmRSS:\t  2048 kB\n"),
            Some(2048 * 1024)
        );
        assert_eq!(parse_rss("Name:\tkernel thread\n"), None);
        assert_eq!(
            parse_boot_time("cpu  1 2 3\nbtime 1764547200\nprocesses 9\n"),
            Some(1_764_547_200)
        );
        let limits = "Limit                     Soft Limit           Hard Limit           Units     \n\
                      Max open files            1024                 1048576              files     \n";
        assert_eq!(parse_max_fds(limits), Some(1024));
        let unlimited =
            "Max open files            unlimited            unlimited            files\n";
        assert_eq!(parse_max_fds(unlimited), None);
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn this_process_reports_every_figure() {
        let text = render();
        for &name in NAMES {
            assert!(
                text.contains(&format!("# HELP {name} ")),
                "{name} in {text}"
            );
            let value: f64 = text
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{name} ")))
                .unwrap_or_else(|| panic!("{name} has a sample in {text}"))
                .parse()
                .expect("a number");
            // A fresh test process may not have used a whole tick of CPU yet.
            let floor = if name == "process_cpu_seconds_total" {
                0.0
            } else {
                1.0
            };
            assert!(value >= floor, "{name} = {value}");
        }
    }
}
