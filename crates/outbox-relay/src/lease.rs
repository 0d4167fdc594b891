//! The leader lease: taking the session advisory lock ([`try_acquire`]) and the heartbeat that
//! proves the leader alive ([`Lease`]).
//!
//! A session lock alone is not a lease: PostgreSQL keeps the session of a frozen leader (SIGSTOP,
//! a stuck runtime) forever and that of a vanished host until TCP keepalive gives up. So:
//! - the leader pings its lock connection every [`heartbeat`] (at most a second): each ping
//!   moves the session's `pg_stat_activity.state_change`;
//! - a standby that finds the holder's session idle longer than `LEADER_LEASE` terminates it
//!   ([`db::terminate_stale_leader`](crate::db::terminate_stale_leader)); the lock goes with it;
//! - the leader publishes a wave only while its last successful ping *started* less than half a
//!   lease ago ([`Lease::check`]). A leader that wakes up after a freeze therefore stops before
//!   sending anything, and resumes only if a new ping proves its session (and lock) survived.
//!
//! The heartbeat runs in a task of its own (so a long wave does not delay it) that is aborted
//! with the relay: a crashed relay drops the connection, and PostgreSQL the lock.
//!
//! A relay of a fleet ([`crate::fleet`]) leads under the same [`Lease`], kept by its instance's
//! registry renewals instead of a lock connection ([`Lease::kept_by_registry`]): the cycle checks
//! one lease whichever keeps it.

use std::time::{Duration, Instant};

use sqlx::{Connection, PgConnection, postgres::PgConnectOptions};
use tokio::{sync::watch, task::JoinHandle};
use tokio_util::sync::CancellationToken;

use crate::{db, error::Error};

/// What one attempt to become the leader found.
#[derive(Debug)]
pub(crate) enum Attempt {
    /// This session now holds the lock: lead with it.
    Held,
    /// The holder's session had been silent longer than the lease and was terminated; its
    /// lock is free now (try again at once).
    TookOver(db::Terminated),
    /// A live leader holds the lock: stand by.
    Standby,
}

/// One attempt at the lock on `conn` (connected first when `None`; left `Some` on success so
/// the caller keeps the session that holds it). Each step is bounded by `db_timeout`.
pub(crate) async fn try_acquire(
    conn: &mut Option<PgConnection>,
    options: &PgConnectOptions,
    key: i64,
    lease: Duration,
    db_timeout: Duration,
) -> Result<Attempt, Error> {
    let timeout = |what: &'static str| Error::DbTimeout {
        what,
        after: db_timeout,
    };
    let c = match conn {
        Some(c) => c,
        None => conn.insert(
            tokio::time::timeout(db_timeout, PgConnection::connect_with(options))
                .await
                .map_err(|_| timeout("connecting for the leader lock"))??,
        ),
    };
    if tokio::time::timeout(db_timeout, db::try_lock(c, key))
        .await
        .map_err(|_| timeout("trying the leader lock"))??
    {
        return Ok(Attempt::Held);
    }
    // Held by another session: is that leader still proving its lease?
    let terminated = tokio::time::timeout(db_timeout, db::terminate_stale_leader(c, key, lease))
        .await
        .map_err(|_| timeout("checking the leader's lease"))??;
    Ok(terminated.map_or(Attempt::Standby, Attempt::TookOver))
}

/// How often the leader proves it is alive: every second, or a quarter lease if that is shorter.
pub(crate) fn heartbeat(lease: Duration) -> Duration {
    (lease / 4).min(Duration::from_secs(1))
}

#[derive(Debug, Clone)]
enum State {
    /// The last successful ping was sent at this instant.
    Proven(Instant),
    /// The lock connection failed: the lock is gone (or about to be), a standby may lead.
    Lost(String),
}

/// Why the leader must not publish now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unproven {
    /// The heartbeat is late (the process was frozen, or the database is slow): wait for the
    /// next ping before publishing again.
    Stale,
    /// The lock connection failed.
    Lost(String),
}

/// The right to publish an outbox: a held leader lock and its heartbeat, or a fleet
/// registry's lease renewed by the instance's loop.
#[derive(Debug)]
pub(crate) struct Lease {
    state: watch::Receiver<State>,
    /// Half the lease: a standby terminates the session (a fleet instance claims the database)
    /// only after a full lease of silence.
    guard: Duration,
    keeper: Keeper,
}

/// What keeps a [`Lease`] proven.
#[derive(Debug)]
enum Keeper {
    /// The leader lock's heartbeat task on its own connection.
    Heartbeat {
        release: CancellationToken,
        task: AbortOnDrop,
    },
    /// The fleet instance's renewals in the registry, fed through a [`RegistryFeed`]; given back
    /// by the instance, not by the relay.
    Registry,
}

