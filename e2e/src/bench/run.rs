//! Runs the selected sections, each configuration once per run.

use super::{
    consume::{consume_ceiling, mail_consume},
    drain::{publish_ceiling, relay_drain},
    end_to_end::end_to_end,
    idle::idle,
    report::{BenchReport, EndToEnd, Pair, Runs, WritePath, machine},
    write::{write_ceiling, write_service},
};
use crate::{
    load::{progress, stack::bench_stack},
    options::BenchOptions,
    scaling::{self, Scaling, ScalingConfig},
};

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
        let pgbench = super::pgbench::find();
        if pgbench.is_none() {
            progress(super::pgbench::MISSING);
        }
        for &c in &opts.concurrency {
            let (mut ceiling, mut service) = (Runs::default(), Runs::default());
            let mut independent = pgbench.as_ref().map(|_| Runs::default());
            for run in runs.clone() {
                progress(format!("1. write path, C={c}, run {run}: database ceiling"));
                ceiling.push(write_ceiling(c, opts.write_secs).await?);
                if let (Some(path), Some(runs)) = (&pgbench, &mut independent) {
                    progress(format!(
                        "1. write path, C={c}, run {run}: pgbench, the same transaction"
                    ));
                    runs.push(super::pgbench::pgbench_ceiling(path, c, opts.write_secs).await?);
                }
                progress(format!("1. write path, C={c}, run {run}: Upsert over gRPC"));
                service.push(write_service(c, opts.write_secs).await?);
            }
            report.write_path.push(WritePath {
                concurrency: c,
                ceiling,
                pgbench: independent,
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
    if on(8) {
        let stack = bench_stack(1, 1).await?;
        report.audit = Some(
            super::audit::audit_cost(
                &stack,
                opts.runs,
                opts.e2e_secs,
                opts.max_writers,
                opts.audit_aggregates,
            )
            .await?,
        );
    }
    if on(10) {
        report.fleet = Some(super::fleet::fleet(&opts).await?);
    }
    if on(9) {
        let stack = bench_stack(1, 1).await?;
        report.console = Some(super::console::console_cost(&stack, opts.console_orders).await?);
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
