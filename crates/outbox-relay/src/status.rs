//! What the relay reports: the status snapshot behind `GetStatus`, and every Prometheus metric
//! name, updated together so the two never disagree.

use std::{
    sync::{
        Mutex,
        atomic::{AtomicBool, AtomicI64, AtomicU32, AtomicU64, Ordering::Relaxed},
    },
    time::{Duration, Instant},
};

use chrono::{DateTime, Utc};
use outbox_support::metrics::Metric;

use crate::db::Backlog;

/// Prometheus metric names (all prefixed `relay_`).
pub mod names {
    /// Gauge: outbox rows not yet confirmed by the broker.
    pub const BACKLOG: &str = "relay_outbox_backlog";
    /// Gauge: age of the oldest unsent row, seconds (0 when empty).
    pub const OLDEST_UNSENT_AGE: &str = "relay_outbox_oldest_unsent_age_seconds";
    /// Gauge: highest seq this instance published and saw confirmed.
    pub const LAST_PUBLISHED_SEQ: &str = "relay_last_published_seq";
    /// Gauge: 1 while this instance holds the leader lock.
    pub const ACTIVE: &str = "relay_active";
    /// Gauge: failed cycles in a row (0 after a success).
    pub const CONSECUTIVE_FAILURES: &str = "relay_consecutive_failures";
    /// Counter: events published and confirmed (delivered).
    pub const PUBLISHED: &str = "relay_published_total";
    /// Counter: events that were not delivered, by `reason` (returned, nacked, error, unreachable,
    /// corrupt).
    pub const FAILED: &str = "relay_publish_failed_total";
    /// Histogram: from the row's `created_at` (the order's commit) to the broker's confirm, seconds.
    pub const COMMIT_TO_PUBLISH: &str = "relay_commit_to_publish_seconds";
    /// Gauge: orders with a returned or nacked event not delivered yet (each retried with its own
    /// backoff while every other order flows).
    pub const HELD_ORDERS: &str = "relay_held_orders";
    /// Gauge: rows in `outbox_quarantine` (each holds back its order until an operator acts).
    pub const QUARANTINED: &str = "relay_outbox_quarantined";
    /// Counter: rows this instance moved into quarantine.
    pub const QUARANTINED_TOTAL: &str = "relay_quarantined_total";
    /// Gauge: age of the writer transaction that holds the read floor back, seconds (0 when
    /// none does).
    pub const OLDEST_WRITER_AGE: &str = "relay_oldest_writer_age_seconds";
    /// Gauge: 1 while the broker blocks this instance's publishing (`connection.blocked`: a
    /// RabbitMQ resource alarm).
    pub const BROKER_BLOCKED: &str = "relay_broker_blocked";
    /// Counter: broker connections replaced after they were lost, by `reason` (heartbeat, io,
    /// closed, timeout).
    pub const AMQP_RECONNECTS: &str = "relay_amqp_reconnects_total";
}

/// The values of `relay_amqp_reconnects_total{reason}` (see `outbox_support::amqp::Lost`).
pub const RECONNECT_REASONS: &[&str] = &["heartbeat", "io", "closed", "timeout"];

/// The values of `relay_publish_failed_total{reason}`.
pub const FAILED_REASONS: &[&str] = &["returned", "nacked", "error", "unreachable", "corrupt"];

