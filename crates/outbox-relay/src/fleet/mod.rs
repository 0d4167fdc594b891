//! The relay fleet: one set of relay instances publishes many outbox databases, listed in a
//! registry and added, drained and removed at runtime.
//!
//! - [`registry`]: the fleet database's tables (the databases, their leases, the live
//!   instances, the operators' audit) and every statement on them.
//! - [`assign`]: which databases an instance holds (pure: quota ⌈databases / instances⌉,
//!   rendezvous order).
//! - [`fence`]: the fencing token in each outbox database: a relay's delete or quarantine move
//!   takes effect only while the database's fence holds its lease's epoch, checked in the same
//!   statement.
//! - [`Fleet`]: one instance's loop. Every `lease / 3` it heartbeats, renews every lease it
//!   holds in one statement (a lease not renewed is lost: its relay stops at once), gives back
//!   what is above its quota, claims free databases up to it, finishes the drains, and reports
//!   each database's figures and last error. Per owned database it runs one relay
//!   ([`crate::Relay`]'s loop) under the registry's lease instead of the advisory leader lock,
//!   with a pool of at most [`DEFAULT_MAX_CONNECTIONS`] (one kept open) plus a LISTEN
//!   connection; nothing to the databases it does not own.
//!
//! **A frozen instance publishes nothing after it wakes**: its relays publish a wave only
//! while the last successful renewal *started* less than half a lease ago (the instance's
//! monotonic clock); its renewals fail once another instance claimed the database (a new
//! epoch), which stops the relay; and any delete or quarantine move it still attempts is fenced
//! out by the outbox database itself.

pub mod assign;
pub mod fence;
pub mod registry;

use std::{
    collections::BTreeMap,
    str::FromStr,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use outbox::TableName;
use outbox_support::secret::SecretUrl;
use sqlx::{
    PgPool,
    postgres::{PgConnectOptions, PgPoolOptions},
};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::{
    Settings,
    error::Error,
    lease::{Lease, RegistryFeed, Unproven},
    live::Status,
    publisher::{Encoder, EnvelopeEncoder},
    status::names,
};

use self::registry::{Claimed, Registry, State};

/// [`FleetSettings::lease`]'s default: a database whose owner is silent this long is claimed
/// by another instance.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(10);
/// [`FleetSettings::poll_interval`]'s default: the fallback poll of each owned outbox when no
/// notification comes (an idle database costs about one read per poll).
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(10);
/// [`FleetSettings::max_connections`]'s default: each owned database's pool.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 2;

/// How long a connect or the fence's take may take before it counts as failed.
const DB_TIMEOUT: Duration = Duration::from_secs(5);

/// How a fleet instance runs.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct FleetSettings {
    /// This instance's id in the registry (unique among live instances: relay-svc takes
    /// `hostname-pid`).
    pub instance_id: String,
    /// The lease (default [`DEFAULT_LEASE`]): renewed every third of it.
    pub lease: Duration,
    /// Each owned outbox's fallback poll (default [`DEFAULT_POLL_INTERVAL`]).
    pub poll_interval: Duration,
    /// Each owned database's pool (default [`DEFAULT_MAX_CONNECTIONS`]).
    pub max_connections: u32,
    /// The relays' settings: broker, batch size, backoff, timeouts. The table and the exchange
    /// are each database's own (from the registry); `poll_interval` and `leader_lease` are the
    /// fleet's.
    pub relay: Settings,
}

impl FleetSettings {
    /// Settings with the defaults for instance `instance_id`, its relays run with `relay`.
    pub fn new(instance_id: impl Into<String>, relay: Settings) -> Self {
        Self {
            instance_id: instance_id.into(),
            lease: DEFAULT_LEASE,
            poll_interval: DEFAULT_POLL_INTERVAL,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            relay,
        }
    }

    /// How often the instance heartbeats, renews and plans: a third of the lease.
    pub fn tick(&self) -> Duration {
        self.lease / 3
    }
}

/// The live figures of the databases an instance owns, by name (each also exported as metrics
/// labelled `db`).
#[derive(Debug, Clone, Default)]
pub struct FleetStatus(Arc<Mutex<BTreeMap<String, Arc<Status>>>>);

