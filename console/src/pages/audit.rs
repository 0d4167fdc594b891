//! The audit and replay: the lagging orders by stage, live; a replay's dry run (which seqs the
//! consumer would skip, hold or apply, by its own rule); then, after confirmation, the replay as
//! a rate-limited job through relay-svc's admin API (`Replay`, a call per chunk of seqs, each
//! recorded in admin_actions with the reason).

use std::time::Duration;

use axum::{
    extract::State,
    response::{Html, Response},
};
use maud::{Markup, html};
use outbox_ops::{
    audit::Stage,
    proto::relay::admin::v1::ReplayRequest,
    replay::{self, Verdict},
};

use super::see_other;
use crate::{
    error::{Error, Result},
    extractors::{Query, Signed, WriteForm},
    form::Fields,
    paths::Route,
    state::AppState,
    views::{
        fragments,
        widgets::{order_input, post_form, reason_and_confirm, seq_input, seq_list, shard_select},
    },
};

fn replay_form(shards: usize, f: &Fields) -> Markup {
    let shard = f.get("shard").and_then(|s| s.parse().ok()).unwrap_or(0);
    html! {
        form.filters method="get" action=(Route::Replay) aria-label="Replay: dry run" {
            (order_input(f.get("order"), true))
            (shard_select(shards, shard))
            (seq_input("from", "From seq", f.get("from")))
            (seq_input("to", "To seq", f.get("to")))
            button type="submit" { "Dry run" }
        }
    }
}

pub async fn audit(
    State(state): State<AppState>,
    signed: Signed,
    Query(f): Query,
) -> Result<Html<String>> {
    let stage = match f.get("stage") {
        None => None,
        Some(s) => Some(
            Stage::ALL
                .into_iter()
                .find(|st| st.label() == s)
                .ok_or_else(|| Error::bad("stage", format!("unknown stage {s:?}")))?,
        ),
    };
    let audit = state.live.audit.borrow().clone();
    Ok(signed.page(
        "Audit and replay",
        html! {
            p { "Every order's chain head in the orders database against mail-svc's watermark; an order lags once the event it waits for is older than " (outbox_kit::config::duration_text(state.cfg.ops.audit_grace)) "." }
            @if stage.is_some() {
                p { a href=(Route::Audit) { "All stages (live)" } }
                div { (fragments::audit_table(&audit, stage)) }
            } @else {
                div data-live="audit" aria-live="polite" { (fragments::audit_table(&audit, None)) }
            }
            h2 { "Replay" }
            p { "Sends an order's published events again to mail-svc's queue; the dry run shows first what mail-svc would do with each." }
            (replay_form(state.sources.shards.len(), &f))
        },
    ))
}

/// The replay's parameters: order (required), shard, from, to (each bad one a 400 naming it).
fn params(state: &AppState, f: &Fields) -> Result<(i64, i32, Option<i64>, Option<i64>)> {
    let order = f
        .positive("order")?
        .ok_or_else(|| Error::bad("order", "required"))?;
    let shard = f.shard("shard", state.sources.shards.len())?;
    let from = f.positive("from")?;
    let to = f.positive("to")?;
    if let (Some(a), Some(b)) = (from, to)
        && a > b
    {
        return Err(Error::bad("to", format!("{b} is below from ({a})")));
    }
    Ok((order, shard, from, to))
}

