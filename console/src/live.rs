//! The live figures. Every figure has a reader of its own that reads it every `CONSOLE_REFRESH`
//! with its own timeout (`CONSOLE_TIMEOUT`), so a service that answers slowly or not at all
//! holds back its own figure only: the others go on, and a figure whose read failed or is
//! overdue is marked stale, its last value kept. A ticker publishes the whole into a `watch`
//! channel once per interval, which the pages read and the server-sent events stream forwards:
//! however many browsers watch, each source is read once per interval.
//!
//! The rates (events committed, published and mailed per second, and the oldest unsent age)
//! come from the services' own Prometheus counters ([`crate::scrape`]); the last 15 minutes of
//! samples are kept here for the overview's chart.

use std::{
    collections::{BTreeMap, VecDeque},
    future::Future,
    sync::Arc,
    time::Duration,
};

use chrono::{DateTime, Utc};
use outbox_ops::{
    admin::Admin,
    audit::{Auditor, Report, Sources, Stage},
    lists,
};
use outbox_proto::{
    mail::v1::{GetStatusRequest as MailStatusRequest, mail_service_client::MailServiceClient},
    relay::{
        admin::v1::ListBacklogRequest,
        v1::{GetStatusRequest as RelayStatusRequest, relay_service_client::RelayServiceClient},
    },
};
use tokio::{sync::watch, time::Instant};
use tokio_util::sync::CancellationToken;
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

use crate::scrape::{self, Counters};

/// A count read from a database, or why it could not be read.
type Count = Result<i64, String>;

/// How far back the rates chart goes.
pub const RATES_WINDOW: Duration = Duration::from_secs(15 * 60);

/// Each rate is the counters' change over about this long (as Prometheus' `rate(…[10s])`): an
/// interval of a second holds too few events to read a rate from.
pub const RATE_SPAN: Duration = Duration::from_secs(10);

/// One figure as last read.
#[derive(Debug, Clone)]
pub struct Reading<T> {
    /// The last value read (kept when a later read fails).
    pub value: Option<T>,
    /// Not read within two intervals, or the last read failed: `value` may be old.
    pub stale: bool,
    /// Why the last read failed.
    pub problem: Option<String>,
    read_at: Option<Instant>,
}

impl<T> Default for Reading<T> {
    fn default() -> Self {
        Self {
            value: None,
            stale: false,
            problem: None,
            read_at: None,
        }
    }
}

impl<T> Reading<T> {
    fn put(&mut self, read: Result<T, String>) {
        match read {
            Ok(v) => {
                self.value = Some(v);
                self.problem = None;
            }
            Err(e) => self.problem = Some(e),
        }
        self.read_at = Some(Instant::now());
    }

    fn age(&mut self, now: Instant, overdue: Duration, started: Instant) {
        let since = self.read_at.unwrap_or(started);
        self.stale = self.problem.is_some() || now.duration_since(since) > overdue;
    }
}

/// What a service instance's status says.
#[derive(Debug, Clone, Default)]
pub struct Status {
    /// `SERVING`, `NOT_SERVING`, `UNREACHABLE`, ...
    pub health: String,
    /// Why the broker blocks it (a RabbitMQ resource alarm), and for how long (ms).
    pub blocked: Option<(String, u64)>,
    /// What else its status says (leader or standby, ...).
    pub detail: String,
}

/// One service instance as the overview shows it.
#[derive(Debug, Clone)]
pub struct Instance {
    pub service: &'static str,
    pub addr: String,
    pub status: Reading<Status>,
}

/// One point of the rates chart: per second since the sample before.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub at: DateTime<Utc>,
    pub committed: Option<f64>,
    pub published: Option<f64>,
    pub mailed: Option<f64>,
    /// The oldest unsent event's age, seconds.
    pub oldest_unsent: Option<f64>,
}