impl FleetStatus {
    /// The databases this instance owns now, with their figures.
    pub fn databases(&self) -> Vec<(String, Arc<Status>)> {
        lock(&self.0)
            .iter()
            .map(|(n, s)| (n.clone(), s.clone()))
            .collect()
    }

    fn insert(&self, name: &str) -> Arc<Status> {
        let status = Arc::new(Status::labelled("db", name));
        lock(&self.0).insert(name.to_owned(), status.clone());
        status
    }

    fn remove(&self, name: &str) {
        if let Some(s) = lock(&self.0).remove(name) {
            s.set_active(false);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One fleet instance: runs until shutdown, publishing the databases it holds leases of.
#[derive(Debug)]
pub struct Fleet {
    registry: Registry,
    settings: FleetSettings,
    encoder: Arc<dyn Encoder>,
    status: FleetStatus,
    shutdown: CancellationToken,
}

/// How an owned database's relay ended.
#[derive(Debug)]
enum Ended {
    /// Stopped as asked (released, drained, shutdown), its in-flight work confirmed.
    Stopped,
    /// The lease was lost or the fence taken by a newer owner.
    Lost(String),
}

/// Why an owned database's relay is being stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Leaving {
    /// Above the quota: give the lease back.
    Release,
    /// An operator drains it: mark it drained, then give the lease back.
    Drain,
}

/// A database this instance holds the lease of.
#[derive(Debug)]
struct Owned {
    epoch: i64,
    url: SecretUrl,
    feed: RegistryFeed,
    stop: CancellationToken,
    task: AbortOnDrop,
    status: Arc<Status>,
    leaving: Option<Leaving>,
}

/// Aborts an owned database's relay when dropped: a lost lease, or the instance's own loop
/// aborted (then its connections go with it).
#[derive(Debug)]
struct AbortOnDrop(Option<JoinHandle<Ended>>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(t) = &self.0 {
            t.abort();
        }
    }
}

impl Fleet {
    /// An instance of the fleet in `registry`; stops when `shutdown` is cancelled. Rows are
    /// turned into messages by [`EnvelopeEncoder`] unless [`Fleet::with_encoder`] says
    /// otherwise.
    pub fn new(registry: Registry, settings: FleetSettings, shutdown: CancellationToken) -> Self {
        Self {
            registry,
            settings,
            encoder: Arc::new(EnvelopeEncoder),
            status: FleetStatus::default(),
            shutdown,
        }
    }

    /// Uses `encoder` for every database's messages.
    pub fn with_encoder(mut self, encoder: Arc<dyn Encoder>) -> Self {
        self.encoder = encoder;
        self
    }

    /// The live figures of the databases this instance owns (for health and status).
    pub fn status(&self) -> FleetStatus {
        self.status.clone()
    }

    /// Creates the registry's tables if missing, then ticks until shutdown; on shutdown stops
    /// every relay (each finishes and confirms its wave in flight) and gives the leases back.
    pub async fn run(self) {
        let mut backoff = self.settings.relay.backoff();
        loop {
            match bounded(self.settings.lease, self.registry.migrate()).await {
                Ok(()) => break,
                Err(e) => {
                    tracing::warn!(error = %e, "fleet: cannot create the registry's tables, retrying");
                    tokio::select! {
                        _ = self.shutdown.cancelled() => return,
                        _ = tokio::time::sleep(backoff.next_delay()) => {}
                    }
                }
            }
        }
        tracing::info!(instance = %self.settings.instance_id, "fleet: instance started");
        let mut owned: BTreeMap<String, Owned> = BTreeMap::new();
        let mut renewed: Option<Instant> = None;
        let mut next = tokio::time::Instant::now();
        loop {
            tokio::select! {
                _ = self.shutdown.cancelled() => break,
                _ = tokio::time::sleep_until(next) => {}
            }
            next = tokio::time::Instant::now() + self.settings.tick();
            self.tick(&mut owned, &mut renewed).await;
        }
        self.leave(owned).await;
        tracing::info!(instance = %self.settings.instance_id, "fleet: instance stopped");
    }

