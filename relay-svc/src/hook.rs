//! The crash tests' hook, `outbox_relay::hook`.

pub use outbox_relay::hook::*;
