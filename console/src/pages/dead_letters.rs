//! Dead letters: events mail-svc dead-lettered and has not applied since, keyset-paginated by
//! record, filtered; redrive one, the selected ones, or all matching the filter, after a
//! preview, as a rate-limited job with its progress, through mail-svc's admin API
//! (`RedriveDeadLetters`, the loop outboxctl runs).

use std::{collections::BTreeMap, time::Duration};

use axum::{
    extract::State,
    response::{Html, Response},
};
use maud::html;
use outbox_ops::{
    lists::{self, Filter},
    proto::mail::admin::v1::DeadLetterFilter,
};

use super::see_other;
use crate::{
    error::{Error, Result},
    extractors::{Query, Signed, WriteForm},
    form::shard_seq,
    paths::Route,
    state::AppState,
    views::widgets::{
        ListFilters, action_buttons, age_since, order_link, post_form, reason_and_confirm, seq_list,
    },
};

const PAGE: i64 = 50;
/// The most dead letters one "redrive all matching" a filter moves (an unfiltered "all" has
/// no bound: mail-svc takes them in queue order).
pub const MAX_MATCHING: i64 = 10_000;

const FILTERS: ListFilters = ListFilters::mail(Route::DeadLetters);

pub async fn list(
    State(state): State<AppState>,
    signed: Signed,
    Query(f): Query,
) -> Result<Html<String>> {
    let filter = FILTERS.read(&f)?;
    let after = f.i64("after")?;
    let page = lists::dead_letters(&state.sources.mail, &filter, after, PAGE).await?;
    let act = signed.session.may_write();
    let table = html! {
        (FILTERS.hidden(&f))
        table {
            caption { "Dead-lettered events not applied since, oldest first" }
            thead { tr {
                @if act { th { "Select" } }
                th { "Shard" } th { "Seq" } th { "Order" } th { "Dead-lettered" } th { "Reason" }
            } }
            tbody {
                @for d in &page.rows {
                    tr data-seq=(d.seq) {
                        @if act { td { input type="checkbox" name="sel" value={ (d.shard) ":" (d.seq) } id={ "d" (d.id) } aria-label={ "select seq " (d.seq) }; } }
                        td { (d.shard) }
                        td { label for={ "d" (d.id) } { (d.seq) } }
                        td { (order_link(d.shard, d.order_id)) }
                        td { (age_since(d.at)) " ago" }
                        td { (d.reason) }
                    }
                }
            }
        }
        (action_buttons(act, &[("selected", "Redrive selected…"), ("matching", "Redrive all matching…")]))
    };
    Ok(signed.page(
        "Dead letters",
        html! {
            (FILTERS.form(&f, 0))
            @if page.rows.is_empty() {
                p { "No dead letter matches." }
            } @else {
                (post_form(&signed, Route::DeadLettersPreview, table))
            }
            (FILTERS.next_page(&f, page.next))
        },
    ))
}

/// How a redrive selects: seqs per shard, an order, or every dead letter.
enum Selection {
    Seqs(Vec<(i32, i64)>),
    Order(i64),
    All,
}

pub async fn preview(
    State(state): State<AppState>,
    WriteForm { signed, fields: f }: WriteForm,
) -> Result<Html<String>> {
    let filter = FILTERS.read(&f)?;
    let selection = match f.get("action") {
        Some("selected") => {
            let sel: Vec<(i32, i64)> = f
                .all("sel")
                .into_iter()
                .map(|s| shard_seq("sel", s))
                .collect::<Result<_>>()?;
            if sel.is_empty() {
                return Err(Error::bad("sel", "select at least one dead letter"));
            }
            Selection::Seqs(sel)
        }
        Some("matching") => match &filter {
            Filter {
                order_id: None,
                reason: None,
                min_age_secs: None,
                ..
            } => Selection::All,
            Filter {
                order_id: Some(o),
                reason: None,
                min_age_secs: None,
                ..
            } => Selection::Order(*o),
            _ => Selection::Seqs(
                lists::dead_letter_seqs(&state.sources.mail, &filter, MAX_MATCHING).await?,
            ),
        },
        _ => return Err(Error::bad("action", "selected or matching")),
    };
    // What it will move, as the mail database sees it now.
    let shown: Vec<(i32, i64)> = match &selection {
        Selection::Seqs(s) => s.clone(),
        _ => lists::dead_letter_seqs(&state.sources.mail, &filter, MAX_MATCHING).await?,
    };
    let (mode, value, what) = match &selection {
        Selection::Seqs(s) => (
            "seqs",
            s.iter()
                .map(|(a, b)| format!("{a}:{b}"))
                .collect::<Vec<_>>()
                .join(","),
            format!("{} selected dead letter(s)", s.len()),
        ),
        Selection::Order(o) => (
            "order",
            o.to_string(),
            format!("every dead letter of order {o}"),
        ),
        Selection::All => (
            "all",
            String::new(),
            "every dead letter in the queue".to_owned(),
        ),
    };
    Ok(signed.page(
        "Dead letters: preview",
        html! {
            (post_form(&signed, Route::DeadLettersRedrive, html! {
                p role="status" data-count=(shown.len()) {
                    "Redrive " (what) ": " strong { (shown.len()) } " event(s) now, "
                    (seq_list(&shown.iter().map(|(s, q)| format!("{s}:{q}")).collect::<Vec<_>>()))
                    " (shard:seq)."
                }
                p { "Each goes back to mail-svc's queue, at most " (state.cfg.redrive_rate) " per second; mail-svc applies it once (a seq it applied is skipped)." }
                input type="hidden" name="mode" value=(mode);
                input type="hidden" name="value" value=(value);
                input type="hidden" name="target" value=(shown.len());
                (reason_and_confirm("Redrive"))
            }))
            p { a href=(Route::DeadLetters) { "Back to the dead letters" } }
        },
    ))
}

