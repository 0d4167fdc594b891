//! `outboxctl audit`: the completeness audit ([`crate::audit`]), once, or continuously with its
//! figures on `/metrics` (`--watch`).

use std::time::Duration;

use chrono::Utc;
use outbox_ops::settings::ToolSettings;
use serde_json::json;

use crate::{
    Failure, Output, Result, Services,
    audit::{
        Auditor, CONSUMER, LAGGING, Lagging, METRICS, OLDEST_LAG, PASS_FAILURES, PASS_SECONDS,
        PASSES, Report, ShardId, Stage,
    },
    cli::{AuditArgs, Cli},
    table::Table,
};

/// Lagging orders `--watch` logs by name each pass.
const LOGGED_PER_PASS: usize = 10;

pub async fn audit(s: &Services, args: &AuditArgs, ops: &ToolSettings<Cli>) -> Result<Output> {
    let sources = crate::fleet::connect(ops, s.fleet.as_ref(), args.db.as_deref()).await?;
    let ids = sources.ids.clone();
    let grace = ops.audit_grace;
    let mut auditor = Auditor::new(sources, grace, args.slice);
    if args.watch {
        return watch(args, grace, auditor).await;
    }
    let report = auditor.full_pass().await.map_err(read_failed)?;
    Ok(listing(&report, &ids, grace))
}

fn read_failed(e: sqlx::Error) -> Failure {
    Failure::new(
        Failure::UNREACHABLE,
        format!(
            "the audit cannot read its databases: {e} (see --orders-db, --mail-db and \
             --fleet-database-url)"
        ),
    )
}

/// The lagging orders, and how many in each database read, for people and scripts.
fn listing(report: &Report, ids: &[ShardId], grace: Duration) -> Output {
    let now = Utc::now();
    let mut table = Table::new(&[
        "DB",
        "SHARD",
        "ORDER",
        "STAGE",
        "WAITING_FOR",
        "APPLIED",
        "HEAD",
        "SINCE",
        "AGE",
        "DETAIL",
    ]);
    for l in &report.lagging {
        table.row(vec![
            l.database.clone(),
            l.key.0.to_string(),
            l.key.2.to_string(),
            l.stage.label().to_owned(),
            opt(l.waiting_for),
            opt(l.applied),
            l.head.to_string(),
            l.since.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
            format!("{}s", (now - l.since).num_seconds()),
            l.detail.clone(),
        ]);
    }
    let summary = format!(
        "{} order(s) lagging past the grace period of {:?} ({} checked, {} behind within grace)\n",
        report.lagging.len(),
        grace,
        report.checked,
        report.pending
    );
    let per_db = report.by_database(ids);
    // Per database only when there are several: one database's count is the summary's.
    let per_db_line = if per_db.len() > 1 {
        format!(
            "lagging per database: {}\n",
            per_db
                .iter()
                .map(|(db, n)| format!("{db}={n}"))
                .collect::<Vec<_>>()
                .join(" ")
        )
    } else {
        String::new()
    };
    let human = if report.lagging.is_empty() {
        format!("{summary}{per_db_line}")
    } else {
        format!(
            "{}{summary}{per_db_line}{}",
            table.render(),
            next_steps(report)
        )
    };
    Output {
        human,
        json: json!({
            "consumer": CONSUMER,
            "checked": report.checked,
            "behind_within_grace": report.pending,
            "databases": ids.iter().map(|i| json!({
                "db": i.name,
                "shard": i.shard,
                "lagging": per_db.get(i.name.as_str()).copied().unwrap_or(0),
            })).collect::<Vec<_>>(),
            "lagging": report.lagging.iter().map(lagging_json).collect::<Vec<_>>(),
        }),
        // A finding, not a failure: the listing is printed as always, and the code tells a
        // script (or cron) without parsing it.
        exit: if report.lagging.is_empty() {
            0
        } else {
            Failure::LAGGING
        },
    }
}

