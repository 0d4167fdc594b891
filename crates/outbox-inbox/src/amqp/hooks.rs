//! The user's callbacks of a [`Consumer`](super::Consumer), shared by its clones and by the batches
//! it runs, and what a retried attempt tells them ([`Retrying`]).

use std::{sync::Arc, time::Duration};

use futures::future::BoxFuture;
use lapin::message::Delivery;
use outbox_support::amqp::Change;
use sqlx::PgConnection;

use crate::failure::Failure;

/// What the broker says about a connection ([`Change`]), for the user's logs and health.
type OnChange = Arc<dyn Fn(&Change) + Send + Sync>;

/// Told whether a session consumes ([`super::Consumer::on_consuming`]).
type OnConsuming = Arc<dyn Fn(bool) + Send + Sync>;
/// Told of a retried attempt ([`super::Consumer::on_retry`]).
type OnRetry = Arc<dyn Fn(&Retrying<'_>) + Send + Sync>;
/// Told of a settled dead letter and its reason ([`super::Consumer::on_dead_letter`]).
type OnDeadLetter = Arc<dyn Fn(&Delivery, &str) + Send + Sync>;

/// Writes a dead letter's record in the user's database ([`super::Consumer::record_dead_letters`]).
type RecordDeadLetter = Arc<
    dyn for<'c> Fn(
            &'c mut PgConnection,
            &'c Delivery,
            &'c str,
        ) -> BoxFuture<'c, Result<(), sqlx::Error>>
        + Send
        + Sync,
>;

/// The user's callbacks, shared by a consumer's clones.
#[derive(Clone, Default)]
pub(super) struct Hooks {
    pub(super) on_change: Option<OnChange>,
    pub(super) on_consuming: Option<OnConsuming>,
    pub(super) on_retry: Option<OnRetry>,
    pub(super) on_dead_letter: Option<OnDeadLetter>,
    pub(super) record_dead_letter: Option<RecordDeadLetter>,
}

/// A failed attempt at a transaction that is tried again ([`super::Consumer::on_retry`]).
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct Retrying<'a> {
    /// What failed: `a batch of <n>`, `seq <n>` (one delivery), `recording a dead letter`.
    pub what: &'a str,
    /// The error.
    pub error: &'a str,
    /// Its SQLSTATE, when the database raised it.
    pub sqlstate: Option<&'a str>,
    /// What it means ([`Failure::Transient`] or [`Failure::Reconnect`]: a poison failure is
    /// dead-lettered, not tried again).
    pub failure: Failure,
    /// Failed attempts so far at this transaction.
    pub attempt: u32,
    /// The wait before the next attempt.
    pub delay: Duration,
}