/// Starts the redrive as a job and sends the browser to its progress.
pub async fn redrive(
    State(state): State<AppState>,
    WriteForm { signed, fields: f }: WriteForm,
) -> Result<Response> {
    let shards = state.sources.shards.len();
    let value = f.get("value").unwrap_or("");
    let filters: Vec<DeadLetterFilter> = match f.get("mode") {
        Some("seqs") => {
            let mut by_shard: BTreeMap<i32, Vec<u64>> = BTreeMap::new();
            for s in value.split(',').filter(|s| !s.trim().is_empty()) {
                let (shard, seq) = shard_seq("value", s)?;
                if shard < 0 || shard as usize >= shards || seq < 1 {
                    return Err(Error::bad("value", format!("not shard:seq: {s:?}")));
                }
                by_shard.entry(shard).or_default().push(seq as u64);
            }
            if by_shard.is_empty() {
                return Err(Error::bad("value", "no dead letter selected"));
            }
            by_shard
                .into_iter()
                .map(|(shard, seqs)| DeadLetterFilter {
                    seqs,
                    shard: shard as u32,
                    ..Default::default()
                })
                .collect()
        }
        Some("order") => {
            let order = crate::form::number("value", value)?;
            if order < 1 {
                return Err(Error::bad("value", format!("not an order id: {order}")));
            }
            vec![DeadLetterFilter {
                order_id: order,
                ..Default::default()
            }]
        }
        Some("all") => vec![DeadLetterFilter {
            all: true,
            ..Default::default()
        }],
        _ => return Err(Error::bad("mode", "seqs, order or all")),
    };
    let reason = f.reason()?;
    let target = f.i64("target")?.unwrap_or(0).max(0) as usize;
    let user = signed.session.user.clone();
    let id = state
        .jobs
        .start(format!("redrive of {target} dead letter(s)"), &user, target);
    let rate = state.cfg.redrive_rate;
    // A call per batch, a pause after each: `rate` per second on average.
    let batch = (rate / 5).clamp(1, 1000);
    let pause = Duration::from_secs_f64(f64::from(batch) / f64::from(rate));
    let admin = state.admin.as_operator(&user);
    let jobs = state.clone();
    tracing::info!(user = %user, job = id, "console: redrive started");
    tokio::spawn(async move {
        let mut done_before = 0;
        for filter in filters {
            let shard = filter.shard;
            let r = admin
                .redrive(filter, &reason, batch, pause, |moved, _, _| {
                    let done: Vec<String> = moved.iter().map(|s| format!("{shard}:{s}")).collect();
                    jobs.jobs.update(id, |j| {
                        j.done.truncate(done_before);
                        j.done.extend(done);
                    });
                })
                .await;
            match r {
                Ok(moved) => done_before += moved.len(),
                Err(e) => {
                    let msg = e.error.to_string();
                    jobs.jobs.update(id, |j| j.error = Some(msg));
                    break;
                }
            }
        }
        jobs.jobs
            .update(id, |j| j.finished = Some(chrono::Utc::now()));
        tracing::info!(job = id, "console: redrive finished");
    });
    Ok(see_other(&Route::job(id)))
}