/// The overview's figures at one moment.
#[derive(Debug, Clone, Default)]
pub struct Figures {
    pub at: Option<DateTime<Utc>>,
    pub instances: Vec<Instance>,
    /// Rows in the outbox, and the oldest one's age in ms.
    pub backlog: Reading<(u64, u64)>,
    pub quarantined: Reading<i64>,
    pub held: Reading<i64>,
    pub dead_letters: Reading<i64>,
    /// The counters behind the rates, as last scraped.
    pub counters: Reading<Counters>,
    /// The rates of the last [`RATES_WINDOW`], oldest first.
    pub rates: VecDeque<Sample>,
    /// The counters of the last [`RATE_SPAN`], oldest first: each rate is taken over it.
    history: VecDeque<(Instant, Counters)>,
}

impl Figures {
    /// What could not be read, in words.
    pub fn problems(&self) -> Vec<String> {
        let mut p: Vec<String> = self
            .instances
            .iter()
            .filter_map(|i| i.status.problem.clone())
            .chain(
                [
                    &self.backlog.problem,
                    &self.quarantined.problem,
                    &self.held.problem,
                    &self.dead_letters.problem,
                    &self.counters.problem,
                ]
                .into_iter()
                .flatten()
                .cloned(),
            )
            .collect();
        p.dedup();
        p
    }

    /// Marks what is overdue or failed as stale.
    fn age(&mut self, now: Instant, overdue: Duration, started: Instant) {
        for i in &mut self.instances {
            i.status.age(now, overdue, started);
        }
        self.backlog.age(now, overdue, started);
        self.quarantined.age(now, overdue, started);
        self.held.age(now, overdue, started);
        self.dead_letters.age(now, overdue, started);
        self.counters.age(now, overdue, started);
    }

    /// Adds the rates over the last [`RATE_SPAN`] (a counter that went back, a restarted
    /// service, counts as no rate for that sample).
    fn add_rates(&mut self, counters: Counters, now: Instant) {
        if let Some(&(then, before)) = self.history.front() {
            let secs = now.duration_since(then).as_secs_f64();
            let rate = |a: Option<f64>, b: Option<f64>| match (a, b) {
                (Some(a), Some(b)) if secs > 0.0 && a >= b => Some((a - b) / secs),
                _ => None,
            };
            self.rates.push_back(Sample {
                at: Utc::now(),
                committed: rate(counters.committed, before.committed),
                published: rate(counters.published, before.published),
                mailed: rate(counters.mailed, before.mailed),
                oldest_unsent: self
                    .backlog
                    .value
                    .filter(|_| !self.backlog.stale)
                    .map(|(n, ms)| if n == 0 { 0.0 } else { ms as f64 / 1000.0 }),
            });
        }
        self.history.push_back((now, counters));
        while self
            .history
            .front()
            .is_some_and(|(t, _)| now.duration_since(*t) > RATE_SPAN)
        {
            self.history.pop_front();
        }
        let oldest = Utc::now() - RATES_WINDOW;
        while self.rates.front().is_some_and(|s| s.at < oldest) {
            self.rates.pop_front();
        }
    }
}

/// The last audit pass.
#[derive(Debug, Clone, Default)]
pub struct Audit {
    pub at: Option<DateTime<Utc>>,
    pub report: Option<Arc<Report>>,
    pub error: Option<String>,
}

impl Audit {
    /// Lagging orders by stage (`None` before the first pass).
    pub fn counts(&self) -> Option<BTreeMap<Stage, usize>> {
        self.report.as_ref().map(|r| r.counts())
    }
}

/// The receivers the pages and the event stream read.
#[derive(Debug, Clone)]
pub struct Live {
    pub figures: watch::Receiver<Figures>,
    pub audit: watch::Receiver<Arc<Audit>>,
}

/// How the sampler reads and how often.
#[derive(Debug, Clone)]
pub struct Sampling {
    pub admin: Admin,
    pub sources: Sources,
    /// The services' Prometheus listeners.
    pub metrics: Vec<String>,
    pub refresh: Duration,
    /// One read's limit (`CONSOLE_TIMEOUT`).
    pub timeout: Duration,
    pub grace: Duration,
    pub slice: i64,
}

