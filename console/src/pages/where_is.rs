//! "Where is this event": an order's chain as a timeline (appended, published, applied or held
//! or dead-lettered, mail), found by order id or by (shard, seq), with where it stopped and the
//! next step. `db=` reads another outbox database by name (see [`Scope`]).

use axum::{extract::State, response::Html};
use chrono::{DateTime, Utc};
use maud::{Markup, html};
use outbox_ops::trace::{self, Place, Stop, Traced};

use crate::{
    error::{Error, Result},
    extractors::{Query, Signed},
    paths::Route,
    scope::Scope,
    state::AppState,
    views::widgets::{db_input, order_input, seq_input, shard_select},
};

fn time(t: DateTime<Utc>) -> Markup {
    html! { time datetime=(t.to_rfc3339()) { (t.format("%Y-%m-%d %H:%M:%S%.3f")) } }
}

fn search(shards: usize, order: Option<i64>, scope: &Scope, seq: Option<i64>) -> Markup {
    html! {
        form.filters method="get" action=(Route::Where) role="search" {
            (order_input(order, false))
            (seq_input("seq", "or seq", seq))
            (shard_select(shards, scope.shard))
            (db_input(scope.db.as_deref()))
            button type="submit" { "Find" }
        }
    }
}

pub async fn where_is(
    State(state): State<AppState>,
    signed: Signed,
    Query(f): Query,
) -> Result<Html<String>> {
    let shards = state.sources.shards.len();
    let seq = f.positive("seq")?;
    let mut order = f.positive("order")?;
    let scope = Scope::read(&state, &f).await?;
    let (pool, shard, label) = (&scope.pool, scope.shard, scope.label());
    if order.is_none()
        && let Some(seq) = seq
    {
        order = Some(trace::order_of(pool, seq).await?.ok_or_else(|| {
            Error::NotFound(format!(
                "no event with seq {seq} in {label}'s outbox, quarantine or published rows"
            ))
        })?);
    }
    let Some(order) = order else {
        return Ok(signed.page(
            "Where is this event",
            html! {
                (search(shards, None, &scope, None))
                p { "Give an order id, or the seq of one of its events (seqs are per shard)." }
            },
        ));
    };
    let events = trace::trace(pool, &state.sources.mail, shard, order).await?;
    if events.is_empty() {
        return Err(Error::NotFound(format!(
            "no event of order {order} in {label}'s outbox, quarantine or published rows \
             (published rows are kept for relay-svc's PUBLISHED_RETENTION)"
        )));
    }
    let first_stop = events.iter().find(|t| !t.stop().is_done());
    Ok(signed.page(
        &format!("Order {order}"),
        html! {
            (search(shards, Some(order), &scope, seq))
            @match first_stop {
                Some(t) => p.stopped role="status" data-stopped=(t.stop().label()) {
                    "Stopped at seq " (t.event.seq) ": " strong { (t.stop().label()) } ". "
                    (next_step(&signed, &scope, order, t))
                },
                None => p.ok role="status" { "Every event went through." },
            }
            @for t in &events {
                (event(t, seq))
            }
        },
    ))
}

/// The way out of the stage where `t` stopped.
fn next_step(signed: &Signed, scope: &Scope, order: i64, t: &Traced) -> Markup {
    let act = signed.session.may_write();
    let at = |more: &[(&'static str, String)]| {
        let mut pairs = scope.pairs();
        pairs.extend_from_slice(more);
        pairs
    };
    html! {
        @match t.stop() {
            Stop::NeverApplied => a href=(Route::Replay.with(&at(&[("order", order.to_string()), ("from", t.event.seq.to_string())]))) {
                "Replay from seq " (t.event.seq) (if act { " (dry run first)" } else { " (the dry run)" })
            },
            Stop::DeadLettered => a href=(Route::DeadLetters.with(&[("order", order.to_string())])) { "See its dead letters" (if act { " and redrive" } else { "" }) },
            Stop::Quarantined => a href=(Route::Quarantine.with(&at(&[("order", order.to_string())]))) { "See the quarantined row" (if act { " and requeue or drop it" } else { "" }) },
            Stop::Held => a href=(Route::Held.with(&[("order", order.to_string())])) { "See the held chain" },
            Stop::NotPublished => a href=(Route::Overview) { "Is the relay running? (the overview)" },
            Stop::MailFailed => "The mail server refused it for good: `outboxctl mails retry` after fixing the cause.",
            _ => "",
        }
    }
}

fn event(t: &Traced, highlight: Option<i64>) -> Markup {
    let e = &t.event;
    let c = &t.consumed;
    let stop = t.stop();
    html! {
        section.event aria-label={ "seq " (e.seq) } data-seq=(e.seq) class=[(!stop.is_done()).then_some("stopped")] {
            h2 {
                "seq " (e.seq) " · " (e.event_type)
                @if let Some(p) = e.prev_seq { " · after " (p) }
                @if highlight == Some(e.seq) { " (searched)" }
            }
            ol.timeline {
                li { "appended (commit): " (time(e.created_at)) }
                li {
                    @match e.place() {
                        Place::Published => { "published (broker confirm): " @if let Some(at) = e.published_at { (time(at)) } }
                        Place::Quarantined => { "quarantined: " (e.reason.clone().unwrap_or_default()) }
                        Place::Unpublished => "not published yet (in the outbox)",
                    }
                }
                @if e.place() == Place::Published {
                    li {
                        @if c.applied { "applied by mail-svc" }
                        @else if let Some((at, reason)) = &c.dead_lettered { "dead-lettered " (time(*at)) ": " (reason) }
                        @else if let Some(at) = c.held_at { "held since " (time(at)) " (waiting for its predecessor)" }
                        @else { "never applied" }
                    }
                }
                @if let Some(m) = &c.mail {
                    li {
                        @if let Some(at) = m.sent_at {
                            "mail sent: " (time(at))
                            @if let Some(reply) = &m.smtp_reply { "; the SMTP answer: " (reply) }
                            @else { " (the log mailer, or sent before mail-svc kept the answer)" }
                        }
                        @else if m.failed_at.is_some() { "mail failed; the SMTP answer: " (m.last_error.clone().unwrap_or_default()) }
                        @else {
                            "mail queued " (time(m.queued_at))
                            @if let Some(err) = &m.last_error { "; last SMTP answer: " (err) }
                        }
                    }
                }
            }
            p { "Stopped at: " strong data-stop=(stop.label()) { (stop.label()) }
                @if !e.trace_id().is_empty() { " · trace " code { (e.trace_id()) } } }
        }
    }
}
