//! The parts of pages that the live stream replaces: the overview's figures and the audit's
//! table. Each is rendered once per refresh and sent to every watching browser.

use chrono::Utc;
use maud::{Markup, html};
use outbox_ops::audit::Stage;

use super::{
    chart,
    widgets::{age_ms, scoped_order_link},
};
use crate::{
    live::{Audit, Figures, Reading},
    paths::Route,
};

/// A count figure linking to its list, marked when stale (its last value kept, greyed).
fn count(name: &str, href: impl maud::Render, r: &Reading<i64>) -> Markup {
    html! {
        a href=(href) data-figure=(name) class=[r.stale.then_some("stale")]
          title=[r.stale.then_some("not read lately: the last value read")] {
            (r.value.map_or_else(|| "?".to_owned(), |v| v.to_string()))
        }
    }
}

/// The overview's figures; every figure links to the list that explains it.
pub fn figures(f: &Figures, audit: &Audit) -> Markup {
    let lagging = audit.counts();
    let problems = f.problems();
    html! {
        section aria-labelledby="services-h" {
            h2 #services-h { "Services" }
            table {
                thead { tr { th { "Service" } th { "Address" } th { "Health" } th { "Broker" } th { "State" } } }
                tbody {
                    @for i in &f.instances {
                        @let s = i.status.value.clone().unwrap_or_default();
                        tr class=[i.status.stale.then_some("stale")] data-stale=[i.status.stale.then_some(&i.addr)] {
                            td { (i.service) }
                            td { (i.addr) }
                            td {
                                a class=(if s.health == "SERVING" && !i.status.stale { "ok" } else { "bad" })
                                  href=(Route::Where) data-figure={ "health-" (i.service) } {
                                    (if s.health.is_empty() { "?" } else { &s.health })
                                }
                                @if i.status.stale { " " small { "(not answering: last read shown)" } }
                            }
                            td {
                                @match &s.blocked {
                                    Some((why, ms)) => a.bad href=(Route::DeadLetters) data-figure="blocked" {
                                        "blocked: " (why) ", since " (age_ms(*ms))
                                    },
                                    None => @if i.service != "orders-svc" && i.status.value.is_some() { span.ok { "not blocked" } },
                                }
                            }
                            td { (s.detail) }
                        }
                    }
                }
            }
        }
        section aria-labelledby="stuck-h" {
            h2 #stuck-h { "What waits" }
            div.figures {
                div.figure {
                    div { "Relay backlog" }
                    @match f.backlog.value {
                        Some((n, oldest)) => {
                            a href=(Route::Where) data-figure="backlog" class=[f.backlog.stale.then_some("stale")] { (n) }
                            div { "oldest unsent: " (if n == 0 { "-".to_owned() } else { age_ms(oldest) }) }
                        }
                        None => a href=(Route::Where) data-figure="backlog" { "?" },
                    }
                }
                div.figure {
                    div { "Quarantined rows" }
                    (count("quarantined", Route::Quarantine, &f.quarantined))
                }
                div.figure {
                    div { "Held chains" }
                    (count("held", Route::Held, &f.held))
                }
                div.figure {
                    div { "Dead letters" }
                    (count("dead-letters", Route::DeadLetters, &f.dead_letters))
                }
            }
        }
        section aria-labelledby="lagging-h" {
            h2 #lagging-h { "Orders lagging, by audit stage" }
            div.figures {
                @for stage in Stage::ALL {
                    div.figure {
                        div { (stage.label()) }
                        a href=(Route::Audit.with(&[("stage", stage.label())])) data-figure={ "lagging-" (stage.label()) } {
                            @match &lagging {
                                Some(c) => (c.get(&stage).copied().unwrap_or(0)),
                                None => "?",
                            }
                        }
                    }
                }
            }
        }
        section aria-labelledby="rates-h" {
            h2 #rates-h { "Rates, last 15 minutes" }
            (chart::rates(&f.rates))
        }
        @if !problems.is_empty() || audit.error.is_some() {
            ul.error role="status" {
                @for p in &problems { li { (p) } }
                @if let Some(e) = &audit.error { li { (e) } }
            }
        }
        p {
            small {
                "Updated "
                @if let Some(at) = f.at { time datetime=(at.to_rfc3339()) { (at.format("%H:%M:%S")) } }
                " (live)"
            }
        }
    }
}

/// Which of the audit's lagging orders a table shows.
#[derive(Debug, Clone, Copy, Default)]
pub struct AuditView<'a> {
    /// Only those at this stage.
    pub stage: Option<Stage>,
    /// Only those of this outbox database (its name: a fleet database's, or `shard-N`); their
    /// links name it (`db=`).
    pub db: Option<&'a str>,
}

/// The audit's lagging orders, those `view` asks for.
pub fn audit_table(audit: &Audit, view: AuditView<'_>) -> Markup {
    let now = Utc::now();
    let AuditView { stage, db } = view;
    // The database a row's links name: `db=` in a view of one database, else its shard.
    let scope = |shard: i32| match db {
        Some(name) => vec![("db", name.to_owned())],
        None => vec![("shard", shard.to_string())],
    };
    html! {
        @match &audit.report {
            None => p { "The first audit pass is running." },
            Some(report) => {
                @let rows: Vec<_> = report.lagging.iter()
                    .filter(|l| stage.is_none_or(|s| l.stage == s) && db.is_none_or(|d| l.database == d))
                    .collect();
                p data-figure="lagging-total" {
                    (rows.len()) " order(s) lagging past the grace period"
                    @if let Some(s) = stage { " at stage " (s.label()) }
                    @if let Some(d) = db { " in " (d) }
                    " (" (report.checked) " checked in the last pass, " (report.pending) " behind within grace)."
                }
                @if !rows.is_empty() {
                    table {
                        thead { tr {
                            th { "Database" } th { "Shard" } th { "Order" } th { "Stage" } th { "Waiting for" }
                            th { "Applied" } th { "Head" } th { "Waiting" } th { "Detail" } th { "Next step" }
                        } }
                        tbody {
                            @for l in rows.iter().take(500) {
                                tr data-db=(l.database) {
                                    td { (l.database) }
                                    td { (l.key.0) }
                                    td { (scoped_order_link(&scope(l.key.0), l.key.2)) }
                                    td { (l.stage.label()) }
                                    td { (l.waiting_for.map_or("-".into(), |s| s.to_string())) }
                                    td { (l.applied.map_or("-".into(), |s| s.to_string())) }
                                    td { (l.head) }
                                    td { (age_ms((now - l.since).num_milliseconds().max(0) as u64)) }
                                    td { (l.detail) }
                                    td { (next_step(l.stage, &scope(l.key.0), l.key.2)) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// What resolves an order stopped at `stage`, in the database `scope` names (`db=` or `shard=`).
pub fn next_step(stage: Stage, scope: &[(&'static str, String)], order: i64) -> Markup {
    let mut at = scope.to_vec();
    at.push(("order", order.to_string()));
    html! {
        @match stage {
            Stage::NotApplied => a href=(Route::Replay.with(&at)) { "Replay (dry run first)" },
            Stage::DeadLettered => a href=(Route::DeadLetters.with(&[("order", order.to_string())])) { "Redrive" },
            Stage::Quarantined => a href=(Route::Quarantine.with(&at)) { "Requeue or drop" },
            Stage::Unpublished => a href=(Route::Overview) { "Is the relay running?" },
        }
    }
}
