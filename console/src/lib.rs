//! `outbox-console`: the operator console in the browser. It follows any order's events from
//! the producer's commit to the mail, lists what is stuck (quarantine, held chains, dead letters)
//! with the way out of each, and runs the completeness audit and replay live.
//!
//! It reads the databases the way `outboxctl audit` and `trace` do (read-only sessions) and acts
//! only through the services' admin APIs, with the logic of `outbox-ops`, which outboxctl uses
//! too: an action taken here writes the `admin_actions` row an outboxctl action writes, with the
//! signed-in user as the operator. The fleet page is the exception, as in `outbox-ops`: its
//! actions change the relay fleet's registry in the fleet database directly, each with its
//! `fleet_actions` row (the signed-in user and the reason) in the transaction of its effect.
//!
//! Layout, in kanidm's shape: [`paths`] (every path once: router, navigation, forms),
//! [`routes`] (the router, the headers every answer carries, the event stream, the embedded
//! assets), [`state`] (what handlers read), [`extractors`] (the session, write and field checks
//! a handler cannot forget), [`pages`] (one module per page: handler and template), [`views`]
//! (the page frame, the shared widgets, the live fragments), [`form`] (field-by-field input with
//! errors that name the field), [`fleet`] (the relay fleet's registry and the database a page
//! reads, `db=`), [`auth`] (sign-in, sessions, roles), [`live`] (the sampler and
//! the audit behind the live figures), [`jobs`] (rate-limited bulk redrives and replays),
//! [`config`], [`tls`], [`error`]; here: [`App`].

pub mod auth;
pub mod config;
pub mod error;
pub mod extractors;
pub mod fleet;
pub mod form;
pub mod jobs;
pub mod live;
pub mod pages;
pub mod paths;
pub mod probe;
pub mod routes;
pub mod scope;
pub mod scrape;
pub mod state;
pub mod tls;
pub mod views;

use std::{net::SocketAddr, sync::Arc};

use anyhow::Context;
use outbox_kit::auth::Tokens;
use outbox_ops::admin::Admin;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::{
    auth::Sessions,
    config::Config,
    jobs::Jobs,
    state::{AppState, Inner},
};

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
            live::Sampling {
                admin: admin.clone(),
                sources: sources.clone(),
                metrics: clean(&cfg.metrics),
                refresh: cfg.refresh,
                timeout: cfg.timeout,
                grace: cfg.ops.audit_grace,
                slice: cfg.audit_slice,
            },
            shutdown.clone(),
        );
        let sessions = Sessions::new(viewers, operators, cfg.session_ttl, tls.is_some());
        let state = AppState(Arc::new(Inner {
            cfg: cfg.clone(),
            admin,
            sources,
            fleet: fleet::Fleet::new(cfg.fleet_database_url.as_ref()),
            sessions,
            live,
            jobs: Jobs::default(),
        }));
        if let Some(url) = &cfg.fleet_database_url {
            tracing::info!(fleet = %url, "console: the fleet page reads the registry in {url}");
        }
        let router = routes::router(state);
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
