//! The relay's error type, from [`outbox_relay::error`] (`GetStatus` itself never fails).

pub use outbox_relay::error::*;
