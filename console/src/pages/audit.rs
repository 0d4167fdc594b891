//! The audit and replay: the lagging orders by stage, live; a replay's dry run (which seqs the
//! consumer would skip, hold or apply, by its own rule); then, after confirmation, the replay as
//! a rate-limited job through relay-svc's admin API (`Replay`, a call per chunk of seqs, each
//! recorded in admin_actions with the reason).

use std::{sync::Arc, time::Duration};

use axum::{
    extract::State,
    response::{Html, Response},
};
use maud::{Markup, html};
use outbox_ops::{
    audit::{Auditor, ShardId, Sources, Stage},
    proto::relay::admin::v1::ReplayRequest,
    replay::{self, Verdict},
};

use super::see_other;
use crate::{
    error::{Error, Result},
    extractors::{Query, Signed, WriteForm},
    form::Fields,
    live::Audit,
    paths::Route,
    scope::Scope,
    state::AppState,
    views::{
        fragments::{self, AuditView},
        widgets::{
            db_input, hidden_fields, order_input, post_form, reason_and_confirm, seq_input,
            seq_list, shard_select,
        },
    },
};

fn replay_form(shards: usize, f: &Fields) -> Markup {
    let shard = f.get("shard").and_then(|s| s.parse().ok()).unwrap_or(0);
    html! {
        form.filters method="get" action=(Route::Replay) aria-label="Replay: dry run" {
            (order_input(f.get("order"), true))
            (shard_select(shards, shard))
            (db_input(f.get("db")))
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
    let scope = match f.get("db") {
        Some(_) => Some(Scope::read(&state, &f).await?),
        None => None,
    };
    let db = scope.as_ref().and_then(|s| s.db.as_deref());
    let live = state.live.audit.borrow().clone();
    // The live audit reads CONSOLE_ORDERS_DB's shards; a database it does not read (a fleet
    // database) gets one full pass of its own, as `outboxctl audit --db` does.
    let audit = match &scope {
        Some(s)
            if !state
                .sources
                .ids
                .iter()
                .any(|i| Some(i.name.as_str()) == db) =>
        {
            Arc::new(one_pass(&state, s).await?)
        }
        _ => live,
    };
    let view = AuditView { stage, db };
    Ok(signed.page(
        "Audit and replay",
        html! {
            p { "Every order's chain head in the orders database against mail-svc's watermark; an order lags once the event it waits for is older than " (outbox_kit::config::duration_text(state.cfg.ops.audit_grace)) "." }
            (audit_filter(&f))
            @if stage.is_some() || db.is_some() {
                p { a href=(Route::Audit) { "Every database, all stages (live)" } }
                @if let Some(s) = &scope { p role="status" { "Only " (s.label()) "." } }
                div { (fragments::audit_table(&audit, view)) }
            } @else {
                div data-live="audit" aria-live="polite" { (fragments::audit_table(&audit, view)) }
            }
            h2 { "Replay" }
            p { "Sends an order's published events again to mail-svc's queue; the dry run shows first what mail-svc would do with each." }
            (replay_form(state.sources.shards.len(), &f))
        },
    ))
}

/// The audit's filter: one database (`db`), keeping the stage.
fn audit_filter(f: &Fields) -> Markup {
    html! {
        form.filters method="get" action=(Route::Audit) role="search" aria-label="Audit: one database" {
            @if let Some(s) = f.get("stage") { input type="hidden" name="stage" value=(s); }
            label { "Database " input name="db" size="14" placeholder="shard-N or a fleet name" value=[f.get("db")]; }
            button type="submit" { "Only this database" }
        }
    }
}

/// One full audit pass over the database `scope` alone (with mail-svc's database).
async fn one_pass(state: &AppState, scope: &Scope) -> Result<Audit> {
    let sources = Sources {
        shards: vec![scope.pool.clone()],
        ids: vec![ShardId {
            name: scope.db.clone().unwrap_or_default(),
            shard: scope.shard,
        }],
        mail: state.sources.mail.clone(),
    };
    let report = Auditor::new(sources, state.cfg.ops.audit_grace, state.cfg.audit_slice)
        .full_pass()
        .await?;
    Ok(Audit {
        at: Some(chrono::Utc::now()),
        report: Some(Arc::new(report)),
        error: None,
    })
}

/// The replay's parameters: order (required), the database (`shard` or `db`), from, to (each
/// bad one a 400 naming it).
async fn params(state: &AppState, f: &Fields) -> Result<(i64, Scope, Option<i64>, Option<i64>)> {
    let order = f
        .positive("order")?
        .ok_or_else(|| Error::bad("order", "required"))?;
    let from = f.positive("from")?;
    let to = f.positive("to")?;
    if let (Some(a), Some(b)) = (from, to)
        && a > b
    {
        return Err(Error::bad("to", format!("{b} is below from ({a})")));
    }
    let scope = Scope::read(state, f).await?;
    Ok((order, scope, from, to))
}

pub async fn dry_run(
    State(state): State<AppState>,
    signed: Signed,
    Query(f): Query,
) -> Result<Html<String>> {
    let (order, scope, from, to) = params(&state, &f).await?;
    let plan = replay::dry_run(
        &scope.pool,
        &state.sources.mail,
        scope.shard,
        order,
        from,
        to,
    )
    .await?;
    if plan.events.is_empty() {
        return Err(Error::NotFound(format!(
            "no published event of order {order} in that range in {} (published rows are kept \
             for relay-svc's PUBLISHED_RETENTION)",
            scope.label()
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
                    (hidden_fields(&scope.pairs()))
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
    let (order, scope, from, to) = params(&state, &f).await?;
    let shard = scope.shard;
    let reason = f.reason()?;
    let seqs: Vec<i64> = replay::published(&scope.pool, order, from, to)
        .await?
        .into_iter()
        .map(|(s, _, _)| s)
        .collect();
    if seqs.is_empty() {
        return Err(Error::NotFound(format!(
            "no published event of order {order} in that range in {}",
            scope.label()
        )));
    }
    let user = signed.session.user.clone();
    let id = state.jobs.start(
        format!(
            "replay of order {order} ({}), {} event(s)",
            scope.label(),
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
