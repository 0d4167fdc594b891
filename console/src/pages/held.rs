//! Held chains: orders whose consumer holds events until a missing predecessor arrives,
//! keyset-paginated by (shard, order), filtered; release one after a preview, through
//! mail-svc's admin API (`ReleaseHeld`: skips the missing predecessors, applies the held events).

use axum::{
    body::Bytes,
    extract::{RawQuery, State},
    http::HeaderMap,
    response::Html,
};
use maud::html;
use outbox_ops::lists::{self, Filter};

use super::{
    csrf,
    quarantine::{filter_form, filter_query},
    reason_and_confirm, seq_list, write_fields,
};
use crate::{
    AppState, Signed,
    error::{Error, Result},
    form::{Fields, shard_seq},
    views::fragments::age_ms,
};

const PAGE: i64 = 50;

pub async fn list(
    State(state): State<AppState>,
    signed: Signed,
    RawQuery(q): RawQuery,
) -> Result<Html<String>> {
    let f = Fields::parse(q.unwrap_or_default().as_bytes());
    let filter = Filter {
        order_id: f.positive("order")?,
        event_type: None,
        reason: f.get("reason").map(str::to_owned),
        min_age_secs: f.age("min_age")?,
    };
    let after = f.get("after").map(|a| shard_seq("after", a)).transpose()?;
    let page = lists::held(&state.sources.mail, &filter, after, PAGE).await?;
    let act = signed.session.may_write();
    let now = chrono::Utc::now();
    let next = page.next.map(|(s, o)| {
        format!(
            "/held?{}&after={s}:{o}",
            filter_query(&f, &["order", "reason", "min_age"])
        )
    });
    Ok(state.page(
        "Held chains",
        &signed,
        html! {
            (filter_form("/held", &f, false, None))
            @if page.rows.is_empty() {
                p { "No held chain matches." }
            } @else {
                table {
                    caption { "Orders whose consumer holds events, by shard and order" }
                    thead { tr {
                        th { "Shard" } th { "Order" } th { "Applied up to" } th { "Waiting for" }
                        th { "Held" } th { "Oldest held" } th { "Awaited seq dead-lettered?" }
                        @if act { th { "Action" } }
                    } }
                    tbody {
                        @for h in &page.rows {
                            tr data-order=(h.order_id) {
                                td { (h.shard) }
                                td { a href={ "/where?shard=" (h.shard) "&order=" (h.order_id) } { (h.order_id) } }
                                td { (h.applied.map_or("-".into(), |a| a.to_string())) }
                                td { (h.waiting_for) }
                                td { (seq_list(&h.held)) }
                                td { (age_ms((now - h.oldest).num_milliseconds().max(0) as u64)) }
                                td {
                                    @match &h.dead_reason {
                                        Some(r) => a href={ "/dead-letters?order=" (h.order_id) } { "yes: " (r) " (redrive it rather than release)" },
                                        None => "no",
                                    }
                                }
                                @if act {
                                    td {
                                        form method="post" action="/held/preview" {
                                            (csrf(&signed, "/held/preview"))
                                            input type="hidden" name="order" value=(h.order_id);
                                            button type="submit" aria-label={ "Release order " (h.order_id) "…" } { "Release…" }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            @if let Some(next) = next { p { a rel="next" href=(next) { "Next page" } } }
        },
    ))
}

pub async fn preview(
    State(state): State<AppState>,
    signed: Signed,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Html<String>> {
    let f = write_fields(&signed, &headers, "/held/preview", &body)?;
    let order = f
        .positive("order")?
        .ok_or_else(|| Error::bad("order", "required"))?;
    let filter = Filter {
        order_id: Some(order),
        ..Filter::default()
    };
    let page = lists::held(&state.sources.mail, &filter, None, 10).await?;
    Ok(state.page(
        "Held chain: preview",
        &signed,
        html! {
            @if page.rows.is_empty() {
                p role="status" { "Order " (order) " holds no event any more: nothing to do." }
            }
            @for h in &page.rows {
                form method="post" action="/held/release" {
                    p role="status" data-count=(h.held.len()) {
                        "Release order " (order) " (shard " (h.shard) "): skip seq " (h.waiting_for)
                        " and what else is missing before the held events, then apply "
                        strong { (h.held.len()) } " held event(s): seq " (seq_list(&h.held)) "."
                    }
                    @if let Some(r) = &h.dead_reason {
                        p.error { "The awaited seq " (h.waiting_for) " is dead-lettered (" (r) "): a redrive would apply it instead of skipping it." }
                    }
                    (csrf(&signed, "/held/release"))
                    input type="hidden" name="order" value=(order);
                    (reason_and_confirm("Release"))
                }
            }
            p { a href="/held" { "Back to the held chains" } }
        },
    ))
}

pub async fn release(
    State(state): State<AppState>,
    signed: Signed,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Html<String>> {
    let f = write_fields(&signed, &headers, "/held/release", &body)?;
    let order = f
        .positive("order")?
        .ok_or_else(|| Error::bad("order", "required"))?;
    let reason = f.reason()?;
    let r = state
        .admin
        .as_operator(&signed.session.user)
        .release_held(order, &reason)
        .await?;
    tracing::info!(user = %signed.session.user, order, "console: released held chain");
    Ok(state.page(
        "Held chain: done",
        &signed,
        html! {
            @if r.already_released {
                p role="status" { "Order " (order) " was released before; nothing held now (nothing changed)." }
            } @else {
                p role="status" data-done=(seq_list(&r.released)) {
                    "Order " (order) ": skipped seq " (seq_list(&r.skipped)) ", released " (seq_list(&r.released)) " (their mails are queued, in chain order)."
                }
            }
            p { "Recorded in mail-svc's admin_actions with your reason, as " (signed.session.user) "." }
            p { a href="/held" { "Back to the held chains" } }
        },
    ))
}
