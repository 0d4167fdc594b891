//! Publishes an outbox made by the `outbox` crate to RabbitMQ: losing nothing, keeping each
//! aggregate's events in chain order, with one active instance (leader) and any number of
//! standbys. relay-svc is a thin binary over it.
//!
//! ```no_run
//! # async fn run(pool: sqlx::PgPool) {
//! use std::sync::Arc;
//! use outbox_relay::{Relay, Settings, Status};
//! use tokio_util::sync::CancellationToken;
//!
//! // The database is the pool's: the relay opens its lock and LISTEN connections with the same
//! // connect options (`PgPool::connect_options`).
//! let mut settings = Settings::new("amqp://guest:guest@127.0.0.1:5672/%2f", "billing.events");
//! settings.table = outbox::TableName::parse("billing.outbox").unwrap(); // your outbox's table
//! let status = Arc::new(Status::default()); // live figures, also exported as metrics
//! let shutdown = CancellationToken::new();
//! let relay = tokio::spawn(Relay::new(settings, pool, status, shutdown.clone()).run());
//! // ... later: shutdown.cancel(); relay.await;
//! # }
//! ```
//!
//! **Read rule**: sequence values are handed out before commit, so rows commit out of seq order.
//! The relay never keeps a high-water mark: every cycle reads the oldest rows *present*
//! (`order by seq limit batch_size`, leaving out held and quarantined aggregates), publishes them
//! with publisher confirms and `mandatory`, and deletes exactly the seqs the broker acked and that
//! no return of their wave names (returns are matched by `message_id`).
//!
//! **Per-aggregate order** ([`outbox::rounds::of`]): wave k carries the k-th event of every
//! aggregate in the batch; an aggregate's next event is sent only after its previous one was
//! confirmed.
//!
//! **Per-row problems hold back only their aggregate**: a row the [`Encoder`] refuses moves to
//! the quarantine table; a returned or nacked row is retried with its aggregate's own backoff.
//! Only failures of the broker or the database as a whole back off the relay.
//!
//! **Leader** ([`lease`](LEADER_LOCK_KEY)): a dedicated connection holds a session
//! advisory lock as a lease; a standby that sees the holder's session silent for the lease
//! terminates it and takes over.
//!
//! **Fleet** ([`fleet`]): one set of instances publishes many outbox databases listed in a
//! registry, each database by one instance at a time under a registry lease, its deletes and
//! quarantine moves fenced at the lease's epoch inside the outbox database.
//!
//! Layout: `cycle` (the loop: stand by or lead, read, publish, delete; the per-row rule table),
//! `lease` (taking the leader lock, the heartbeat), `floor` (the read floor), `publisher`
//! (messages, topology, confirms, return matching), `db` (the SQL), [`status`] (figures and
//! metric names), [`operator`] (listings and moves out of quarantine), [`replay`] (published
//! events sent again to one queue), [`error`]. The guarantees and failure windows are in the crate README.
//!
//! ## Stable API
//!
//! What this version promises, changed only with a new version and a CHANGELOG line with the
//! signature before → after (`docs/public-api/outbox-relay.txt` lists every item; CI holds the
//! crate to it, see `.ci/public-api.sh`): [`Relay`], [`Settings`] and its `DEFAULT_*` constants,
//! [`LEADER_LOCK_KEY`], [`Encoder`], [`EnvelopeEncoder`], [`Outgoing`], [`OutboxRow`],
//! [`Publisher`] (for [`Replay`]) and its [`Outcome`], [`declare_exchange`] (the events exchange as
//! the relay declares it, for a consumer or a test that starts first), [`Replay`], [`Backlog`],
//! the modules [`error`], [`status`] (with [`Status`] and [`Snapshot`]), [`operator`], [`replay`],
//! [`fleet`] (the registry, the fence, the assignment and [`fleet::Fleet`]) and [`hook`] (a crash test's stop between the broker's confirms and the delete,
//! [`Settings::before_delete`]), and the re-exports `sqlx`, `lapin`, `tokio_util`, [`Tls`],
//! [`BrokerUrls`], [`DEFAULT_HEARTBEAT`]. Nothing else is public:
//! the modules `db` (the SQL), `floor` and `publisher` are public only with the feature
//! `unstable-internals`, for this workspace's tests, without any promise (they change in any
//! version).

#![warn(missing_docs)]

// The foreign crates this API takes and returns (pools and connect options, the shutdown token,
// the broker's types), re-exported so a user's versions always match.
pub use lapin;
pub use sqlx;
pub use tokio_util;

