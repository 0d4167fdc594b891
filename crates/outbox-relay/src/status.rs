//! Every Prometheus metric the relay records: the names, their labels' values and their
//! declarations. The live figures behind them and behind `GetStatus` are [`crate::Status`],
//! which updates both together so the two never disagree.

use outbox_support::metrics::Metric;

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
    /// Gauge (fleet mode): the databases this instance holds the lease of.
    pub const FLEET_OWNED: &str = "relay_fleet_owned_databases";
    /// Gauge (fleet mode): 1 while this instance's last tick reached the fleet database, else 0.
    pub const FLEET_REGISTRY_UP: &str = "relay_fleet_registry_up";
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

/// What a fleet instance exports besides [`METRICS`] (each database's relay figures labelled
/// `db`).
pub const FLEET_METRICS: &[Metric] = &[
    Metric::gauge(
        names::FLEET_OWNED,
        "Fleet databases this instance holds the lease of and publishes.",
    ),
    Metric::gauge(
        names::FLEET_REGISTRY_UP,
        "1 while this fleet instance's last tick reached the fleet database (its registry), else 0.",
    ),
];