/// What the relay exports, with HELP texts (a service registers them with
/// `outbox_support::metrics::describe`).
pub const METRICS: &[Metric] = &[
    Metric::gauge(
        names::BACKLOG,
        "Outbox rows not yet confirmed by the broker.",
    ),
    Metric::gauge(
        names::OLDEST_UNSENT_AGE,
        "Age of the oldest unsent outbox row in seconds (0 when the outbox is empty).",
    ),
    Metric::gauge(
        names::LAST_PUBLISHED_SEQ,
        "Highest outbox seq this instance published and saw confirmed.",
    ),
    Metric::gauge(
        names::ACTIVE,
        "1 while this instance holds the leader lock and publishes, 0 on a standby.",
    ),
    Metric::gauge(
        names::CONSECUTIVE_FAILURES,
        "Failed relay cycles in a row (broker or database failures; 0 after a success).",
    ),
    Metric::counter(
        names::PUBLISHED,
        "Events published and confirmed by the broker.",
    ),
    Metric::labelled_counter(
        names::FAILED,
        "Events not delivered, by reason: returned, nacked, error, unreachable, corrupt.",
        "reason",
        FAILED_REASONS,
    ),
    Metric::histogram(
        names::COMMIT_TO_PUBLISH,
        "Seconds from the outbox row's creation (the order's commit) to the broker's confirm.",
    ),
    Metric::gauge(
        names::HELD_ORDERS,
        "Orders with a returned or nacked event not delivered yet (retried with their own backoff).",
    ),
    Metric::gauge(
        names::QUARANTINED,
        "Rows in outbox_quarantine; each holds back its order until an operator acts.",
    ),
    Metric::counter(
        names::QUARANTINED_TOTAL,
        "Outbox rows this instance moved into quarantine.",
    ),
    Metric::gauge(
        names::OLDEST_WRITER_AGE,
        "Seconds the writer transaction holding the relay's read floor back has been open (0 when none does).",
    ),
    Metric::gauge(
        names::BROKER_BLOCKED,
        "1 while the broker blocks this instance's publishing (a RabbitMQ resource alarm), else 0.",
    ),
    Metric::labelled_counter(
        names::AMQP_RECONNECTS,
        "Broker connections replaced after they were lost, by reason: heartbeat, io, closed, timeout.",
        "reason",
        RECONNECT_REASONS,
    ),
];

/// The live figures of one relay instance (of one outbox, for a process that relays several).
#[derive(Debug, Default)]
pub struct Status {
    /// Labels on every metric it records: none for a process with one relay, `shard="N"` for each
    /// of several (see [`Status::labelled`]).
    labels: Vec<metrics::Label>,
    backlog: AtomicU64,
    /// ms since the epoch of the oldest unsent row; 0 when the outbox is empty.
    oldest_ms: AtomicI64,
    last_published_seq: AtomicU64,
    active: AtomicBool,
    consecutive_failures: AtomicU32,
    published_total: AtomicU64,
    held_orders: AtomicU64,
    quarantined: AtomicU64,
    quarantined_total: AtomicU64,
    refused_total: AtomicU64,
    oldest_writer_age_ms: AtomicU64,
    /// The broker's reason and since when, while it blocks this instance's publishing.
    broker_blocked: Mutex<Option<(String, Instant)>>,
    /// Set from the loss of the broker connection until a new one is open (health).
    broker_lost: Mutex<Option<&'static str>>,
    amqp_reconnects: AtomicU64,
    /// The last failure of the broker or the database, until a cycle succeeds (a fleet
    /// instance reports it in its registry).
    last_error: Mutex<Option<String>>,
    /// Numbers the broker connections; the last one opened is the one whose loss counts for
    /// health (a late report of an older connection's loss must not undo a newer one).
    connection: AtomicU64,
    current_connection: AtomicU64,
}

/// A copy of the figures at one moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Snapshot {
    /// Rows waiting to be published, as last counted.
    pub backlog: u64,
    /// Age of the oldest of them, milliseconds (0 when none).
    pub oldest_unsent_age_ms: u64,
    /// The highest seq this instance saw confirmed.
    pub last_published_seq: u64,
    /// Whether this instance holds the leader lock.
    pub active: bool,
    /// Broker or database failures in a row (0 after a success).
    pub consecutive_failures: u32,
    /// Events this instance published (confirmed and deleted).
    pub published_total: u64,
    /// Orders waiting for the retry of a returned or nacked event (not in `GetStatus`).
    pub held_orders: u64,
    /// Rows in quarantine, as last counted (not in `GetStatus`).
    pub quarantined: u64,
    /// Rows this instance moved into quarantine (not in `GetStatus`).
    pub quarantined_total: u64,
    /// Events this instance saw returned or nacked (not in `GetStatus`).
    pub refused_total: u64,
    /// How long the writer holding the read floor back has been open, milliseconds (0: none
    /// does; not in `GetStatus`).
    pub oldest_writer_age_ms: u64,
    /// How long the broker has been blocking this instance's publishing, milliseconds (0: it
    /// does not; the reason is [`Status::broker_blocked`]).
    pub broker_blocked_ms: u64,
    /// Broker connections this instance replaced after losing them (not in `GetStatus`).
    pub amqp_reconnects: u64,
}

impl Status {
    /// The figures of one of several relays in a process: every metric it records carries the
    /// label `name="value"` (e.g. `shard="1"`), so the relays' gauges do not overwrite each other.
    pub fn labelled(name: &'static str, value: impl Into<String>) -> Self {
        Self {
            labels: vec![metrics::Label::new(name, value.into())],
            ..Self::default()
        }
    }