    /// One tick: heartbeat, renew, settle stopped relays, plan, claim, report.
    async fn tick(&self, owned: &mut BTreeMap<String, Owned>, renewed: &mut Option<Instant>) {
        let (reg, me, lease) = (
            &self.registry,
            self.settings.instance_id.as_str(),
            self.settings.lease,
        );
        let started = Instant::now();
        let live = match bounded(lease, registry::heartbeat(reg, me, lease)).await {
            Ok(live) => live,
            Err(e) => return self.registry_failed(owned, *renewed, &e),
        };
        metrics::gauge!(names::FLEET_REGISTRY_UP).set(1.0);
        let held: Vec<(String, i64)> = owned.iter().map(|(n, o)| (n.clone(), o.epoch)).collect();
        let still = match bounded(lease, registry::renew(reg, me, &held, lease)).await {
            Ok(still) => still,
            Err(e) => return self.registry_failed(owned, *renewed, &e),
        };
        *renewed = Some(started);
        let still: BTreeMap<String, registry::Held> =
            still.into_iter().map(|h| (h.name.clone(), h)).collect();
        owned.retain(|name, o| {
            let Some(h) = still.get(name) else {
                // Claimed by another instance after our lease ran out, or removed: stop now,
                // without waiting for anything (its deletes would be fenced out anyway).
                o.feed.lost("the registry lease was lost");
                tracing::warn!(db = %name, epoch = o.epoch, "fleet: lost the lease of db={name}, its relay stops");
                self.status.remove(name);
                return false;
            };
            o.feed.proven(started);
            if h.state == State::Draining && o.leaving.is_none() {
                tracing::info!(db = %name, "fleet: draining db={name}: finishing what is in flight");
                o.leaving = Some(Leaving::Drain);
                o.stop.cancel();
            }
            true
        });
        self.settle(owned).await;

        let overview = match bounded(lease, registry::overview(reg)).await {
            Ok(o) => o,
            Err(e) => return tracing::warn!(error = %e, "fleet: cannot read the registry"),
        };
        let quota = assign::quota(overview.databases, live.len());
        let staying: Vec<String> = owned
            .iter()
            .filter(|(_, o)| o.leaving.is_none())
            .map(|(n, _)| n.clone())
            .collect();
        // Claims count what is still leaving too: it is held until its relay stopped.
        let mut plan = assign::choose(me, &staying, &overview.free, quota);
        plan.claim.truncate(quota.saturating_sub(owned.len()));
        for name in &plan.release {
            if let Some(o) = owned.get_mut(name) {
                tracing::info!(db = %name, quota, "fleet: above the quota, handing db={name} over");
                o.leaving = Some(Leaving::Release);
                o.stop.cancel();
            }
        }
        for name in &plan.claim {
            match bounded(lease, registry::claim(reg, me, name, lease)).await {
                Ok(Some(claimed)) => {
                    tracing::info!(db = %name, epoch = claimed.epoch, "fleet: claimed db={name} epoch={}", claimed.epoch);
                    let o = self.start(claimed.clone(), started);
                    owned.insert(claimed.name, o);
                }
                Ok(None) => {}
                Err(e) => tracing::warn!(error = %e, db = %name, "fleet: cannot claim db={name}"),
            }
        }
        metrics::gauge!(names::FLEET_OWNED).set(owned.len() as f64);
        self.report(owned).await;
    }

    /// The registry did not answer: past a whole lease since the last renewal started, another
    /// instance may hold our databases, so every relay stops (they stopped publishing at half
    /// a lease already).
    fn registry_failed(
        &self,
        owned: &mut BTreeMap<String, Owned>,
        renewed: Option<Instant>,
        e: &registry::Error,
    ) {
        tracing::warn!(error = %e, "fleet: cannot reach the registry");
        metrics::gauge!(names::FLEET_REGISTRY_UP).set(0.0);
        if renewed.is_none_or(|at| at.elapsed() >= self.settings.lease) {
            for (name, o) in std::mem::take(owned) {
                o.feed
                    .lost("the registry could not be reached for a whole lease");
                self.status.remove(&name);
            }
            metrics::gauge!(names::FLEET_OWNED).set(0.0);
        }
    }

    /// Collects the relays that ended: a drained database is marked drained, a released one
    /// given back; a lost one is gone already.
    async fn settle(&self, owned: &mut BTreeMap<String, Owned>) {
        let ended: Vec<String> = owned
            .iter()
            .filter(|(_, o)| o.task.0.as_ref().is_none_or(JoinHandle::is_finished))
            .map(|(n, _)| n.clone())
            .collect();
        for name in ended {
            let Some(mut o) = owned.remove(&name) else {
                continue;
            };
            let ended = match o.task.0.take() {
                Some(t) => t.await.unwrap_or_else(|e| Ended::Lost(e.to_string())),
                None => Ended::Stopped,
            };
            self.give_back(&name, &o, ended).await;
        }
    }

