//! Every Prometheus metric orders-svc exports: its name, type and HELP text, in one list that
//! [`register`] hands to the recorder at start-up.

use outbox_support::metrics::Metric;

/// Counter: `Upsert` calls by `outcome`.
pub const UPSERTS: &str = "orders_upserts_total";
/// Histogram: `Upsert` latency, seconds.
pub const UPSERT_DURATION: &str = "orders_upsert_duration_seconds";
/// Histogram: calls per group-commit transaction.
pub const UPSERT_BATCH_SIZE: &str = "orders_upsert_batch_size";

/// The values of `orders_upserts_total{outcome}`.
pub const OUTCOMES: &[&str] = &[
    "changed",
    "unchanged",
    "invalid_argument",
    "failed_precondition",
    "error",
];

/// What orders-svc exports, with HELP texts.
pub const METRICS: &[Metric] = &[
    Metric::labelled_counter(
        UPSERTS,
        "Upsert calls by outcome: changed, unchanged, invalid_argument, failed_precondition, error.",
        "outcome",
        OUTCOMES,
    ),
    Metric::histogram(
        UPSERT_DURATION,
        "Upsert latency in seconds, from the call to its answer (group commit included).",
    ),
    Metric::histogram(
        UPSERT_BATCH_SIZE,
        "Upsert calls applied per group-commit transaction (1 on a quiet service).",
    ),
];

/// Describes every metric, starts the counters at 0 and sets `build_info`.
pub fn register() {
    outbox_kit::metrics::register("orders-svc", env!("CARGO_PKG_VERSION"), METRICS);
}