/// Starts the readers, the ticker and the audit; all stop with `shutdown`.
pub fn start(s: Sampling, shutdown: CancellationToken) -> Live {
    let mut figures = Figures::default();
    let instances = std::iter::once(("orders-svc", s.admin.orders.clone()))
        .chain(s.admin.relays.iter().map(|a| ("relay-svc", a.clone())))
        .chain(s.admin.mails.iter().map(|a| ("mail-svc", a.clone())));
    for (service, addr) in instances {
        figures.instances.push(Instance {
            service,
            addr,
            status: Reading::default(),
        });
    }
    let n = figures.instances.len();
    let (tx, rx) = watch::channel(figures);
    let tx = Arc::new(tx);
    let reader = Reader {
        tx: tx.clone(),
        refresh: s.refresh,
        timeout: s.timeout,
        shutdown: shutdown.clone(),
    };
    for i in 0..n {
        let (admin, service, addr) = {
            let f = tx.borrow();
            (
                s.admin.clone(),
                f.instances[i].service,
                f.instances[i].addr.clone(),
            )
        };
        reader.spawn(
            move || {
                let (admin, addr) = (admin.clone(), addr.clone());
                async move { Ok(instance(&admin, service, &addr).await) }
            },
            move |f| &mut f.instances[i].status,
        );
    }
    let admin = s.admin.clone();
    reader.spawn(move || backlog(admin.clone()), |f| &mut f.backlog);
    let shards = s.sources.shards.clone();
    reader.spawn(
        move || {
            let shards = shards.clone();
            async move {
                let counts = futures::future::join_all(shards.iter().map(lists::quarantined_count));
                let mut total = 0;
                for (i, n) in counts.await.into_iter().enumerate() {
                    total +=
                        n.map_err(|e| db_problem(e, &format!("the orders database of shard {i}")))?;
                }
                Ok(total)
            }
        },
        |f| &mut f.quarantined,
    );
    // Both counts are mail-svc's database's: read together, each put on its own.
    let mail = s.sources.mail.clone();
    reader.spawn_with(
        move || {
            let mail = mail.clone();
            async move {
                let (held, dead) =
                    tokio::join!(lists::held_count(&mail), lists::dead_letter_count(&mail));
                let problem = |e| db_problem(e, "mail-svc's database");
                Ok((held.map_err(problem), dead.map_err(problem)))
            }
        },
        |f, read: Result<(Count, Count), String>| {
            let (held, dead) = read.unwrap_or_else(|e| (Err(e.clone()), Err(e)));
            f.held.put(held);
            f.dead_letters.put(dead);
        },
    );
    let (metrics, timeout) = (s.metrics.clone(), s.timeout);
    reader.spawn_with(
        move || {
            let metrics = metrics.clone();
            async move { Ok(scrape::counters(&metrics, timeout).await) }
        },
        |f, read: Result<Counters, String>| {
            if let Ok(c) = &read {
                f.add_rates(*c, Instant::now());
            }
            f.counters.put(read);
        },
    );
    tokio::spawn(tick(tx, s.refresh, shutdown.clone()));
    let audit = start_audit(s.sources, s.grace, s.slice, s.refresh, shutdown);
    Live { figures: rx, audit }
}

/// Reads one figure every `refresh`, each read within `timeout`.
#[derive(Clone)]
struct Reader {
    tx: Arc<watch::Sender<Figures>>,
    refresh: Duration,
    timeout: Duration,
    shutdown: CancellationToken,
}

impl Reader {
    fn spawn<T, F, Fut>(
        &self,
        read: F,
        slot: impl Fn(&mut Figures) -> &mut Reading<T> + Send + 'static,
    ) where
        T: Send + 'static,
        F: Fn() -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, String>> + Send,
    {
        self.spawn_with(read, move |f, r| slot(f).put(r));
    }

    fn spawn_with<T, F, Fut>(
        &self,
        read: F,
        put: impl Fn(&mut Figures, Result<T, String>) + Send + 'static,
    ) where
        T: Send + 'static,
        F: Fn() -> Fut + Send + 'static,
        Fut: Future<Output = Result<T, String>> + Send,
    {
        let me = self.clone();
        tokio::spawn(async move {
            loop {
                let read = tokio::select! {
                    _ = me.shutdown.cancelled() => break,
                    r = tokio::time::timeout(me.timeout, read()) => r.unwrap_or_else(|_| {
                        Err("no answer within CONSOLE_TIMEOUT".to_owned())
                    }),
                };
                // The ticker tells the watchers, once per interval.
                me.tx.send_if_modified(|f| {
                    put(f, read);
                    false
                });
                tokio::select! {
                    _ = me.shutdown.cancelled() => break,
                    _ = tokio::time::sleep(me.refresh) => {}
                }
            }
        });
    }
}

