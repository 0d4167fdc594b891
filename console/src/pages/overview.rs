//! The overview: every service's health, the relay's backlog, what is stuck and the orders
//! lagging by audit stage, live (server-sent events), every figure a link to its list.

use axum::{extract::State, response::Html};
use maud::html;

use crate::{extractors::Signed, state::AppState, views::fragments};

pub async fn overview(State(state): State<AppState>, signed: Signed) -> Html<String> {
    let figures = state.live.figures.borrow().clone();
    let audit = state.live.audit.borrow().clone();
    signed.page(
        "Overview",
        html! {
            div data-live="figures" aria-live="polite" { (fragments::figures(&figures, &audit)) }
        },
    )
}
