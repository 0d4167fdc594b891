//! The quarantine: rows the relay could never publish, one outbox database at a time (an orders
//! shard, `shard=`, or any database by name, `db=`: see [`Scope`]), keyset-paginated by seq and
//! filtered; requeue or drop the selected rows (or an order's) after a preview, each
//! through relay-svc's admin API (`RequeueQuarantined`, `DropQuarantined`).

use axum::{extract::State, response::Html};
use maud::html;
use outbox_ops::{lists, proto::relay::admin::v1::QuarantineSelector};

use crate::{
    error::{Error, Result},
    extractors::{Query, Signed, WriteForm},
    form::{Fields, numbers},
    paths::Route,
    scope::Scope,
    state::AppState,
    views::widgets::{
        ListFilters, action_buttons, age_since, hidden_fields, post_form, reason_and_confirm,
        scoped_order_link, seq_list,
    },
};

/// Rows per page.
const PAGE: i64 = 50;

fn filters(state: &AppState) -> ListFilters {
    ListFilters {
        route: Route::Quarantine,
        event_type: true,
        shards: Some(state.sources.shards.len()),
        db: true,
    }
}

/// A requeue or a drop, as the preview's buttons and the routes name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Act {
    Requeue,
    Drop,
}

impl Act {
    fn route(self) -> Route {
        match self {
            Act::Requeue => Route::QuarantineRequeue,
            Act::Drop => Route::QuarantineDrop,
        }
    }

    fn verb(self) -> &'static str {
        match self {
            Act::Requeue => "Requeue",
            Act::Drop => "Drop",
        }
    }

    fn done(self) -> &'static str {
        match self {
            Act::Requeue => "Requeued",
            Act::Drop => "Dropped",
        }
    }
}

pub async fn list(
    State(state): State<AppState>,
    signed: Signed,
    Query(f): Query,
) -> Result<Html<String>> {
    let filters = filters(&state);
    let filter = filters.read(&f)?;
    let after = f.i64("after")?;
    let scope = Scope::read(&state, &f).await?;
    let page = lists::quarantined(&scope.pool, &filter, after, PAGE).await?;
    let act = signed.session.may_write();
    let pairs = scope.pairs();
    let table = html! {
        (hidden_fields(&pairs))
        table {
            caption { "Quarantined rows of " (scope.label()) ", by seq" }
            thead { tr {
                @if act { th { "Select" } }
                th { "Seq" } th { "Order" } th { "Type" } th { "After" } th { "Age" } th { "Reason" }
            } }
            tbody {
                @for r in &page.rows {
                    tr data-seq=(r.seq) {
                        @if act { td { input type="checkbox" name="seq" value=(r.seq) id={ "q" (r.seq) } aria-label={ "select seq " (r.seq) }; } }
                        td { label for={ "q" (r.seq) } { (r.seq) } }
                        td { (scoped_order_link(&pairs, r.aggregate_id)) }
                        td { (r.event_type) }
                        td { (r.prev_seq.map_or("-".into(), |p| p.to_string())) }
                        td { (age_since(r.created_at)) }
                        td { (r.reason) }
                    }
                }
            }
        }
        (action_buttons(act, &[("requeue", "Requeue selected…"), ("drop", "Drop selected…")]))
    };
    Ok(signed.page(
        "Quarantine",
        html! {
            (filters.form(&f, scope.shard))
            @if page.rows.is_empty() {
                p { "No quarantined row" @if let Some(a) = after { " after seq " (a) } " matches." }
            } @else {
                (post_form(&signed, Route::QuarantinePreview, table))
            }
            (filters.next_page(&f, page.next))
        },
    ))
}

fn back(scope: &Scope) -> maud::Markup {
    html! { p { a href=(Route::Quarantine.with(&scope.pairs())) { "Back to the quarantine" } } }
}

/// What a requeue or a drop would move: the rows that are in quarantine now.
pub async fn preview(
    State(state): State<AppState>,
    WriteForm { signed, fields: f }: WriteForm,
) -> Result<Html<String>> {
    let act = match f.get("action") {
        Some("requeue") => Act::Requeue,
        Some("drop") => Act::Drop,
        _ => return Err(Error::bad("action", "requeue or drop")),
    };
    let scope = Scope::read(&state, &f).await?;
    let seqs: Vec<i64> = f
        .all("seq")
        .into_iter()
        .map(|s| crate::form::number("seq", s))
        .collect::<Result<_>>()?;
    let order = f.positive("order")?;
    if seqs.is_empty() && order.is_none() {
        return Err(Error::bad("seq", "select at least one row"));
    }
    let found = lists::quarantined_seqs(&scope.pool, &seqs, order).await?;
    Ok(signed.page(
        "Quarantine: preview",
        html! {
            @if found.is_empty() {
                p role="status" { "None of these rows is in quarantine any more: nothing to do." }
            } @else {
                (post_form(&signed, act.route(), html! {
                    p role="status" data-count=(found.len()) {
                        (act.verb()) " " strong { (found.len()) } " row(s) of " (scope.label()) ": seq " (seq_list(&found))
                    }
                    p { (match act {
                        Act::Requeue => "They go back into the outbox; the relay publishes them, then their orders' later events.",
                        Act::Drop => "They are deleted for good (their content is kept in admin_actions); their orders' later events flow, and mail-svc holds them until their chains are released.",
                    }) }
                    (hidden_fields(&scope.pairs()))
                    input type="hidden" name="seqs" value=(found.iter().map(i64::to_string).collect::<Vec<_>>().join(","));
                    (reason_and_confirm(act.verb()))
                }))
            }
            (back(&scope))
        },
    ))
}

async fn act(state: AppState, signed: Signed, f: Fields, act: Act) -> Result<Html<String>> {
    let scope = Scope::read(&state, &f).await?;
    let shard = scope.shard;
    let seqs = numbers("seqs", f.get("seqs").unwrap_or(""))?;
    if seqs.is_empty() || seqs.iter().any(|s| *s < 1) {
        return Err(Error::bad(
            "seqs",
            "give the seqs to act on (from the preview)",
        ));
    }
    let reason = f.reason()?;
    let admin = state.admin.as_operator(&signed.session.user);
    let select = QuarantineSelector {
        seqs: seqs.iter().map(|s| *s as u64).collect(),
        order_id: 0,
    };
    let (done, before) = match act {
        Act::Requeue => {
            let r = admin
                .requeue_quarantined(select, shard as u32, &reason)
                .await?;
            (r.requeued, r.already_requeued)
        }
        Act::Drop => {
            let r = admin
                .drop_quarantined(select, shard as u32, &reason)
                .await?;
            (r.dropped, r.already_dropped)
        }
    };
    tracing::info!(user = %signed.session.user, shard, "console: quarantine {}: seq {}", act.verb(), seq_list(&done));
    Ok(signed.page(
        "Quarantine: done",
        html! {
            p role="status" data-done=(seq_list(&done)) {
                (act.done()) " (" (scope.label()) "): seq " (seq_list(&done))
            }
            p { (act.done()) " before: seq " (seq_list(&before)) }
            p { "Recorded in relay-svc's admin_actions with your reason, as " (signed.session.user) "." }
            (back(&scope))
        },
    ))
}

pub async fn requeue(State(state): State<AppState>, w: WriteForm) -> Result<Html<String>> {
    act(state, w.signed, w.fields, Act::Requeue).await
}

pub async fn drop(State(state): State<AppState>, w: WriteForm) -> Result<Html<String>> {
    act(state, w.signed, w.fields, Act::Drop).await
}
