//! Test hook (hidden), from `outbox_relay::hook`.

pub use outbox_relay::hook::*;