/// The fleet instance's side of a [`Lease::kept_by_registry`]: each successful renewal proves
/// it, a failed one (or a lost lease) ends it.
#[derive(Debug, Clone)]
pub(crate) struct RegistryFeed(watch::Sender<State>);

impl RegistryFeed {
    /// The renewal that started at `at` kept the lease.
    pub(crate) fn proven(&self, at: Instant) {
        self.0.send_replace(State::Proven(at));
    }

    /// The lease is gone (another instance holds it, or it ran out): the relay stops at once.
    pub(crate) fn lost(&self, why: impl Into<String>) {
        self.0.send_replace(State::Lost(why.into()));
    }
}

impl Lease {
    /// Starts the heartbeat on `conn`, which holds the lock (just proven by taking it).
    pub(crate) fn start(conn: PgConnection, lease: Duration, ping_timeout: Duration) -> Self {
        let (tx, state) = watch::channel(State::Proven(Instant::now()));
        let release = CancellationToken::new();
        let task = tokio::spawn(beat(
            conn,
            tx,
            heartbeat(lease),
            ping_timeout.min(lease / 2),
            release.clone(),
        ));
        Self {
            state,
            guard: lease / 2,
            keeper: Keeper::Heartbeat {
                release,
                task: AbortOnDrop(task),
            },
        }
    }

    /// A fleet registry's lease of `lease`, just claimed or renewed by the renewal that started
    /// at `proven_at`; the instance keeps it proven through the returned feed.
    pub(crate) fn kept_by_registry(lease: Duration, proven_at: Instant) -> (Self, RegistryFeed) {
        let (tx, state) = watch::channel(State::Proven(proven_at));
        let lease = Self {
            state,
            guard: lease / 2,
            keeper: Keeper::Registry,
        };
        (lease, RegistryFeed(tx))
    }

    /// Ok while the lock is proven recently enough to publish.
    pub(crate) fn check(&self) -> Result<(), Unproven> {
        match &*self.state.borrow() {
            State::Lost(e) => Err(Unproven::Lost(e.clone())),
            State::Proven(at) if at.elapsed() >= self.guard => Err(Unproven::Stale),
            State::Proven(_) => Ok(()),
        }
    }

    /// Resolves when the lock connection has failed, with why.
    pub(crate) async fn lost(&self) -> String {
        let mut state = self.state.clone();
        match state.wait_for(|s| matches!(s, State::Lost(_))).await {
            Ok(s) => match &*s {
                State::Lost(e) => e.clone(),
                State::Proven(_) => unreachable!("waited for Lost"),
            },
            // The heartbeat task (or the fleet instance's loop) ended without saying why.
            Err(_) => "the heartbeat stopped".into(),
        }
    }

    /// Waits until a ping proves the lock again (Ok) or the lock is lost (Err).
    pub(crate) async fn reproven(&self) -> Result<(), String> {
        let mut state = self.state.clone();
        let guard = self.guard;
        match state
            .wait_for(|s| match s {
                State::Lost(_) => true,
                State::Proven(at) => at.elapsed() < guard,
            })
            .await
        {
            Ok(s) => match &*s {
                State::Lost(e) => Err(e.clone()),
                State::Proven(_) => Ok(()),
            },
            Err(_) => Err("the heartbeat stopped".into()),
        }
    }

    /// Ends the session politely, releasing the lock now so that a standby need not wait. A
    /// registry's lease is given back by the fleet instance once the relay has stopped.
    pub(crate) async fn release(self) {
        if let Keeper::Heartbeat { release, mut task } = self.keeper {
            release.cancel();
            let _ = tokio::time::timeout(Duration::from_secs(5), &mut task.0).await;
        }
    }
}

/// The heartbeat: ping every `every`; the first failure marks the lease lost and ends the task
/// (the connection is dropped, and with it whatever is left of the session).
async fn beat(
    mut conn: PgConnection,
    state: watch::Sender<State>,
    every: Duration,
    ping_timeout: Duration,
    release: CancellationToken,
) {
    loop {
        tokio::select! {
            _ = release.cancelled() => {
                let _ = tokio::time::timeout(Duration::from_secs(5), conn.close()).await;
                return;
            }
            _ = tokio::time::sleep(every) => {}
        }
        let sent = Instant::now();
        let lost = match tokio::time::timeout(ping_timeout, db::ping(&mut conn)).await {
            Ok(Ok(())) => {
                state.send_replace(State::Proven(sent));
                continue;
            }
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("the lock connection did not answer a ping within {ping_timeout:?}"),
        };
        state.send_replace(State::Lost(lost));
        return;
    }
}

/// Aborts the heartbeat when the relay's future is dropped (a crash, a test's abort).
#[derive(Debug)]
struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