mod cycle;
pub mod error;
pub mod fleet;
pub mod hook;
mod lease;
pub mod operator;
pub mod replay;
pub mod status;

// The internals: the SQL, the read floor and the publisher's parts. Public only with the feature
// `unstable-internals` (for this workspace's tests), and then without any promise: they change in
// any version.
#[cfg(feature = "unstable-internals")]
pub mod db;
#[cfg(not(feature = "unstable-internals"))]
mod db;
#[cfg(feature = "unstable-internals")]
pub mod floor;
#[cfg(not(feature = "unstable-internals"))]
mod floor;
#[cfg(feature = "unstable-internals")]
pub mod publisher;
#[cfg(not(feature = "unstable-internals"))]
mod publisher;

use std::{sync::Arc, time::Duration};

use outbox::TableName;
use outbox_support::backoff::Backoff;
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;

pub use db::{Backlog, LEADER_LOCK_KEY, OutboxRow};
pub use error::Error;
pub use publisher::{Encoder, EnvelopeEncoder, Outcome, Outgoing, Publisher, declare_exchange};
pub use replay::Replay;
pub use status::{Snapshot, Status};

/// The broker settings' types from the `outbox-support` crate ([`Settings::amqp_url`],
/// [`Settings::amqp_tls`], [`Settings::amqp_heartbeat`]), re-exported so a relay needs no
/// dependency of its own on `outbox-support`.
pub use outbox_support::{
    amqp::{DEFAULT_HEARTBEAT, Tls},
    failover::BrokerUrls,
};

// The README's snippets are doctests too: they compile (the getting-started) or run against the
// test database, as the examples above do.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
mod readme_doctests {}

/// [`Settings::batch_size`]'s default: rows read per cycle.
pub const DEFAULT_BATCH_SIZE: u32 = 256;
/// [`Settings::backoff_min`]'s default: the first delay after a failure.
pub const DEFAULT_BACKOFF_MIN: Duration = Duration::from_millis(200);
/// [`Settings::backoff_max`]'s default: the longest delay after repeated failures.
pub const DEFAULT_BACKOFF_MAX: Duration = Duration::from_secs(30);
/// [`Settings::poll_interval`]'s default: the fallback poll when no notification comes.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);
/// [`Settings::standby_retry`]'s default: how often a standby tries the leader lock.
pub const DEFAULT_STANDBY_RETRY: Duration = Duration::from_secs(1);
/// [`Settings::leader_lease`]'s default: a leader silent for this long is replaced.
pub const DEFAULT_LEADER_LEASE: Duration = Duration::from_secs(10);
/// [`Settings::db_step_timeout`]'s default.
pub const DEFAULT_DB_STEP_TIMEOUT: Duration = Duration::from_secs(31);
/// [`Settings::published_retention`]'s default: published rows are kept 7 days.
pub const DEFAULT_PUBLISHED_RETENTION: Duration = Duration::from_secs(7 * 24 * 3600);
/// [`Settings::confirm_timeout`]'s default (and a [`Replay`]'s): a wave must be sent and
/// confirmed within it.
pub use publisher::DEFAULT_CONFIRM_TIMEOUT;