pub async fn dry_run(
    State(state): State<AppState>,
    signed: Signed,
    Query(f): Query,
) -> Result<Html<String>> {
    let (order, shard, from, to) = params(&state, &f)?;
    let plan = replay::dry_run(
        &state.sources.shards[shard as usize],
        &state.sources.mail,
        shard,
        order,
        from,
        to,
    )
    .await?;
    if plan.events.is_empty() {
        return Err(Error::NotFound(format!(
            "no published event of order {order} in that range in shard {shard} (published rows \
             are kept for relay-svc's PUBLISHED_RETENTION)"
        )));
    }
    let skip = plan.seqs(|v| v == Verdict::Skip);
    let apply = plan.seqs(|v| v == Verdict::Apply);
    let hold = plan.seqs(|v| matches!(v, Verdict::Hold(_)));
    let conflict = plan.seqs(|v| v == Verdict::Conflict);
    let all: Vec<i64> = plan.events.iter().map(|e| e.seq).collect();
    Ok(signed.page(
        &format!("Replay order {order}: dry run"),
        html! {
            (replay_form(state.sources.shards.len(), &f))
            p { "mail-svc has applied order " (order) " up to seq " (plan.applied.map_or("none".into(), |a| a.to_string())) "." }
            ul role="status" {
                li data-verdict="apply" { "apply: " strong { (apply.len()) } " (seq " (seq_list(&apply)) ")" }
                li data-verdict="skip" { "skip, applied already: " (skip.len()) " (seq " (seq_list(&skip)) ")" }
                li data-verdict="hold" { "hold, a predecessor is missing: " (hold.len()) " (seq " (seq_list(&hold)) ")" }
                @if !conflict.is_empty() { li data-verdict="conflict" { "conflict with the chain mail-svc knows: seq " (seq_list(&conflict)) } }
                @if !plan.released.is_empty() { li { "and released from hold after them: seq " (seq_list(&plan.released)) } }
            }
            table {
                caption { "The published events of the range, in the order they would be sent" }
                thead { tr { th { "Seq" } th { "After" } th { "Type" } th { "mail-svc would" } } }
                tbody {
                    @for e in &plan.events {
                        tr data-seq=(e.seq) {
                            td { (e.seq) }
                            td { (e.prev_seq.map_or("-".into(), |p| p.to_string())) }
                            td { (e.event_type) }
                            td { (e.verdict.label()) @if let Verdict::Hold(p) = e.verdict { " (until seq " (p) ")" } }
                        }
                    }
                }
            }
            @if signed.session.may_write() {
                (post_form(&signed, Route::Replay, html! {
                    p { "Replay these " (all.len()) " event(s) to " code { (state.cfg.ops.replay_queue) } ", at most " (state.cfg.replay_rate) " per second." }
                    input type="hidden" name="order" value=(order);
                    input type="hidden" name="shard" value=(shard);
                    @if let Some(a) = from { input type="hidden" name="from" value=(a); }
                    @if let Some(b) = to { input type="hidden" name="to" value=(b); }
                    (reason_and_confirm("Replay"))
                }))
            }
        },
    ))
}

/// Starts the replay as a job: the range's published seqs in chunks, a pause after each.
pub async fn replay(
    State(state): State<AppState>,
    WriteForm { signed, fields: f }: WriteForm,
) -> Result<Response> {
    let (order, shard, from, to) = params(&state, &f)?;
    let reason = f.reason()?;
    let seqs: Vec<i64> = replay::published(&state.sources.shards[shard as usize], order, from, to)
        .await?
        .into_iter()
        .map(|(s, _, _)| s)
        .collect();
    if seqs.is_empty() {
        return Err(Error::NotFound(format!(
            "no published event of order {order} in that range in shard {shard}"
        )));
    }
    let user = signed.session.user.clone();
    let id = state.jobs.start(
        format!(
            "replay of order {order} (shard {shard}), {} event(s)",
            seqs.len()
        ),
        &user,
        seqs.len(),
    );
    let rate = state.cfg.replay_rate;
    let chunk = (rate / 5).clamp(1, 100) as usize;
    let pause = Duration::from_secs_f64(chunk as f64 / f64::from(rate));
    let admin = state.admin.as_operator(&user);
    let queue = state.cfg.ops.replay_queue.clone();
    let jobs = state.clone();
    tracing::info!(user = %user, job = id, order, "console: replay started");
    tokio::spawn(async move {
        for (i, part) in seqs.chunks(chunk).enumerate() {
            if i > 0 {
                tokio::time::sleep(pause).await;
            }
            let request = ReplayRequest {
                order_id: order,
                shard: shard as u32,
                from_seq: part[0],
                to_seq: part[part.len() - 1],
                queue: queue.clone(),
                reason: reason.clone(),
            };
            match admin.replay(request).await {
                Ok(r) => jobs.jobs.update(id, |j| {
                    j.done.extend(r.seqs.iter().map(|s| format!("{shard}:{s}")));
                }),
                Err(e) => {
                    let msg = e.to_string();
                    jobs.jobs.update(id, |j| j.error = Some(msg));
                    break;
                }
            }
        }
        jobs.jobs
            .update(id, |j| j.finished = Some(chrono::Utc::now()));
        tracing::info!(job = id, "console: replay finished");
    });
    Ok(see_other(&Route::job(id)))
}
