//! Every Prometheus metric mail-svc exports: its name, type and HELP text, in one list that
//! [`register`] hands to the recorder at start-up.

use outbox_support::metrics::Metric;

/// Counter: events processed (their mails queued).
pub const PROCESSED: &str = "mail_processed_total";
/// Counter: duplicate deliveries skipped.
pub const SKIPPED: &str = "mail_skipped_total";
/// Counter: events held for their predecessor.
pub const HELD: &str = "mail_held_total";
/// Counter: poison messages dead-lettered.
pub const DEAD_LETTERED: &str = "mail_dead_lettered_total";
/// Counter: mails the SMTP server (or the log mailer) accepted.
pub const SENT: &str = "mail_sent_total";
/// Counter: mails refused for good (marked FAILED).
pub const FAILED: &str = "mail_failed_total";
/// Counter: temporary rejections of one mail.
pub const DEFERRED: &str = "mail_deferred_total";
/// Gauge: 1 while the SMTP circuit is open.
pub const SMTP_CIRCUIT_OPEN: &str = "mail_smtp_circuit_open";
/// Counter: SMTP sessions refused or lost.
pub const SMTP_SESSION_FAILURES: &str = "mail_smtp_session_failures_total";
/// Counter: consumer transactions that failed for a reason other than the event.
pub const DB_RETRIES: &str = "mail_db_retries_total";
/// Gauge: events held now.
pub const HELD_EVENTS: &str = "mail_held_events";
/// Gauge: age of the oldest held event, seconds.
pub const OLDEST_HELD_AGE: &str = "mail_oldest_held_age_seconds";
/// Gauge: mails queued and not sent yet.
pub const UNSENT_MAILS: &str = "mail_unsent_mails";
/// Counter: sent mails deleted by retention (MAIL_RETENTION).
pub const PRUNED_MAILS: &str = "mail_pruned_mails_total";
/// Counter: audit rows deleted by retention (ADMIN_ACTIONS_RETENTION).
pub const PRUNED_ADMIN_ACTIONS: &str = "mail_pruned_admin_actions_total";

/// Gauge: 1 while the broker blocks the consumer's connection (a RabbitMQ resource alarm).
pub const BROKER_BLOCKED: &str = "mail_broker_blocked";
/// Counter: broker connections replaced after they were lost, by `reason`.
pub const AMQP_RECONNECTS: &str = "mail_amqp_reconnects_total";
/// The values of `mail_amqp_reconnects_total{reason}` (see `outbox_support::amqp::Lost`).
pub const RECONNECT_REASONS: &[&str] = &["heartbeat", "io", "closed", "timeout"];

/// What mail-svc exports, with HELP texts.
pub const METRICS: &[Metric] = &[
    Metric::counter(
        PROCESSED,
        "Events processed by the consumer (their mail queued), across this instance's batches.",
    ),
    Metric::counter(
        SKIPPED,
        "Deliveries skipped as duplicates (seq at or below the order's watermark).",
    ),
    Metric::counter(
        HELD,
        "Events held because their predecessor in the order's chain was not processed yet.",
    ),
    Metric::counter(
        DEAD_LETTERED,
        "Poison messages sent to the dead-letter queue (reason in the x-death-reason header).",
    ),
    Metric::counter(SENT, "Mails the mailer delivered."),
    Metric::counter(
        FAILED,
        "Mails the SMTP server refused for good (marked FAILED).",
    ),
    Metric::counter(
        DEFERRED,
        "Temporary rejections of one mail, each retried on the mail's own schedule.",
    ),
    Metric::gauge(
        SMTP_CIRCUIT_OPEN,
        "1 while the SMTP server refuses the session and no mail is sent.",
    ),
    Metric::counter(
        SMTP_SESSION_FAILURES,
        "SMTP sessions the server refused or could not hold (down, credentials, TLS, sender, relay denied).",
    ),
    Metric::counter(
        DB_RETRIES,
        "Consumer transactions that failed for a reason other than the event (outage, read-only, overload) and wait to be retried.",
    ),
    Metric::gauge(
        HELD_EVENTS,
        "Events held now, waiting for their predecessor.",
    ),
    Metric::gauge(
        OLDEST_HELD_AGE,
        "Age of the oldest held event in seconds (0 when none is held).",
    ),
    Metric::gauge(UNSENT_MAILS, "Mails queued and not sent yet."),
    Metric::counter(
        PRUNED_MAILS,
        "Sent mails this instance deleted because they were older than MAIL_RETENTION.",
    ),
    Metric::counter(
        PRUNED_ADMIN_ACTIONS,
        "Audit rows (admin_actions) this instance deleted because they were older than ADMIN_ACTIONS_RETENTION.",
    ),
    Metric::gauge(
        BROKER_BLOCKED,
        "1 while the broker blocks the consumer's connection (a RabbitMQ resource alarm), else 0.",
    ),
    Metric::labelled_counter(
        AMQP_RECONNECTS,
        "Broker connections replaced after they were lost, by reason: heartbeat, io, closed, timeout.",
        "reason",
        RECONNECT_REASONS,
    ),
];

/// Describes every metric, starts the counters at 0 and sets `build_info`.
pub fn register() {
    outbox_kit::metrics::register("mail-svc", env!("CARGO_PKG_VERSION"), METRICS);
    metrics::gauge!(BROKER_BLOCKED).set(0.0);
}
