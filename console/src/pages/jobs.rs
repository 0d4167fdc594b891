//! A bulk job's progress: refreshed by htmx every second until it finishes.

use axum::{
    extract::{Path, State, rejection::PathRejection},
    response::Html,
};
use maud::html;

use crate::{
    error::{Error, Result},
    extractors::Signed,
    paths::Route,
    state::AppState,
};

pub async fn job(
    State(state): State<AppState>,
    signed: Signed,
    id: std::result::Result<Path<String>, PathRejection>,
) -> Result<Html<String>> {
    let Path(id) = id.map_err(|e| Error::bad("id", e.body_text()))?;
    let id: u64 = id
        .parse()
        .map_err(|_| Error::bad("id", format!("not a job number: {id:?}")))?;
    let job = state
        .jobs
        .get(id)
        .ok_or_else(|| Error::NotFound(format!("no job {id} since the console started")))?;
    let running = job.finished.is_none();
    Ok(signed.page(
        &format!("Job {id}"),
        html! {
            div #job hx-get=[running.then(|| Route::job(id))] hx-trigger=[running.then_some("every 1s")]
                hx-select="#job" hx-swap="outerHTML" {
                p { (job.what) ", started by " (job.user) " at " (job.started.format("%H:%M:%S")) "." }
                p role="status" data-state=(if running { "running" } else if job.error.is_some() { "failed" } else { "done" }) {
                    progress max=(job.target.max(job.done.len())) value=(job.done.len()) aria-label="progress" { (job.done.len()) }
                    " " strong data-done=(job.done.len()) { (job.done.len()) } " of " (job.target)
                    (if running { ", running…" } else if job.error.is_some() { ", stopped" } else { ", done" })
                }
                @if let Some(e) = &job.error { p.error role="alert" { (e) } }
                p { "Handled (shard:seq): " (job.done.join(", ")) }
            }
        },
    ))
}
