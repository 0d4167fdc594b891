//! The local machine's defaults, each written once: the stack as `deploy/local.sh` runs it
//! (PostgreSQL and RabbitMQ on 127.0.0.1 with their stock users). Every service's clap default,
//! outboxctl's and the console's read these constants; the default ports are
//! [`crate::settings`]'s.

use std::time::Duration;

/// The orders database: orders-svc's `DATABASE_URL` (it owns and migrates it), relay-svc's
/// `DATABASE_URL` (it publishes its outbox), the tools' `*_ORDERS_DB`.
pub const ORDERS_DATABASE_URL: &str = "postgres://postgres@127.0.0.1:5432/orders";

/// mail-svc's database: its `DATABASE_URL`, the tools' `*_MAIL_DB`.
pub const MAIL_DATABASE_URL: &str = "postgres://postgres@127.0.0.1:5432/mail";

/// The broker: relay-svc's and mail-svc's `AMQP_URL`.
pub const AMQP_URL: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";

/// The topic exchange relay-svc publishes order events to and mail-svc binds its queue to:
/// their `AMQP_EXCHANGE`.
pub const EXCHANGE: &str = "orders.events";

/// mail-svc's queue: its `MAIL_QUEUE`, and where a replay sends by default (the tools'
/// replay queue).
pub const MAIL_QUEUE: &str = "mail-svc.order-events";

/// How old the event an order's consumer waits for may get before the completeness audit
/// reports the order as lagging (outboxctl's and the console's audit grace): normal latency and
/// held chains that resolve within it are not reported.
pub const AUDIT_GRACE: Duration = Duration::from_secs(60);

/// orders-svc's outbox table: it appends to it, relay-svc publishes it, the tools read it and
/// the tables `outbox::TableName` derives from it (`outbox_quarantine`, `outbox_published`, …).
pub const ORDERS_OUTBOX: &str = "outbox";

/// mail-svc's inbox watermark table (its migration 0001, so named with
/// `outbox_inbox::Tables::existing`); the tools read it.
pub const MAIL_INBOX_PROGRESS: &str = "order_progress";

/// mail-svc's inbox held-events table (its migration 0001); the tools read it.
pub const MAIL_INBOX_HELD: &str = "held_events";

/// The aggregate id column of mail-svc's inbox tables.
pub const MAIL_INBOX_AGGREGATE: &str = "order_id";