fn opt(v: Option<i64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

fn lagging_json(l: &Lagging) -> serde_json::Value {
    json!({
        "db": l.database,
        "shard": l.key.0,
        "aggregate_type": l.key.1,
        "order_id": l.key.2,
        "stage": l.stage.label(),
        "waiting_for": l.waiting_for,
        "applied": l.applied,
        "head": l.head,
        "since": l.since.to_rfc3339(),
        "detail": l.detail,
    })
}

/// What resolves each stage that occurs.
fn next_steps(report: &Report) -> String {
    let counts = report.counts();
    let mut out = String::new();
    let mut say = |stage: Stage, what: &str| {
        if counts.get(&stage).copied().unwrap_or(0) > 0 {
            out.push_str(&format!("  {}: {what}\n", stage.label()));
        }
    };
    say(
        Stage::NotApplied,
        "outboxctl trace --order N, then outboxctl replay --order N --reason '...'",
    );
    say(
        Stage::Unpublished,
        "outboxctl backlog (is the relay running?)",
    );
    say(Stage::Quarantined, "outboxctl quarantine list --order N");
    say(Stage::DeadLettered, "outboxctl dead-letters list");
    out
}

/// Passes every `--interval` until SIGTERM or Ctrl-C, the figures on `--metrics-addr`.
async fn watch(args: &AuditArgs, grace: Duration, mut auditor: Auditor) -> Result<Output> {
    let _telemetry =
        outbox_kit::telemetry::init(outbox_kit::telemetry::LogFormat::Text, "outboxctl")
            .map_err(|e| Failure::new(Failure::FAILED, format!("{e:#}")))?;
    register_metrics();
    let shutdown = outbox_kit::shutdown::on_signal();
    let addr = outbox_kit::metrics::serve(args.metrics_addr, "--metrics-addr", shutdown.clone())
        .await
        .map_err(|e| Failure::new(Failure::FAILED, format!("{e:#}")))?;
    tracing::info!(
        %addr,
        "audit: watching every {:?}, grace {:?}",
        args.interval,
        grace
    );
    loop {
        let started = std::time::Instant::now();
        match auditor.pass().await {
            Ok(report) => {
                publish(&report);
                metrics::gauge!(PASS_SECONDS).set(started.elapsed().as_secs_f64());
                metrics::counter!(PASSES).increment(1);
                let counts = report.counts();
                tracing::info!(
                    checked = report.checked,
                    lagging = report.lagging.len(),
                    "audit: pass done, {} checked, {} lagging ({})",
                    report.checked,
                    report.lagging.len(),
                    Stage::ALL
                        .iter()
                        .map(|s| format!("{}={}", s.label(), counts[s]))
                        .collect::<Vec<_>>()
                        .join(" ")
                );
                // The first few by name; the metrics count them all (a wide loss would
                // otherwise write thousands of lines every interval).
                for l in report.lagging.iter().take(LOGGED_PER_PASS) {
                    tracing::warn!(
                        "audit: order {} (db {}, shard {}) waits for seq={} since {}: {}{}",
                        l.key.2,
                        l.database,
                        l.key.0,
                        opt(l.waiting_for),
                        l.since.to_rfc3339(),
                        l.stage.label(),
                        if l.detail.is_empty() {
                            String::new()
                        } else {
                            format!(" ({})", l.detail)
                        }
                    );
                }
                if let Some(more) = report.lagging.len().checked_sub(LOGGED_PER_PASS)
                    && more > 0
                {
                    tracing::warn!(
                        "audit: and {more} more lagging order(s): outboxctl audit lists them"
                    );
                }
            }
            Err(e) => {
                metrics::counter!(PASS_FAILURES).increment(1);
                tracing::warn!(error = %e, "audit: pass failed, trying again next interval");
            }
        }
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = tokio::time::sleep(args.interval) => {}
        }
    }
    Ok(Output {
        human: String::new(),
        json: json!({ "stopped": true }),
        exit: 0,
    })
}

fn register_metrics() {
    outbox_kit::metrics::register("outboxctl-audit", env!("CARGO_PKG_VERSION"), METRICS);
}

/// Sets the figures of one pass (every stage, zeros included).
fn publish(report: &Report) {
    let oldest = report.oldest(Utc::now());
    for (stage, n) in report.counts() {
        let labels = [("consumer", CONSUMER), ("stage", stage.label())];
        metrics::gauge!(LAGGING, &labels).set(n as f64);
        metrics::gauge!(OLDEST_LAG, &labels).set(oldest[&stage]);
    }
}
