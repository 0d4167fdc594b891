//! The live figures and every metric name, from [`outbox_relay::status`].

pub use outbox_relay::status::*;

/// Describes every metric, starts the counters at 0 and sets `build_info`.
pub fn register() {
    outbox_kit::metrics::register("relay-svc", env!("CARGO_PKG_VERSION"), METRICS);
}