    /// The current figures; the oldest row's age is computed now.
    pub fn snapshot(&self) -> Snapshot {
        let oldest = self.oldest_ms.load(Relaxed);
        let age = if oldest == 0 {
            0
        } else {
            (Utc::now().timestamp_millis() - oldest).max(0) as u64
        };
        Snapshot {
            backlog: self.backlog.load(Relaxed),
            oldest_unsent_age_ms: age,
            last_published_seq: self.last_published_seq.load(Relaxed),
            active: self.active.load(Relaxed),
            consecutive_failures: self.consecutive_failures.load(Relaxed),
            published_total: self.published_total.load(Relaxed),
            held_orders: self.held_orders.load(Relaxed),
            quarantined: self.quarantined.load(Relaxed),
            quarantined_total: self.quarantined_total.load(Relaxed),
            refused_total: self.refused_total.load(Relaxed),
            oldest_writer_age_ms: self.oldest_writer_age_ms.load(Relaxed),
            broker_blocked_ms: self
                .broker_blocked()
                .map_or(0, |(_, d)| d.as_millis().max(1) as u64),
            amqp_reconnects: self.amqp_reconnects.load(Relaxed),
        }
    }

    /// The reason the broker gave and for how long, while it blocks this instance's publishing.
    pub fn broker_blocked(&self) -> Option<(String, Duration)> {
        lock(&self.broker_blocked)
            .as_ref()
            .map(|(reason, since)| (reason.clone(), since.elapsed()))
    }