    /// After the relay of `name` ended: marks a drained database drained, gives the lease
    /// back.
    async fn give_back(&self, name: &str, o: &Owned, ended: Ended) {
        let (reg, me, lease) = (
            &self.registry,
            self.settings.instance_id.as_str(),
            self.settings.lease,
        );
        self.status.remove(name);
        match ended {
            Ended::Lost(why) => {
                tracing::warn!(db = %name, "fleet: the relay of db={name} stopped: {why}");
                return;
            }
            Ended::Stopped => {}
        }
        let done = if o.leaving == Some(Leaving::Drain) {
            let r = bounded(lease, registry::mark_drained(reg, me, name, o.epoch)).await;
            if matches!(r, Ok(true)) {
                tracing::info!(db = %name, "fleet: db={name} drained");
            }
            r
        } else {
            bounded(lease, registry::release(reg, me, name, o.epoch)).await
        };
        if let Err(e) = done {
            // The lease runs out by itself: another instance takes over after it.
            tracing::warn!(error = %e, db = %name, "fleet: cannot give the lease of db={name} back");
        }
    }

    /// Starts the relay of a database just claimed (its lease proven by the tick that started
    /// at `proven_at`).
    fn start(&self, claimed: Claimed, proven_at: Instant) -> Owned {
        let (lease, feed) = Lease::kept_by_registry(self.settings.lease, proven_at);
        let stop = self.shutdown.child_token();
        let status = self.status.insert(&claimed.name);
        status.set_active(false);
        let draining = claimed.state == State::Draining;
        if draining {
            // Claimed to be finished: its previous owner vanished while draining it.
            stop.cancel();
        }
        let run = run_database(
            claimed.clone(),
            self.settings.clone(),
            self.encoder.clone(),
            lease,
            status.clone(),
            stop.clone(),
        );
        Owned {
            epoch: claimed.epoch,
            url: claimed.url,
            feed,
            stop,
            task: AbortOnDrop(Some(tokio::spawn(run))),
            status,
            leaving: draining.then_some(Leaving::Drain),
        }
    }

    /// Each owned database's figures and last error, in one statement.
    async fn report(&self, owned: &BTreeMap<String, Owned>) {
        let reports: Vec<registry::Report> = owned
            .iter()
            .map(|(name, o)| {
                let s = o.status.snapshot();
                registry::Report {
                    name: name.clone(),
                    epoch: o.epoch,
                    backlog: s.backlog,
                    oldest_unsent_secs: (s.oldest_unsent_age_ms > 0)
                        .then(|| s.oldest_unsent_age_ms as f64 / 1000.0),
                    // An error may quote the URL it could not use.
                    last_error: o.status.last_error().map(|e| o.url.scrub(&e)),
                }
            })
            .collect();
        let me = self.settings.instance_id.as_str();
        if let Err(e) = bounded(
            self.settings.lease,
            registry::report(&self.registry, me, &reports),
        )
        .await
        {
            tracing::warn!(error = %e, "fleet: cannot report the databases' figures");
        }
    }

