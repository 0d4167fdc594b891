//! The report as text: each section's table, the ceilings next to the services.

use super::report::{BenchReport, Pair, ratio_spread};
use crate::{
    cpu::CpuUse,
    scaling,
    stats::{Spread, Summary},
};

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
            "\n1. write path (one event per call)   ops/s                p50 ms             p99 ms             ratio to SQL / to pgbench"
        );
        if r.write_path.iter().any(|w| w.pgbench.is_none()) {
            let _ = writeln!(out, "   {}", super::pgbench::MISSING);
        }
        for w in &r.write_path {
            let sides = [
                ("SQL transaction (ceiling)", Some(&w.ceiling)),
                ("pgbench, same transaction", w.pgbench.as_ref()),
                ("Upsert over gRPC", Some(&w.service)),
            ];
            for (name, side) in sides {
                let Some(side) = side else { continue };
                let ratios = if std::ptr::eq(side, &w.service) {
                    let mut r = ratio(ratio_spread(&w.service, &w.ceiling), runs);
                    if let Some(pgbench) = &w.pgbench {
                        r = format!("{r} / {}", ratio(ratio_spread(&w.service, pgbench), runs));
                    }
                    r
                } else {
                    String::new()
                };
                let _ = writeln!(
                    out,
                    "   C={:<3} {name:<27} {:<20} {:<18} {:<18} {ratios}",
                    w.concurrency,
                    figure(side.spread(|s| s.per_sec), runs, 0),
                    figure(side.spread(|s| s.p50_ms), runs, 2),
                    figure(side.spread(|s| s.p99_ms), runs, 2),
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
    if let Some(a) = &r.audit {
        audit_table(&mut out, a, runs);
    }
    if let Some(c) = &r.console {
        console_table(&mut out, c);
    }
    if let Some(f) = &r.fleet {
        out.push_str(&f.table());
    }
    if let Some(c) = &r.comparison {
        out.push_str(&super::compare::render(c));
    }
    out
}

/// Section 9: each console page's server time next to its reads' time (median and range of the
/// rounds), against the 100 ms target.
fn console_table(out: &mut String, c: &super::ConsoleCost) {
    use std::fmt::Write;
    let _ = writeln!(
        out,
        "\n9. the console at {} orders, {} dead letters, {} held chains, {} quarantined\n   \
         page                                  server ms            its reads ms",
        c.orders, c.dead_letters, c.held_chains, c.quarantined
    );
    for p in &c.pages {
        let server = Spread::of(p.server_ms.clone());
        let reads = Spread::of(p.queries_ms.clone());
        let _ = writeln!(
            out,
            "   {:<37} {:<20} {}{}",
            p.page,
            figure(server, p.server_ms.len() as u32, 1),
            figure(reads, p.queries_ms.len() as u32, 1),
            if server.median > 100.0 {
                "   over 100 ms"
            } else {
                ""
            }
        );
    }
    let _ = writeln!(
        out,
        "   (`/` shows the sampler's last figures: its reads run once per CONSOLE_REFRESH, however \
         many browsers watch; `/audit` shows the last audit pass)"
    );
}

/// Section 8: the maximum with and without the audit beside it, and a pass at N orders next to
/// the raw reads it is made of.
fn audit_table(out: &mut String, a: &super::AuditCost, runs: u32) {
    use std::fmt::Write;
    let _ = writeln!(
        out,
        "\n8. the audit    achieved/s          commit->publish p99 ms   commit->mail p99 ms"
    );
    for (label, side) in [("without", &a.without), ("with", &a.with)] {
        let e = super::report::EndToEnd {
            offered: None,
            runs: side.clone(),
        };
        let _ = writeln!(
            out,
            "   {label:<12} {:<19} {:<24} {}",
            figure(e.spread(|r| r.achieved_per_sec), runs, 0),
            figure(e.spread(|r| r.commit_to_publish.p99_ms), runs, 2),
            figure(e.spread(|r| r.commit_to_mail.p99_ms), runs, 2),
        );
        let _ = writeln!(out, "      {}", cpu_line(&e.cpu_per_1000()));
    }
    let ratios: Vec<f64> = a
        .with
        .iter()
        .zip(&a.without)
        .filter(|(_, w)| w.achieved_per_sec > 0.0)
        .map(|(w, wo)| w.achieved_per_sec / wo.achieved_per_sec)
        .collect();
    let _ = writeln!(
        out,
        "   with / without: {}",
        ratio(Spread::of(ratios), runs)
    );
    let inc = Spread::of(a.incremental_ms.clone());
    let _ = writeln!(
        out,
        "   one pass at {} orders: incremental ({} changed + {} heads) {} ms; full {:.2} s",
        a.aggregates,
        a.changed_per_pass,
        a.slice,
        figure(inc, a.incremental_ms.len() as u32, 1),
        a.full_secs
    );
    let _ = writeln!(
        out,
        "   raw reads (ceiling): one slice of {} heads + watermarks {:.1} ms; count of every head {:.2} s",
        a.slice, a.raw_slice_ms, a.raw_scan_secs
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::report::Runs;

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
