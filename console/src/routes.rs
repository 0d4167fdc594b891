//! The router: every [`Route`] mounted on its handler, the headers every answer carries, the
//! embedded assets and the live event stream.

use std::{convert::Infallible, time::Duration};

use axum::{
    Router,
    extract::State,
    http::{HeaderValue, header},
    response::{
        IntoResponse, Response,
        sse::{Event, KeepAlive, Sse},
    },
    routing::{get, post},
};
use futures::Stream;

use crate::{error::Error, extractors::Signed, pages, paths::Route, state::AppState, views};

/// htmx, vendored from the npm package `htmx.org` at the version `assets/package.json` pins.
const HTMX: &[u8] = include_bytes!("../assets/htmx.min.js");
/// The console's own script: the live stream into the page.
const CONSOLE_JS: &str = include_str!("../assets/console.js");

/// Every route.
pub fn router(state: AppState) -> Router {
    use pages::*;
    Router::new()
        .route(Route::Overview.as_str(), get(overview::overview))
        .route(Route::Live.as_str(), get(live_stream))
        .route(
            Route::SignIn.as_str(),
            get(sign_in::form).post(sign_in::sign_in),
        )
        .route(Route::SignOut.as_str(), post(sign_in::sign_out))
        .route(Route::Where.as_str(), get(where_is::where_is))
        .route(Route::Quarantine.as_str(), get(quarantine::list))
        .route(Route::QuarantinePreview.as_str(), post(quarantine::preview))
        .route(Route::QuarantineRequeue.as_str(), post(quarantine::requeue))
        .route(Route::QuarantineDrop.as_str(), post(quarantine::drop))
        .route(Route::Held.as_str(), get(held::list))
        .route(Route::HeldPreview.as_str(), post(held::preview))
        .route(Route::HeldRelease.as_str(), post(held::release))
        .route(Route::DeadLetters.as_str(), get(dead_letters::list))
        .route(
            Route::DeadLettersPreview.as_str(),
            post(dead_letters::preview),
        )
        .route(
            Route::DeadLettersRedrive.as_str(),
            post(dead_letters::redrive),
        )
        .route(Route::Audit.as_str(), get(audit::audit))
        .route(
            Route::Replay.as_str(),
            get(audit::dry_run).post(audit::replay),
        )
        .route(Route::Fleet.as_str(), get(fleet::list))
        .route(Route::FleetAdd.as_str(), post(fleet::add))
        .route(Route::FleetDrain.as_str(), post(fleet::drain))
        .route(Route::FleetRemove.as_str(), post(fleet::remove))
        .route(Route::Job.as_str(), get(jobs::job))
        .route(Route::Htmx.as_str(), get(htmx))
        .route(Route::ConsoleJs.as_str(), get(console_js))
        .route(Route::Health.as_str(), get(|| async { "ok" }))
        .fallback(|| async { Error::NotFound("no such page".into()) })
        .layer(axum::middleware::map_response(security_headers))
        .layer(axum::middleware::from_fn(server_timing))
        .with_state(state)
}

/// `Server-Timing: app;dur=<ms>` on every answer: the time the console took to make it (the
/// browser's developer tools show it; bench section 9 reads it).
async fn server_timing(request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    let started = std::time::Instant::now();
    let mut r = next.run(request).await;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    if let Ok(v) = HeaderValue::from_str(&format!("app;dur={ms:.2}")) {
        r.headers_mut().insert("server-timing", v);
    }
    r
}

/// Headers every answer carries: no framing by other sites, no sniffing, no referrer leaving
/// the console, scripts only from the console itself.
async fn security_headers(mut r: Response) -> Response {
    let h = r.headers_mut();
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    h.insert("referrer-policy", HeaderValue::from_static("same-origin"));
    h.insert(
        "content-security-policy",
        HeaderValue::from_static(
            "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; \
             frame-ancestors 'none'; form-action 'self'",
        ),
    );
    h.entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    r
}

async fn htmx() -> impl IntoResponse {
    (
        [
            (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=86400"),
        ],
        HTMX,
    )
}

async fn console_js() -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        CONSOLE_JS,
    )
}

/// The live figures as server-sent events: `figures` (the overview's) and `audit` (the
/// lagging orders), each sent when it changes (at least every `CONSOLE_REFRESH`). The stream
/// ends with its session: at sign-out, at expiry, and at the first refresh after a reload
/// rotated its token out.
async fn live_stream(
    State(state): State<AppState>,
    signed: Signed,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let mut figures = state.live.figures.clone();
    let mut audit = state.live.audit.clone();
    figures.mark_changed();
    audit.mark_changed();
    let stream = async_stream(move |tx| async move {
        let session = signed.session;
        loop {
            let event = tokio::select! {
                _ = session.ended() => break,
                changed = figures.changed() => {
                    if changed.is_err() { break; }
                    let html = views::fragments::figures(&figures.borrow_and_update(), &audit.borrow());
                    Event::default().event("figures").data(html.into_string())
                }
                changed = audit.changed() => {
                    if changed.is_err() { break; }
                    let html = views::fragments::audit_table(&audit.borrow_and_update(), Default::default());
                    Event::default().event("audit").data(html.into_string())
                }
            };
            if state.sessions.alive(&signed.id).is_none() || tx.send(event).await.is_err() {
                break;
            }
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

/// A stream fed by a task through a small channel; the task ends when the client goes.
fn async_stream<F, Fut>(f: F) -> impl Stream<Item = Result<Event, Infallible>>
where
    F: FnOnce(tokio::sync::mpsc::Sender<Event>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    tokio::spawn(f(tx));
    futures::StreamExt::map(tokio_stream::wrappers::ReceiverStream::new(rx), Ok)
}