    /// On shutdown: every relay stops (finishing its wave in flight and its delete), then its
    /// lease is given back (a draining one marked drained), so that another instance takes over
    /// at once.
    async fn leave(&self, owned: BTreeMap<String, Owned>) {
        for (name, mut o) in owned {
            o.stop.cancel();
            let ended = match o.task.0.take() {
                Some(t) => match tokio::time::timeout(4 * DB_TIMEOUT, t).await {
                    Ok(Ok(ended)) => ended,
                    Ok(Err(e)) => Ended::Lost(e.to_string()),
                    Err(_) => Ended::Lost("did not stop in time".into()),
                },
                None => Ended::Stopped,
            };
            self.give_back(&name, &o, ended).await;
        }
    }
}

/// A registry call bounded by a lease: a fleet database gone silent counts as failed.
async fn bounded<T>(
    lease: Duration,
    call: impl Future<Output = Result<T, registry::Error>>,
) -> Result<T, registry::Error> {
    tokio::time::timeout(lease, call)
        .await
        .unwrap_or(Err(registry::Error::Db(sqlx::Error::PoolTimedOut)))
}

/// One owned database: connects (lazily, a small pool), takes the fence at the lease's epoch
/// (retrying with backoff while the database is down or refuses, reporting why), then runs the
/// relay under the lease until it is stopped or loses the lease.
async fn run_database(
    claimed: Claimed,
    settings: FleetSettings,
    encoder: Arc<dyn Encoder>,
    lease: Lease,
    status: Arc<Status>,
    stop: CancellationToken,
) -> Ended {
    let Claimed {
        name, url, epoch, ..
    } = &claimed;
    let (table, options) = match target(&claimed) {
        Ok(t) => t,
        Err(why) => {
            // Refused at add; only a registry edited by hand gets here. Held (so nobody
            // else fails on it too) and reported until an operator fixes or removes it.
            tracing::error!(db = %name, "fleet: db={name}: {why}");
            status.set_last_error(Some(why));
            tokio::select! {
                _ = stop.cancelled() => return Ended::Stopped,
                why = lease.lost() => return Ended::Lost(why),
            }
        }
    };
    let pool = PgPoolOptions::new()
        .max_connections(settings.max_connections)
        // One session kept open: a row committed after a quiet spell is read at once, not
        // after a connect (a TLS handshake and a backend's start). An open idle session costs
        // the database no query.
        .min_connections(1)
        .idle_timeout(Some(settings.poll_interval * 3))
        .acquire_timeout(DB_TIMEOUT)
        .connect_lazy_with(options);
    let mut backoff = settings.relay.backoff();
    loop {
        if stop.is_cancelled() {
            pool.close().await;
            return Ended::Stopped;
        }
        if let Err(Unproven::Lost(why)) = lease.check() {
            return Ended::Lost(why);
        }
        let taken = tokio::time::timeout(2 * DB_TIMEOUT, take_fence(&pool, &table, *epoch)).await;
        let e = match taken {
            Ok(Ok(())) => break,
            Ok(Err(e @ Error::Fenced { .. })) => return Ended::Lost(e.to_string()),
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("the database did not answer within {:?}", 2 * DB_TIMEOUT),
        };
        let e = url.scrub(&e);
        let delay = backoff.next_delay();
        tracing::warn!(db = %name, error = %e, retry = backoff.failures(), "fleet: cannot reach db={name}, retrying in {delay:?}");
        status.set_last_error(Some(e));
        status.set_consecutive_failures(backoff.failures());
        tokio::select! {
            _ = stop.cancelled() => {}
            why = lease.lost() => return Ended::Lost(why),
            _ = tokio::time::sleep(delay) => {}
        }
    }
    status.set_last_error(None);
    status.set_consecutive_failures(0);
    tracing::info!(db = %name, epoch, "fleet: publishing db={name} epoch={epoch}");
    let mut s = settings.relay.clone();
    s.table = table;
    s.amqp_exchange = claimed.exchange.clone();
    s.poll_interval = settings.poll_interval;
    s.leader_lease = settings.lease;
    let relay = crate::cycle::Relay::new(s, encoder, pool.clone(), status, stop);
    let lost = relay.run_owned(lease, *epoch).await;
    let _ = tokio::time::timeout(DB_TIMEOUT, pool.close()).await;
    match lost {
        None => Ended::Stopped,
        Some(why) => Ended::Lost(why),
    }
}

/// The outbox table and the connect options of a claimed database, or why they are unusable
/// (free of the password).
fn target(claimed: &Claimed) -> Result<(TableName, PgConnectOptions), String> {
    let table = TableName::parse(&claimed.table).map_err(|e| e.to_string())?;
    let options = claimed
        .url
        .parse("url", "PostgreSQL URL", PgConnectOptions::from_str)
        .map_err(|e| e.to_string())?
        .application_name("outbox-relay-fleet");
    Ok((table, options))
}

async fn take_fence(pool: &PgPool, table: &TableName, epoch: i64) -> Result<(), Error> {
    let mut conn = pool.acquire().await.map_err(Error::from_db)?;
    fence::take(&mut conn, table, epoch).await
}
