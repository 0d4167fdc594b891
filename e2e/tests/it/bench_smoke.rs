//! The benchmark cannot rot: every section runs with tiny sizes, twice, against the real stack,
//! and the report holds each run, each stage's CPU split and a table naming every section.
//! Nothing here looks at speed (this machine is noisy; figures belong in the bench's own output).
//! The comparison with the last recorded revision is checked on this run against itself, written
//! to a baseline file and read back (the structure only: which figures, which sections).

use e2e::bench::{self, Baseline, BenchOptions};

/// Each measurement once: the suite checks that every section runs and records its figures, and
/// the bench's CPU is the suite's (the runs' median and spread have a unit test of their own,
/// `spread_is_the_median_and_range_of_the_runs`).
const RUNS: usize = 1;

/// Every section's tiny sizes.
fn tiny(sections: Vec<u8>) -> BenchOptions {
    BenchOptions {
        write_secs: 0.3,
        concurrency: vec![1, 4],
        events: 300,
        orders: 30,
        window: 64,
        prefetch: 64,
        loads: vec![50],
        e2e_secs: 0.5,
        max_writers: 4,
        idle_secs: 0.5,
        runs: RUNS as u32,
        quick: false,
        mail_instances: vec![1, 2],
        shards: vec![1, 2],
        model_cores: vec![2, 8],
        cost_events: 600,
        cost_round: 300,
        probe_secs: 0.3,
        mail_backlog: 300,
        audit_aggregates: 2_000,
        console_orders: 2_000,
        fleet_databases: 6,
        fleet_relays: 2,
        fleet_backlog: 500,
        fleet_rate: 30.0,
        fleet_secs: 2.0,
        fleet_lease_secs: 2,
        sections,
        json: std::env::temp_dir().join("unused.json"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_section_runs_with_tiny_sizes() {
    let opts = tiny(vec![1, 2, 3, 4, 5, 6, 7, 8]);
    let report = bench::run(&opts).await.expect("the bench runs");

    assert_eq!(report.write_path.len(), 2);
    for w in &report.write_path {
        assert_eq!((w.ceiling.runs.len(), w.service.runs.len()), (RUNS, RUNS));
        // pgbench ran orders-svc's transaction beside it (deploy/ensure-test-tools.sh installs it).
        let pgbench = w.pgbench.as_ref().expect("pgbench ran (is it installed?)");
        assert_eq!(pgbench.runs.len(), RUNS);
        assert!(pgbench.runs.iter().all(|r| r.ops > 0 && r.p50_ms > 0.0));
        assert!(pgbench.cpu_per_1000().0.contains_key("pgbench"));
        assert!(w.service.runs.iter().all(|r| r.ops > 0 && r.p50_ms > 0.0));
        // The service's own process is measured next to PostgreSQL and the load generator.
        let cpu = w.service.cpu_per_1000();
        for group in ["orders-svc", "postgres", "rabbitmq", "load"] {
            assert!(cpu.0.contains_key(group), "{group} missing in {cpu:?}");
        }
        assert!(cpu.0["postgres"] > 0.0, "{cpu:?}");
    }
    for (stage, pair, svc) in [
        ("relay drain", report.relay_drain.as_ref(), "relay-svc"),
        ("consume", report.consume.as_ref(), "mail-svc"),
    ] {
        let pair = pair.unwrap_or_else(|| panic!("{stage} measured"));
        assert_eq!(pair.service.runs.len(), RUNS, "{stage}");
        assert!(pair.service.runs.iter().all(|r| r.ops == 300), "{stage}");
        assert!(pair.service.cpu_per_1000().0[svc] > 0.0, "{stage}");
        assert!(pair.ceiling.cpu_per_1000().0["rabbitmq"] > 0.0, "{stage}");
    }
    // One offered load and the maximum; every committed event was mailed.
    assert_eq!(report.end_to_end.len(), 2);
    for e in &report.end_to_end {
        assert_eq!(e.runs.len(), RUNS);
        for run in &e.runs {
            assert!(run.commit_to_mail.ops > 0);
            assert_eq!(run.commit_to_mail.ops, run.commit_to_publish.ops);
        }
        let cpu = e.cpu_per_1000();
        for group in ["orders-svc", "relay-svc", "mail-svc"] {
            assert!(cpu.0[group] > 0.0, "{group} in {cpu:?}");
        }
    }
    assert!(report.idle.is_some());
    // The audit: the maximum with and without it, every event mailed; its passes
    // timed at 2,000 orders next to the raw reads.
    let audit = report.audit.as_ref().expect("the audit's cost measured");
    assert_eq!((audit.without.len(), audit.with.len()), (RUNS, RUNS));
    for run in audit.without.iter().chain(&audit.with) {
        assert!(run.commit_to_mail.ops > 0);
        assert_eq!(run.commit_to_mail.ops, run.commit_to_publish.ops);
    }
    assert_eq!(audit.aggregates, 2_000);
    assert_eq!(audit.incremental_ms.len(), 5);
    assert!(audit.full_secs > 0.0 && audit.raw_slice_ms > 0.0);
    // Scaling: both configurations of each; every shard configuration wrote and relayed events,
    // and its CPU includes the relay's.
    let scaling = report.scaling.as_ref().expect("scaling measured");
    assert_eq!((scaling.mail.len(), scaling.shards.len()), (2, 2));
    for c in scaling.mail.iter().chain(&scaling.shards) {
        assert_eq!(c.runs.len(), RUNS, "n={}", c.n);
        assert!(c.runs.iter().all(|r| r.through.ops > 0), "n={}", c.n);
    }
    for c in &scaling.shards {
        assert!(c.runs.iter().all(|r| r.upserts.is_some()));
        assert!(
            c.cpu_per_1000().0["relay-svc"] > 0.0,
            "{:?}",
            c.cpu_per_1000()
        );
    }
    for c in &scaling.mail {
        assert_eq!(c.runs[0].through.ops, 300);
    }

    // Cost vs work done: two rounds behind the pin, each published in full; both probes'
    // events arrived; the soak's sizes name the outbox; mail-svc sent every mail.
    let cost = report.cost.as_ref().expect("cost measured");
    assert_eq!(cost.pinned.rounds.len(), 2);
    assert!(cost.pinned.rounds.iter().all(|r| r.per_sec > 0.0));
    // A 300-event round can fall between two clock ticks of one group (CI saw postgres at 0 s);
    // the rounds together always spend something, and every group is named.
    assert!(
        cost.pinned
            .rounds
            .iter()
            .all(|r| r.cpu.0.contains_key("postgres"))
    );
    assert!(
        cost.pinned
            .rounds
            .iter()
            .flat_map(|r| r.cpu.0.values())
            .sum::<f64>()
            > 0.0
    );
    assert!(cost.pinned.probe_unpinned.ops > 0 && cost.pinned.probe_pinned.ops > 0);
    // Every row of the rounds was relayed and deleted, and the pin kept every one from vacuum.
    assert!(cost.pinned.dead_rows >= 600, "{}", cost.pinned.dead_rows);
    assert_eq!(cost.soak.events, 600);
    let outbox = cost.soak.sizes.iter().find(|t| t.table == "outbox");
    assert!(outbox.is_some_and(|t| t.after_first > 0 && t.at_end > 0));
    assert_eq!((cost.mail.steady.ops, cost.mail.backlog.ops), (30, 300));

    // Every section's key figures, recorded as a baseline file and compared with this run: every
    // figure in both, none new or missing, and the comparison printed after the table.
    let figures = bench::figures(&report);
    for name in [
        "write.c4.ratio_to_ceiling",
        "write.c4.ratio_to_pgbench",
        "write.c1.p50_ms",
        "write.c1.cpu.postgres",
        "drain.ratio",
        "consume.ratio",
        "e2e.50.commit_to_publish.p50_ms",
        "e2e.max.commit_to_mail.p99_ms",
        "e2e.max.per_sec",
        "e2e.50.cpu.postgres",
        "idle.relay.queries_per_sec",
        "scaling.shards.n2.per_sec",
        "audit.with_over_without",
    ] {
        assert!(figures.contains_key(name), "{name} missing in {figures:?}");
    }
    let args = vec!["--sections".to_owned(), "1,2,3,4,5,6,7,8".to_owned()];
    let path = std::env::temp_dir()
        .join(outbox_testkit::unique("bench-smoke"))
        .join("last.json");
    Baseline::of(&report, args.clone()).write(&path).unwrap();
    let last = Baseline::read(&path)
        .unwrap()
        .expect("the baseline just written");
    std::fs::remove_dir_all(path.parent().unwrap()).unwrap();
    let mut report = report;
    report.comparison = Some(bench::compare(&last, &Baseline::of(&report, args)));
    let comparison = report.comparison.as_ref().unwrap();
    assert_eq!(comparison.rows.len(), figures.len());
    assert!(comparison.new.is_empty() && comparison.missing.is_empty());
    assert!(comparison.notes.is_empty(), "{:?}", comparison.notes);
    assert!(comparison.worse().next().is_none());

    let table = bench::table(&report);
    assert!(table.contains("pgbench, same transaction"), "{table}");
    assert!(table.contains("e2e.max.cpu.postgres"), "{table}");
    for heading in [
        "1. write path",
        "2. relay drain",
        "3. consume path",
        "4. end to end",
        "5. idle cost",
        "6a. scaling",
        "6b. scaling",
        "capacity model",
        "7a. cost vs work done",
        "7b. cost vs work done",
        "7c. mail-svc",
        "8. the audit",
        "cpu s per 1,000",
        "vs last revision",
    ] {
        assert!(table.contains(heading), "{heading} missing in\n{table}");
    }
    println!("{table}");
}

#[test]
fn quick_keeps_every_section_and_shrinks_the_sizes() {
    use clap::Parser;
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        options: BenchOptions,
    }
    let full = Cli::parse_from(["bench"]).options;
    let quick = Cli::parse_from(["bench", "--quick"]).options.quick();
    assert_eq!(full.sections, quick.sections);
    assert_eq!(full.runs, quick.runs);
    assert!(quick.events * 10 <= full.events);
    assert!(quick.write_secs < full.write_secs && quick.e2e_secs < full.e2e_secs);
    assert!(Cli::try_parse_from(["bench", "--runs", "0"]).is_err());
}

/// Section 10 at a tiny size (its own test: it starts its own relays on databases of its own):
/// a fleet of 2 relays over 6 databases, one of them with a backlog, an instance killed and a new
/// one joining; every event published once, in order, and each figure of the table measured.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fleet_section_runs_with_tiny_sizes() {
    let opts = tiny(vec![10]);
    let report = bench::run(&opts).await.expect("the fleet section runs");
    let fleet = report.fleet.expect("the fleet section measured");
    println!("{}", fleet.table());
    assert_eq!((fleet.databases, fleet.relays), (6, 2));
    // A row the killed instance published but had not deleted may be published again
    // (at-least-once; consumers drop it by seq): counted, not failed.
    assert_eq!((fleet.lost, fleet.misordered), (0, 0), "{fleet:?}");
    // The backlog and the traffic arrived, and both kinds of database had rows measured.
    assert!(fleet.published > 500, "{fleet:?}");
    assert!(fleet.quiet.ops > 0 && fleet.noisy.ops > 0, "{fleet:?}");
    // Each database was owned by an instance holding connections to it, and only to it.
    assert!(fleet.connections_min >= 1, "{fleet:?}");
    assert!(
        bench::table(&report_with(fleet)).contains("10. the relay fleet"),
        "the table names the section"
    );
}

fn report_with(fleet: bench::FleetCost) -> bench::BenchReport {
    bench::BenchReport {
        fleet: Some(fleet),
        ..Default::default()
    }
}
