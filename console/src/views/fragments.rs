//! The parts of pages that the live stream replaces: the overview's figures and the audit's
//! table. Each is rendered once per refresh and sent to every watching browser.

use chrono::Utc;
use maud::{Markup, html};
use outbox_ops::audit::Stage;

use crate::live::{Audit, Figures};

/// `3s`, `4m 12s`, `2h 5m`.
pub fn age_ms(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {}s", s / 60, s % 60),
        _ => format!("{}h {}m", s / 3600, (s % 3600) / 60),
    }
}

fn count(v: Option<i64>) -> String {
    v.map_or_else(|| "?".to_owned(), |v| v.to_string())
}

/// The overview's figures; every figure links to the list that explains it.
pub fn figures(f: &Figures, audit: &Audit) -> Markup {
    let lagging = audit.counts();
    html! {
        section aria-labelledby="services-h" {
            h2 #services-h { "Services" }
            table {
                thead { tr { th { "Service" } th { "Address" } th { "Health" } th { "Broker" } th { "State" } } }
                tbody {
                    @for i in &f.instances {
                        tr {
                            td { (i.service) }
                            td { (i.addr) }
                            td {
                                a class=(if i.health == "SERVING" { "ok" } else { "bad" })
                                  href={ "/where" } data-figure={ "health-" (i.service) } {
                                    (i.health)
                                }
                            }
                            td {
                                @match &i.blocked {
                                    Some((why, ms)) => a.bad href="/dead-letters" data-figure="blocked" {
                                        "blocked: " (why) ", since " (age_ms(*ms))
                                    },
                                    None => @if i.service != "orders-svc" { span.ok { "not blocked" } },
                                }
                            }
                            td { (i.detail) }
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
                    @match f.backlog {
                        Some((n, oldest)) => {
                            a href="/where" data-figure="backlog" { (n) }
                            div { "oldest unsent: " (if n == 0 { "-".to_owned() } else { age_ms(oldest) }) }
                        }
                        None => a href="/where" data-figure="backlog" { "?" },
                    }
                }
                div.figure {
                    div { "Quarantined rows" }
                    a href="/quarantine" data-figure="quarantined" { (count(f.quarantined)) }
                }
                div.figure {
                    div { "Held chains" }
                    a href="/held" data-figure="held" { (count(f.held)) }
                }
                div.figure {
                    div { "Dead letters" }
                    a href="/dead-letters" data-figure="dead-letters" { (count(f.dead_letters)) }
                }
            }
        }
        section aria-labelledby="lagging-h" {
            h2 #lagging-h { "Orders lagging, by audit stage" }
            div.figures {
                @for stage in Stage::ALL {
                    div.figure {
                        div { (stage.label()) }
                        a href={ "/audit?stage=" (stage.label()) } data-figure={ "lagging-" (stage.label()) } {
                            @match &lagging {
                                Some(c) => (c.get(&stage).copied().unwrap_or(0)),
                                None => "?",
                            }
                        }
                    }
                }
            }
        }
        @if !f.problems.is_empty() || audit.error.is_some() {
            ul.error role="status" {
                @for p in &f.problems { li { (p) } }
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

/// The audit's lagging orders, optionally only those at `stage`.
pub fn audit_table(audit: &Audit, stage: Option<Stage>) -> Markup {
    let now = Utc::now();
    html! {
        @match &audit.report {
            None => p { "The first audit pass is running." },
            Some(report) => {
                @let rows: Vec<_> = report.lagging.iter().filter(|l| stage.is_none_or(|s| l.stage == s)).collect();
                p data-figure="lagging-total" {
                    (rows.len()) " order(s) lagging past the grace period"
                    @if let Some(s) = stage { " at stage " (s.label()) }
                    " (" (report.checked) " checked in the last pass, " (report.pending) " behind within grace)."
                }
                @if !rows.is_empty() {
                    table {
                        thead { tr {
                            th { "Shard" } th { "Order" } th { "Stage" } th { "Waiting for" }
                            th { "Applied" } th { "Head" } th { "Waiting" } th { "Detail" } th { "Next step" }
                        } }
                        tbody {
                            @for l in rows.iter().take(500) {
                                tr {
                                    td { (l.key.0) }
                                    td { a href={ "/where?shard=" (l.key.0) "&order=" (l.key.2) } { (l.key.2) } }
                                    td { (l.stage.label()) }
                                    td { (l.waiting_for.map_or("-".into(), |s| s.to_string())) }
                                    td { (l.applied.map_or("-".into(), |s| s.to_string())) }
                                    td { (l.head) }
                                    td { (age_ms((now - l.since).num_milliseconds().max(0) as u64)) }
                                    td { (l.detail) }
                                    td { (next_step(l.stage, l.key.0, l.key.2)) }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// What resolves an order stopped at `stage`.
pub fn next_step(stage: Stage, shard: i32, order: i64) -> Markup {
    html! {
        @match stage {
            Stage::NotApplied => a href={ "/replay?shard=" (shard) "&order=" (order) } { "Replay (dry run first)" },
            Stage::DeadLettered => a href={ "/dead-letters?order=" (order) } { "Redrive" },
            Stage::Quarantined => a href={ "/quarantine?shard=" (shard) "&order=" (order) } { "Requeue or drop" },
            Stage::Unpublished => a href="/" { "Is the relay running?" },
        }
    }
}
