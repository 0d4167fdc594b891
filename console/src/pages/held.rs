//! Held chains: orders whose consumer holds events until a missing predecessor arrives,
//! keyset-paginated by (shard, order), filtered; release one after a preview, through
//! mail-svc's admin API (`ReleaseHeld`: skips the missing predecessors, applies the held events).

use axum::{extract::State, response::Html};
use maud::html;
use outbox_ops::lists::{self, Filter};

use crate::{
    error::{Error, Result},
    extractors::{Query, Signed, WriteForm},
    form::shard_seq,
    paths::Route,
    state::AppState,
    views::widgets::{ListFilters, age_since, order_link, post_form, reason_and_confirm, seq_list},
};

const PAGE: i64 = 50;

const FILTERS: ListFilters = ListFilters::mail(Route::Held);

pub async fn list(
    State(state): State<AppState>,
    signed: Signed,
    Query(f): Query,
) -> Result<Html<String>> {
    let filter = FILTERS.read(&f)?;
    let after = f.get("after").map(|a| shard_seq("after", a)).transpose()?;
    let page = lists::held(&state.sources.mail, &filter, after, PAGE).await?;
    let act = signed.session.may_write();
    Ok(signed.page(
        "Held chains",
        html! {
            (FILTERS.form(&f, 0))
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
                                td { (order_link(h.shard, h.order_id)) }
                                td { (h.applied.map_or("-".into(), |a| a.to_string())) }
                                td { (h.waiting_for) }
                                td { (seq_list(&h.held)) }
                                td { (age_since(h.oldest)) }
                                td {
                                    @match &h.dead_reason {
                                        Some(r) => a href=(Route::DeadLetters.with(&[("order", h.order_id.to_string())])) { "yes: " (r) " (redrive it rather than release)" },
                                        None => "no",
                                    }
                                }
                                @if act {
                                    td {
                                        (post_form(&signed, Route::HeldPreview, html! {
                                            input type="hidden" name="order" value=(h.order_id);
                                            button type="submit" aria-label={ "Release order " (h.order_id) "…" } { "Release…" }
                                        }))
                                    }
                                }
                            }
                        }
                    }
                }
            }
            (FILTERS.next_page(&f, page.next.map(|(s, o)| format!("{s}:{o}"))))
        },
    ))
}

/// The order of a held-chain form: required, an order id.
fn order(f: &crate::form::Fields) -> Result<i64> {
    f.positive("order")?
        .ok_or_else(|| Error::bad("order", "required"))
}

pub async fn preview(
    State(state): State<AppState>,
    WriteForm { signed, fields: f }: WriteForm,
) -> Result<Html<String>> {
    let order = order(&f)?;
    let filter = Filter {
        order_id: Some(order),
        ..Filter::default()
    };
    let page = lists::held(&state.sources.mail, &filter, None, 10).await?;
    Ok(signed.page(
        "Held chain: preview",
        html! {
            @if page.rows.is_empty() {
                p role="status" { "Order " (order) " holds no event any more: nothing to do." }
            }
            @for h in &page.rows {
                (post_form(&signed, Route::HeldRelease, html! {
                    p role="status" data-count=(h.held.len()) {
                        "Release order " (order) " (shard " (h.shard) "): skip seq " (h.waiting_for)
                        " and what else is missing before the held events, then apply "
                        strong { (h.held.len()) } " held event(s): seq " (seq_list(&h.held)) "."
                    }
                    @if let Some(r) = &h.dead_reason {
                        p.error { "The awaited seq " (h.waiting_for) " is dead-lettered (" (r) "): a redrive would apply it instead of skipping it." }
                    }
                    input type="hidden" name="order" value=(order);
                    (reason_and_confirm("Release"))
                }))
            }
            p { a href=(Route::Held) { "Back to the held chains" } }
        },
    ))
}

pub async fn release(
    State(state): State<AppState>,
    WriteForm { signed, fields: f }: WriteForm,
) -> Result<Html<String>> {
    let order = order(&f)?;
    let reason = f.reason()?;
    let r = state
        .admin
        .as_operator(&signed.session.user)
        .release_held(order, &reason)
        .await?;
    tracing::info!(user = %signed.session.user, order, "console: released held chain");
    Ok(signed.page(
        "Held chain: done",
        html! {
            @if r.already_released {
                p role="status" { "Order " (order) " was released before; nothing held now (nothing changed)." }
            } @else {
                p role="status" data-done=(seq_list(&r.released)) {
                    "Order " (order) ": skipped seq " (seq_list(&r.skipped)) ", released " (seq_list(&r.released)) " (their mails are queued, in chain order)."
                }
            }
            p { "Recorded in mail-svc's admin_actions with your reason, as " (signed.session.user) "." }
            p { a href=(Route::Held) { "Back to the held chains" } }
        },
    ))
}
