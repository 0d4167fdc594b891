//! The live figures and every metric name, from [`outbox_relay::status`].

pub use outbox_relay::status::*;
