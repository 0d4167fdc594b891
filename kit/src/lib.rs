//! What every outbox service shares, so that each rule lives in one place:
//!
//! - [`admin`]: the admin services' token check (`ADMIN_TOKEN`), caller name and field checks;
//! - [`amqp`]: the one AMQP connect, with the TLS settings of `amqps://` URLs;
//! - [`telemetry`]: tracing setup (`RUST_LOG`, `LOG_FORMAT=json`) and OpenTelemetry span export
//!   (`OTEL_EXPORTER_OTLP_ENDPOINT`);
//! - [`shutdown`]: one cancellation token fed by SIGTERM and ctrl-c;
//! - [`config`]: the one duration format of every setting (`200ms`, `1s`, `2m`), and the
//!   refusal of removed settings (the `*_MS` ones it replaced), naming their replacements;
//! - [`db`]: connect to PostgreSQL, creating the database when it is missing;
//! - [`email`]: the one rule for customer mail addresses (orders-svc and mail-svc);
//! - [`grpc`]: the one gRPC server wiring (service, health, reflection v1 and v1alpha for grpcurl,
//!   shutdown);
//! - [`health`]: `grpc.health.v1` statuses that follow what the service depends on, and the
//!   `healthcheck` subcommand;
//! - [`tls`]: TLS of the gRPC port (server and the tools' client side) and the PEM checks of
//!   every TLS setting;
//! - [`auth`]: the bearer tokens of `AUTH_TOKENS_FILE` / `ADMIN_TOKENS_FILE`, re-read on SIGHUP;
//! - [`secret`]: [`secret::SecretUrl`], URLs whose password never reaches a log or an error;
//! - [`metrics`]: the Prometheus recorder and its `/metrics` listener;
//! - [`backoff`]: capped exponential backoff with jitter for every retry loop;
//! - [`outbox`]: the outbox table contract between orders-svc and relay-svc;
//! - [`trace`]: the W3C trace context carried from the gRPC call through the outbox to the mail.

pub mod admin;
pub mod amqp;
pub mod auth;
pub mod config;
pub mod db;
pub mod email;
pub mod grpc;
pub mod health;
pub mod metrics;
pub mod outbox;
pub mod shutdown;
pub mod telemetry;
pub mod tls;
/// Capped exponential backoff with jitter, shared with the outbox crates' retry loops.
pub use ::outbox::backoff;
/// Several broker addresses (`AMQP_URL` as a list) and connecting with failover.
pub use ::outbox::failover as amqp_failover;
/// URLs whose password never reaches a log or an error, shared with the outbox crates.
pub use ::outbox::secret;
/// The W3C trace context, defined by the `outbox` crate (the outbox stores it).
pub use ::outbox::trace;
/// The message format of relayed events: header names (e.g. the shard) and their rules.
pub use ::outbox::wire;

#[cfg(feature = "testing")]
pub mod testing;
