//! The outbox table contract between orders-svc (the writer) and relay-svc (the reader).
//!
//! orders-svc's migrations own the `outbox` table; since migration 0003 it has the shape of the
//! `outbox` crate's table (`outbox::TableName::migration_sql`), and orders-svc appends through
//! that crate. Migration 0006 gave the rows written before it (without a `routing_key`) theirs.
//!
//! How to read it without losing rows: sequence values are handed out before commit, so
//! transactions commit out of seq order and a row with a smaller seq can appear after a larger
//! one was read. A reader must therefore never keep a high-water mark (`seq > last`) nor delete
//! ranges (`seq <= last`): it reads whatever rows are present (`order by seq`), and deletes exactly
//! the seqs the broker confirmed. Within one order there is no such race: orders-svc appends an
//! order's next event only while holding that order's row lock, after the previous event committed,
//! so an order's events always commit in seq order.

/// The channel orders-svc notifies (after commit) when it appended events, so the relay wakes up
/// without polling: `outbox::TableName::notify_channel` of table `outbox`.
pub const NOTIFY_CHANNEL: &str = "outbox_events";