/// How a relay runs. [`Settings::new`] gives relay-svc's defaults; set fields to change them.
/// The database is not among them: it is the pool given to [`Relay::new`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Settings {
    /// The broker: one address, or a cluster's nodes tried in order with failover (see
    /// [`outbox_support::failover`]).
    pub amqp_url: BrokerUrls,
    /// TLS material for `amqps://` addresses (default: the system's roots, no client
    /// certificate).
    pub amqp_tls: Tls,
    /// The heartbeat the broker connection asks for unless its URL names one (default
    /// [`DEFAULT_HEARTBEAT`]): a connection silent for two of them is replaced.
    pub amqp_heartbeat: Duration,
    /// The topic exchange to publish to (declared durable if missing).
    pub amqp_exchange: String,
    /// The outbox table (default `outbox`): set it to the table your [`outbox::Outbox`] appends
    /// to. A relay of another table finds nothing to publish.
    pub table: TableName,
    /// The advisory-lock key of the leader (default [`LEADER_LOCK_KEY`]); relays of different
    /// outboxes in one database need different keys.
    pub leader_lock_key: i64,
    /// Rows read per cycle (default [`DEFAULT_BATCH_SIZE`], 256).
    pub batch_size: u32,
    /// First and last delay of the backoff after a failure (defaults [`DEFAULT_BACKOFF_MIN`],
    /// 200 ms, and [`DEFAULT_BACKOFF_MAX`], 30 s), also each
    /// held aggregate's retry.
    pub backoff_min: Duration,
    /// See `backoff_min`.
    pub backoff_max: Duration,
    /// Fallback poll when no notification comes (default 1 s).
    pub poll_interval: Duration,
    /// How often a standby tries the leader lock (default 1 s).
    pub standby_retry: Duration,
    /// A wave must be taken and confirmed within this (default 15 s).
    pub confirm_timeout: Duration,
    /// A leader silent for this long is replaced (default 10 s).
    pub leader_lease: Duration,
    /// How long a database step in the background (the delete of a confirmed batch) may go
    /// unanswered before it counts as failed (default 31 s; relay-svc gives its pool's
    /// `statement_timeout` plus a second). Steps in the cycle itself are bounded by the lease:
    /// a database gone silent stops its pings too, and the lost lease ends the cycle.
    pub db_step_timeout: Duration,
    /// How long published rows are kept in `T_published` (default 7 days; the window of
    /// "where is this event" and replay). The leader drops whole days of them once they are
    /// older. `None`: the delete keeps nothing (the table must still exist).
    pub published_retention: Option<Duration>,
    /// For crash tests: stop for good between the broker's confirms and the outbox delete, the
    /// window in which a crash publishes the batch again (default `None`; see [`hook`]).
    pub before_delete: Option<hook::BeforeDelete>,
}

impl Settings {
    /// Settings with relay-svc's defaults for the outbox `outbox`, publishing to the topic
    /// exchange `amqp_exchange` of the broker at `amqp_url`.
    pub fn new(amqp_url: impl Into<BrokerUrls>, amqp_exchange: impl Into<String>) -> Self {
        Self {
            amqp_url: amqp_url.into(),
            amqp_tls: Tls::default(),
            amqp_heartbeat: DEFAULT_HEARTBEAT,
            amqp_exchange: amqp_exchange.into(),
            table: TableName::parse("outbox").expect("a valid name"),
            leader_lock_key: db::LEADER_LOCK_KEY,
            batch_size: DEFAULT_BATCH_SIZE,
            backoff_min: DEFAULT_BACKOFF_MIN,
            backoff_max: DEFAULT_BACKOFF_MAX,
            poll_interval: DEFAULT_POLL_INTERVAL,
            standby_retry: DEFAULT_STANDBY_RETRY,
            confirm_timeout: DEFAULT_CONFIRM_TIMEOUT,
            leader_lease: DEFAULT_LEADER_LEASE,
            db_step_timeout: DEFAULT_DB_STEP_TIMEOUT,
            published_retention: Some(DEFAULT_PUBLISHED_RETENTION),
            before_delete: None,
        }
    }

    pub(crate) fn backoff(&self) -> Backoff {
        Backoff::new(self.backoff_min, self.backoff_max)
    }
}

/// One relay instance (leader or standby).
#[derive(Debug)]
pub struct Relay {
    inner: cycle::Relay,
}

impl Relay {
    /// A relay of the outbox in the database `pool` connects to: its reads, deletes and status
    /// go through the pool (a few connections), and it opens two connections of its own with the
    /// pool's connect options ([`PgPool::connect_options`](sqlx::Pool::connect_options)): one
    /// holds the leader lock (with TCP keepalives added), one LISTENs for
    /// the writers' notifications. It reports into `status` and stops when `shutdown` is
    /// cancelled. Rows are turned into messages by [`EnvelopeEncoder`] unless
    /// [`Relay::with_encoder`] says otherwise.
    pub fn new(
        settings: Settings,
        pool: PgPool,
        status: Arc<Status>,
        shutdown: CancellationToken,
    ) -> Self {
        Self {
            inner: cycle::Relay::new(settings, Arc::new(EnvelopeEncoder), pool, status, shutdown),
        }
    }

    /// Uses `encoder` for the rows' messages.
    pub fn with_encoder(mut self, encoder: Arc<dyn Encoder>) -> Self {
        self.inner.set_encoder(encoder);
        self
    }

    /// Stands by until it holds the leader lock, leads until it loses it, repeats; returns on
    /// shutdown, after the last confirmed batch's delete and the lock's release.
    pub async fn run(self) {
        self.inner.run().await
    }
}
