//! `outbox-console`: the operator console in the browser. It follows any order's events from
//! the producer's commit to the mail, lists what is stuck (quarantine, held chains, dead letters)
//! with the way out of each, and runs the completeness audit and replay live.
//!
//! It reads the databases the way `outboxctl audit` and `trace` do (read-only sessions) and acts
//! only through the services' admin APIs, with the logic of `outbox-ops`, which outboxctl uses
//! too: an action taken here writes the `admin_actions` row an outboxctl action writes, with the
//! signed-in user as the operator.
//!
//! Layout: [`config`] (settings), [`auth`] (sign-in, sessions, roles, the write checks),
//! [`live`] (the sampler and the audit behind the live figures), [`jobs`] (rate-limited bulk
//! redrives and replays with their progress), [`pages`] (one module per page: handler and
//! template), [`views`] (the page frame and the live fragments), [`form`] (field-by-field input
//! with errors that name the field), [`tls`] (HTTPS), [`error`]; here: the state, the routes,
//! the event stream, the embedded assets and [`App`].

pub mod auth;
pub mod config;
pub mod error;
pub mod form;
pub mod jobs;
pub mod live;
pub mod pages;
pub mod tls;
pub mod views;

use std::{convert::Infallible, net::SocketAddr, sync::Arc, time::Duration};

use anyhow::Context;
use axum::{
    Router,
    extract::{FromRequestParts, State},
    http::{HeaderValue, Method, StatusCode, header, request::Parts},
    response::{
        Html, IntoResponse, Redirect, Response,
        sse::{Event, KeepAlive, Sse},
    },
    routing::{get, post},
};
use futures::Stream;
use outbox_kit::auth::Tokens;
use outbox_ops::{admin::Admin, audit::Sources};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::{
    auth::{Session, Sessions},
    config::Config,
    error::Error,
    jobs::Jobs,
    live::Live,
};

/// htmx, vendored from the npm package `htmx.org` at the version `assets/package.json` pins.
const HTMX: &[u8] = include_bytes!("../assets/htmx.min.js");
/// The console's own script: the live stream into the page.
const CONSOLE_JS: &str = include_str!("../assets/console.js");

/// What every handler reads.
#[derive(Debug, Clone)]
pub struct AppState(Arc<Inner>);

#[derive(Debug)]
pub struct Inner {
    pub cfg: Config,
    /// The services, called as the console (each action adds the signed-in user).
    pub admin: Admin,
    pub sources: Sources,
    pub sessions: Sessions,
    pub live: Live,
    pub jobs: Jobs,
}

impl std::ops::Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl AppState {
    /// A full page for `signed`.
    pub fn page(&self, title: &str, signed: &Signed, content: maud::Markup) -> Html<String> {
        views::layout::page(
            title,
            &signed.session,
            &signed.session.form_token("/sign-out"),
            content,
        )
    }
}

/// The signed-in user of a request. Without a live session a page redirects to the sign-in
/// and a write is refused (403).
#[derive(Debug, Clone)]
pub struct Signed {
    pub id: String,
    pub session: Session,
}

impl FromRequestParts<AppState> for Signed {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Response> {
        match state.sessions.current(&parts.headers) {
            Some((id, session)) => Ok(Signed { id, session }),
            None if parts.method == Method::GET => Err(Redirect::to("/sign-in").into_response()),
            None => {
                Err(Error::Forbidden("not signed in (or the session ended)".into()).into_response())
            }
        }
    }
}

/// The console, bound and serving.
#[derive(Debug)]
pub struct App {
    addr: SocketAddr,
    served: JoinHandle<std::io::Result<()>>,
}

