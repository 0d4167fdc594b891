//! The quarantine: rows the relay could never publish, one shard at a time, keyset-paginated
//! by seq and filtered; requeue or drop the selected rows (or an order's) after a preview, each
//! through relay-svc's admin API (`RequeueQuarantined`, `DropQuarantined`).

use axum::{
    body::Bytes,
    extract::{RawQuery, State},
    http::HeaderMap,
    response::Html,
};
use maud::{Markup, html};
use outbox_ops::{
    lists::{self, Filter},
    proto::relay::admin::v1::QuarantineSelector,
};

use super::{csrf, reason_and_confirm, seq_list, write_fields};
use crate::{
    AppState, Signed,
    error::{Error, Result},
    form::{Fields, numbers},
    views::fragments::age_ms,
};

/// Rows per page.
const PAGE: i64 = 50;

/// The list's filters from the query (each bad one a 400 naming it).
pub fn filter(f: &Fields) -> Result<Filter> {
    Ok(Filter {
        order_id: f.positive("order")?,
        event_type: f.get("type").map(str::to_owned),
        reason: f.get("reason").map(str::to_owned),
        min_age_secs: f.age("min_age")?,
    })
}

/// The filter form of a list page, with the current values.
pub fn filter_form(
    action: &str,
    f: &Fields,
    with_type: bool,
    shards: Option<(usize, i32)>,
) -> Markup {
    html! {
        form.filters method="get" action=(action) role="search" aria-label="Filters" {
            @if let Some((n, shard)) = shards {
                label { "Shard " select name="shard" { @for s in 0..n { option value=(s) selected[s as i32 == shard] { (s) } } } }
            }
            label { "Order id " input name="order" inputmode="numeric" size="10" value=[f.get("order")]; }
            @if with_type { label { "Event type " input name="type" size="14" value=[f.get("type")]; } }
            label { "Reason contains " input name="reason" size="14" value=[f.get("reason")]; }
            label { "At least this old " input name="min_age" size="5" placeholder="5m" value=[f.get("min_age")]; }
            button type="submit" { "Filter" }
        }
    }
}

/// The query string of the filters, for the next page's link.
pub fn filter_query(f: &Fields, keys: &[&str]) -> String {
    let mut s = url::form_urlencoded::Serializer::new(String::new());
    for k in keys {
        if let Some(v) = f.get(k) {
            s.append_pair(k, v);
        }
    }
    s.finish()
}

pub async fn list(
    State(state): State<AppState>,
    signed: Signed,
    RawQuery(q): RawQuery,
) -> Result<Html<String>> {
    let f = Fields::parse(q.unwrap_or_default().as_bytes());
    let shard = f.shard("shard", state.sources.shards.len())?;
    let filter = filter(&f)?;
    let after = f.i64("after")?;
    let page =
        lists::quarantined(&state.sources.shards[shard as usize], &filter, after, PAGE).await?;
    let act = signed.session.may_write();
    let now = chrono::Utc::now();
    let next = page.next.map(|k| {
        format!(
            "/quarantine?{}&after={k}",
            filter_query(&f, &["shard", "order", "type", "reason", "min_age"])
        )
    });
    Ok(state.page(
        "Quarantine",
        &signed,
        html! {
            (filter_form("/quarantine", &f, true, Some((state.sources.shards.len(), shard))))
            @if page.rows.is_empty() {
                p { "No quarantined row" @if after.is_some() { " after seq " (after.unwrap_or_default()) } " matches." }
            } @else {
                form method="post" action="/quarantine/preview" {
                    (csrf(&signed, "/quarantine/preview"))
                    input type="hidden" name="shard" value=(shard);
                    table {
                        caption { "Quarantined rows of shard " (shard) ", by seq" }
                        thead { tr {
                            @if act { th { "Select" } }
                            th { "Seq" } th { "Order" } th { "Type" } th { "After" } th { "Age" } th { "Reason" }
                        } }
                        tbody {
                            @for r in &page.rows {
                                tr data-seq=(r.seq) {
                                    @if act { td { input type="checkbox" name="seq" value=(r.seq) id={ "q" (r.seq) } aria-label={ "select seq " (r.seq) }; } }
                                    td { label for={ "q" (r.seq) } { (r.seq) } }
                                    td { a href={ "/where?shard=" (shard) "&order=" (r.aggregate_id) } { (r.aggregate_id) } }
                                    td { (r.event_type) }
                                    td { (r.prev_seq.map_or("-".into(), |p| p.to_string())) }
                                    td { (age_ms((now - r.created_at).num_milliseconds().max(0) as u64)) }
                                    td { (r.reason) }
                                }
                            }
                        }
                    }
                    @if act {
                        button type="submit" name="action" value="requeue" { "Requeue selected…" }
                        " "
                        button type="submit" name="action" value="drop" { "Drop selected…" }
                    }
                }
            }
            @if let Some(next) = next { p { a rel="next" href=(next) { "Next page" } } }
        },
    ))
}