/// Every `refresh`: marks what is overdue as stale and tells the watchers.
async fn tick(tx: Arc<watch::Sender<Figures>>, refresh: Duration, shutdown: CancellationToken) {
    let started = Instant::now();
    // Two intervals and a second: a read that takes a little longer than one is not stale.
    let overdue = refresh * 2 + Duration::from_secs(1);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = tokio::time::sleep(refresh) => {}
        }
        tx.send_modify(|f| {
            f.at = Some(Utc::now());
            f.age(Instant::now(), overdue, started);
        });
    }
}

fn db_problem(e: sqlx::Error, what: &str) -> String {
    tracing::warn!(error = %e, "console: reading {what} failed");
    format!("{what} cannot be read")
}

async fn backlog(admin: Admin) -> Result<(u64, u64), String> {
    let (_, mut c) = admin
        .relay_admin()
        .await
        .map_err(|e| format!("relay-svc backlog: {e}"))?;
    let r = c
        .list_backlog(admin.authed(ListBacklogRequest { limit: 1 }))
        .await
        .map_err(|e| format!("relay-svc backlog: {}", e.message()))?
        .into_inner();
    Ok((r.count, r.oldest_age_ms))
}

fn start_audit(
    sources: Sources,
    grace: Duration,
    slice: i64,
    refresh: Duration,
    shutdown: CancellationToken,
) -> watch::Receiver<Arc<Audit>> {
    let (atx, arx) = watch::channel(Arc::new(Audit::default()));
    tokio::spawn(async move {
        let mut auditor = Auditor::new(sources, grace, slice);
        loop {
            let audit = match auditor.pass().await {
                Ok(report) => Audit {
                    at: Some(Utc::now()),
                    report: Some(Arc::new(report)),
                    error: None,
                },
                Err(e) => {
                    tracing::warn!(error = %e, "console: audit pass failed");
                    let last = atx.borrow().clone();
                    Audit {
                        error: Some("the audit could not read its databases".into()),
                        ..(*last).clone()
                    }
                }
            };
            atx.send_replace(Arc::new(audit));
            tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = tokio::time::sleep(refresh) => {}
            }
        }
    });
    arx
}

/// One instance's health and status.
async fn instance(admin: &Admin, service: &'static str, addr: &str) -> Status {
    let mut i = Status::default();
    let ch = match admin.channel(service, addr).await {
        Ok(ch) => ch,
        Err(e) => {
            i.health = "UNREACHABLE".into();
            i.detail = e.to_string();
            return i;
        }
    };
    i.health = match HealthClient::new(ch.clone())
        .check(HealthCheckRequest {
            service: String::new(),
        })
        .await
    {
        Ok(r) => r.into_inner().status().as_str_name().to_owned(),
        Err(e) => format!("health unknown: {}", e.message()),
    };
    match service {
        "relay-svc" => {
            if let Ok(r) = RelayServiceClient::new(ch)
                .get_status(admin.authed(RelayStatusRequest {}))
                .await
            {
                let r = r.into_inner();
                i.detail = if r.active { "leader" } else { "standby" }.into();
                if !r.broker_blocked_reason.is_empty() {
                    i.blocked = Some((r.broker_blocked_reason, r.broker_blocked_ms));
                }
            }
        }
        "mail-svc" => {
            if let Ok(r) = MailServiceClient::new(ch)
                .get_status(admin.authed(MailStatusRequest {}))
                .await
            {
                let r = r.into_inner();
                i.detail = format!("{} unsent mail(s)", r.unsent_mails);
                if !r.broker_blocked_reason.is_empty() {
                    i.blocked = Some((r.broker_blocked_reason, r.broker_blocked_ms));
                }
            }
        }
        _ => {}
    }
    i
}