impl App {
    /// Checks the settings, reads the token files, connects the read-only pools, starts the live
    /// figures and binds `CONSOLE_ADDR` (port 0 picks a free one, see [`App::addr`]). Everything
    /// stops when `shutdown` is cancelled.
    pub async fn build(cfg: Config, shutdown: CancellationToken) -> anyhow::Result<App> {
        cfg.validate()?;
        let viewers = cfg
            .viewer_tokens_file
            .as_deref()
            .map(|p| Tokens::load("CONSOLE_VIEWER_TOKENS_FILE", p))
            .transpose()?;
        let operators = cfg
            .operator_tokens_file
            .as_deref()
            .map(|p| Tokens::load("CONSOLE_OPERATOR_TOKENS_FILE", p))
            .transpose()?;
        let lists: Vec<Tokens> = viewers.iter().chain(operators.iter()).cloned().collect();
        outbox_kit::auth::reload_on_sighup(lists, shutdown.clone());
        let tls = tls::load(&cfg.tls)?;
        let sources = cfg.ops.connect().await.map_err(anyhow::Error::msg)?;
        let admin_token = cfg.admin_token()?;
        let auth_token = cfg.auth_token()?;
        let admin = Admin {
            orders: cfg.orders_addr.trim().to_owned(),
            relays: clean(&cfg.relay_addr),
            mails: clean(&cfg.mail_addr),
            read_token: auth_token.or_else(|| admin_token.clone()),
            token: admin_token,
            tls: cfg.grpc_tls.clone(),
            operator: None,
            timeout: cfg.timeout,
        };
        let live = live::start(
            admin.clone(),
            sources.clone(),
            cfg.refresh,
            cfg.ops.audit_grace,
            cfg.audit_slice,
            shutdown.clone(),
        );
        let sessions = Sessions::new(viewers, operators, cfg.session_ttl, tls.is_some());
        let state = AppState(Arc::new(Inner {
            cfg: cfg.clone(),
            admin,
            sources,
            sessions,
            live,
            jobs: Jobs::default(),
        }));
        let router = router(state);
        let listener = tokio::net::TcpListener::bind(cfg.addr)
            .await
            .with_context(|| format!("CONSOLE_ADDR: cannot bind {}", cfg.addr))?;
        let addr = listener.local_addr()?;
        let stop = shutdown.clone();
        let served = match tls {
            Some(acceptor) => {
                let listener = tls::Listener::new(listener, acceptor);
                tokio::spawn(async move {
                    axum::serve(listener, router)
                        .with_graceful_shutdown(async move { stop.cancelled().await })
                        .await
                })
            }
            None => tokio::spawn(async move {
                axum::serve(listener, router)
                    .with_graceful_shutdown(async move { stop.cancelled().await })
                    .await
            }),
        };
        tracing::info!(
            %addr,
            "console: serving on {}://{addr}",
            if cfg.tls_on() { "https" } else { "http" }
        );
        Ok(App { addr, served })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves until the shutdown token is cancelled (open event streams end with it).
    pub async fn run(self) -> anyhow::Result<()> {
        self.served.await?.context("serving the console")?;
        Ok(())
    }
}

fn clean(v: &[String]) -> Vec<String> {
    v.iter()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Every route.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/", get(pages::overview::overview))
        .route("/live", get(live_stream))
        .route(
            "/sign-in",
            get(pages::sign_in::form).post(pages::sign_in::sign_in),
        )
        .route("/sign-out", post(pages::sign_in::sign_out))
        .route("/where", get(pages::where_is::where_is))
        .route("/quarantine", get(pages::quarantine::list))
        .route("/quarantine/preview", post(pages::quarantine::preview))
        .route("/quarantine/requeue", post(pages::quarantine::requeue))
        .route("/quarantine/drop", post(pages::quarantine::drop))
        .route("/held", get(pages::held::list))
        .route("/held/preview", post(pages::held::preview))
        .route("/held/release", post(pages::held::release))
        .route("/dead-letters", get(pages::dead_letters::list))
        .route("/dead-letters/preview", post(pages::dead_letters::preview))
        .route("/dead-letters/redrive", post(pages::dead_letters::redrive))
        .route("/audit", get(pages::audit::audit))
        .route(
            "/replay",
            get(pages::audit::dry_run).post(pages::audit::replay),
        )
        .route("/jobs/{id}", get(pages::jobs::job))
        .route("/assets/htmx.min.js", get(htmx))
        .route("/assets/console.js", get(console_js))
        .route("/healthz", get(|| async { "ok" }))
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
/// lagging orders), each sent when it changes (at least every `CONSOLE_REFRESH`).
async fn live_stream(
    State(state): State<AppState>,
    _signed: Signed,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let mut figures = state.live.figures.clone();
    let mut audit = state.live.audit.clone();
    figures.mark_changed();
    audit.mark_changed();
    let stream = async_stream(move |tx| async move {
        loop {
            tokio::select! {
                changed = figures.changed() => {
                    if changed.is_err() { break; }
                    let html = views::fragments::figures(&figures.borrow_and_update(), &audit.borrow());
                    if tx.send(Event::default().event("figures").data(html.into_string())).await.is_err() { break; }
                }
                changed = audit.changed() => {
                    if changed.is_err() { break; }
                    let html = views::fragments::audit_table(&audit.borrow_and_update(), None);
                    if tx.send(Event::default().event("audit").data(html.into_string())).await.is_err() { break; }
                }
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

/// 303 to `to` (after a post).
pub fn see_other(to: &str) -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, to.to_owned())]).into_response()
}