/// What a requeue or a drop would move: the rows that are in quarantine now.
pub async fn preview(
    State(state): State<AppState>,
    signed: Signed,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Html<String>> {
    let f = write_fields(&signed, &headers, "/quarantine/preview", &body)?;
    let action = match f.get("action") {
        Some(a @ ("requeue" | "drop")) => a.to_owned(),
        _ => return Err(Error::bad("action", "requeue or drop")),
    };
    let shard = f.shard("shard", state.sources.shards.len())?;
    let seqs: Vec<i64> = f
        .all("seq")
        .into_iter()
        .map(|s| crate::form::number("seq", s))
        .collect::<Result<_>>()?;
    let order = f.positive("order")?;
    if seqs.is_empty() && order.is_none() {
        return Err(Error::bad("seq", "select at least one row"));
    }
    let found =
        lists::quarantined_seqs(&state.sources.shards[shard as usize], &seqs, order).await?;
    let to = format!("/quarantine/{action}");
    Ok(state.page(
        "Quarantine: preview",
        &signed,
        html! {
            @if found.is_empty() {
                p role="status" { "None of these rows is in quarantine any more: nothing to do." }
            } @else {
                form method="post" action=(to) {
                    p role="status" data-count=(found.len()) {
                        (if action == "requeue" { "Requeue" } else { "Drop" }) " "
                        strong { (found.len()) } " row(s) of shard " (shard) ": seq " (seq_list(&found))
                    }
                    p { (if action == "requeue" {
                        "They go back into the outbox; the relay publishes them, then their orders' later events."
                    } else {
                        "They are deleted for good (their content is kept in admin_actions); their orders' later events flow, and mail-svc holds them until their chains are released."
                    }) }
                    (csrf(&signed, &to))
                    input type="hidden" name="shard" value=(shard);
                    input type="hidden" name="seqs" value=(found.iter().map(i64::to_string).collect::<Vec<_>>().join(","));
                    (reason_and_confirm(if action == "requeue" { "Requeue" } else { "Drop" }))
                }
            }
            p { a href={ "/quarantine?shard=" (shard) } { "Back to the quarantine" } }
        },
    ))
}

async fn act(
    state: AppState,
    signed: Signed,
    headers: HeaderMap,
    body: Bytes,
    action: &str,
) -> Result<Html<String>> {
    let path = format!("/quarantine/{action}");
    let f = write_fields(&signed, &headers, &path, &body)?;
    let shard = f.shard("shard", state.sources.shards.len())?;
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
    let (done, before) = if action == "requeue" {
        let r = admin
            .requeue_quarantined(select, shard as u32, &reason)
            .await?;
        (r.requeued, r.already_requeued)
    } else {
        let r = admin
            .drop_quarantined(select, shard as u32, &reason)
            .await?;
        (r.dropped, r.already_dropped)
    };
    tracing::info!(user = %signed.session.user, shard, "console: quarantine {action}: seq {}", seq_list(&done));
    Ok(state.page(
        "Quarantine: done",
        &signed,
        html! {
            p role="status" data-done=(seq_list(&done)) {
                (if action == "requeue" { "Requeued" } else { "Dropped" }) " (shard " (shard) "): seq " (seq_list(&done))
            }
            p { (if action == "requeue" { "Requeued" } else { "Dropped" }) " before: seq " (seq_list(&before)) }
            p { "Recorded in relay-svc's admin_actions with your reason, as " (signed.session.user) "." }
            p { a href={ "/quarantine?shard=" (shard) } { "Back to the quarantine" } }
        },
    ))
}

pub async fn requeue(
    State(state): State<AppState>,
    signed: Signed,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Html<String>> {
    act(state, signed, headers, body, "requeue").await
}

pub async fn drop(
    State(state): State<AppState>,
    signed: Signed,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Html<String>> {
    act(state, signed, headers, body, "drop").await
}