    /// Why publishing is not possible right now for a broker reason (health says NOT_SERVING):
    /// from the loss of the connection until a new one is open.
    pub fn broker_lost(&self) -> Option<&'static str> {
        *lock(&self.broker_lost)
    }

    /// Records that the broker blocked publishing (with its reason) or unblocked it.
    pub(crate) fn set_broker_blocked(&self, reason: Option<&str>) {
        let blocked = reason.is_some();
        *lock(&self.broker_blocked) = reason.map(|r| (r.to_owned(), Instant::now()));
        metrics::gauge!(names::BROKER_BLOCKED, self.labels.clone())
            .set(f64::from(u8::from(blocked)));
    }

    /// Records the loss of the current broker connection (to be replaced), counted by
    /// `reason`.
    pub(crate) fn broker_connection_lost(&self, reason: &'static str, why: &'static str) {
        self.connection_lost(self.current_connection.load(Relaxed), reason, why);
    }

    /// Records the loss of broker connection number `connection` (see
    /// [`Status::broker_connection_ok`]): counted whatever it is, kept for health only while it is
    /// the current one.
    fn connection_lost(&self, connection: u64, reason: &'static str, why: &'static str) {
        {
            let mut lost = lock(&self.broker_lost);
            if connection == self.current_connection.load(Relaxed) {
                *lost = Some(why);
            }
        }
        self.amqp_reconnects.fetch_add(1, Relaxed);
        let mut labels = self.labels.clone();
        labels.push(metrics::Label::new("reason", reason));
        metrics::counter!(names::AMQP_RECONNECTS, labels).increment(1);
        // A lost connection is no longer blocked.
        self.set_broker_blocked(None);
    }

    /// Records that broker connection number `connection` (0: none, this instance no longer
    /// publishes) is now the current one and works.
    pub(crate) fn broker_connection_ok(&self, connection: u64) {
        let mut lost = lock(&self.broker_lost);
        self.current_connection.store(connection, Relaxed);
        *lost = None;
    }

    /// The number of the next broker connection, and what the relay does with what the broker
    /// says about it (see [`outbox_support::amqp::watch`]): logs it once, and records it in these figures.
    pub(crate) fn on_broker_change(
        self: &std::sync::Arc<Self>,
    ) -> (u64, impl Fn(&outbox_support::amqp::Change) + Send + 'static) {
        use outbox_support::amqp::Change;
        let status = self.clone();
        let connection = self.connection.fetch_add(1, Relaxed) + 1;
        (connection, move |change: &Change| match change {
            Change::Blocked(reason) => {
                tracing::warn!(
                    reason = %reason,
                    "relay: the broker blocked publishing ({reason}); sending nothing until it unblocks"
                );
                status.set_broker_blocked(Some(reason));
            }
            Change::Unblocked { for_ } => {
                tracing::info!("relay: the broker unblocked publishing after {for_:.1?}");
                status.set_broker_blocked(None);
            }
            Change::Lost(lost) => {
                tracing::warn!(
                    reason = lost.label(),
                    "relay: broker connection lost ({}); reconnecting",
                    lost.describe()
                );
                status.connection_lost(connection, lost.label(), lost.describe());
            }
        })
    }

    pub(crate) fn set_held_orders(&self, n: usize) {
        self.held_orders.store(n as u64, Relaxed);
        metrics::gauge!(names::HELD_ORDERS, self.labels.clone()).set(n as f64);
    }

    pub(crate) fn set_oldest_writer_age(&self, secs: f64) {
        self.oldest_writer_age_ms
            .store((secs * 1000.0) as u64, Relaxed);
        metrics::gauge!(names::OLDEST_WRITER_AGE, self.labels.clone()).set(secs);
    }

    pub(crate) fn set_quarantined(&self, n: u64) {
        self.quarantined.store(n, Relaxed);
        metrics::gauge!(names::QUARANTINED, self.labels.clone()).set(n as f64);
    }

    pub(crate) fn quarantined(&self) -> u64 {
        self.quarantined.load(Relaxed)
    }

    /// Records rows moved into quarantine (also counted as `failed{reason="corrupt"}`).
    pub(crate) fn moved_to_quarantine(&self, n: u64) {
        self.quarantined_total.fetch_add(n, Relaxed);
        metrics::counter!(names::QUARANTINED_TOTAL, self.labels.clone()).increment(n);
    }

    /// Records fresh backlog figures (the relay does after its reads; a status call may too).
    pub fn set_backlog(&self, b: Backlog) {
        self.backlog.store(b.rows, Relaxed);
        let oldest = b.oldest.map(|t| t.timestamp_millis().max(1)).unwrap_or(0);
        self.oldest_ms.store(oldest, Relaxed);
        metrics::gauge!(names::BACKLOG, self.labels.clone()).set(b.rows as f64);
        let age = b
            .oldest
            .map(|t| (Utc::now() - t).num_milliseconds().max(0) as f64 / 1000.0)
            .unwrap_or(0.0);
        metrics::gauge!(names::OLDEST_UNSENT_AGE, self.labels.clone()).set(age);
    }

    pub(crate) fn backlog_rows(&self) -> u64 {
        self.backlog.load(Relaxed)
    }

    pub(crate) fn set_active(&self, active: bool) {
        self.active.store(active, Relaxed);
        metrics::gauge!(names::ACTIVE, self.labels.clone()).set(if active { 1.0 } else { 0.0 });
    }

    /// The last failure of the broker or the database, until a cycle succeeds again (what a
    /// fleet's `list` shows as a database's last error).
    pub fn last_error(&self) -> Option<String> {
        lock(&self.last_error).clone()
    }

    pub(crate) fn set_last_error(&self, error: Option<String>) {
        *lock(&self.last_error) = error;
    }

    pub(crate) fn set_consecutive_failures(&self, n: u32) {
        self.consecutive_failures.store(n, Relaxed);
        metrics::gauge!(names::CONSECUTIVE_FAILURES, self.labels.clone()).set(f64::from(n));
    }

    /// Records events the broker confirmed: counters, last seq, commit-to-confirm latency.
    pub(crate) fn published(&self, events: &[(i64, DateTime<Utc>)]) {
        let now = Utc::now();
        let hist = metrics::histogram!(names::COMMIT_TO_PUBLISH, self.labels.clone());
        for (_, created) in events {
            hist.record((now - *created).num_microseconds().unwrap_or(0).max(0) as f64 / 1e6);
        }
        if let Some(max) = events.iter().map(|(s, _)| *s).max() {
            let last = self
                .last_published_seq
                .fetch_max(max as u64, Relaxed)
                .max(max as u64);
            metrics::gauge!(names::LAST_PUBLISHED_SEQ, self.labels.clone()).set(last as f64);
        }
        self.published_total.fetch_add(events.len() as u64, Relaxed);
        metrics::counter!(names::PUBLISHED, self.labels.clone()).increment(events.len() as u64);
    }

    /// Records `n` events that were not delivered, and why.
    pub(crate) fn failed(&self, reason: &'static str, n: usize) {
        if matches!(reason, "returned" | "nacked") {
            self.refused_total.fetch_add(n as u64, Relaxed);
        }
        if n > 0 {
            let mut labels = self.labels.clone();
            labels.push(metrics::Label::new("reason", reason));
            metrics::counter!(names::FAILED, labels).increment(n as u64);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
