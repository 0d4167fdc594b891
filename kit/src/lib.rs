//! What every outbox service shares, so that each rule lives in one place. The support code the
//! outbox crates share with the services (backoff, secret URLs, broker failover, metric
//! definitions, the AMQP connect, the trace context, the wire format) is the `outbox` crate's:
//! import it from there (`outbox_support::backoff`, `outbox_support::secret`, `outbox_support::failover`,
//! `outbox_support::metrics`, `outbox_support::amqp`, `outbox::trace`, `outbox::wire`), not through this crate.
//!
//! - [`admin`]: the admin services' token check (`ADMIN_TOKEN`), caller name and field checks;
//! - [`broker`]: the TLS settings of `amqps://` URLs and `AMQP_HEARTBEAT`, for `outbox_support::amqp::connect`;
//! - [`telemetry`]: tracing setup (`RUST_LOG`, `LOG_FORMAT=json`) and OpenTelemetry span export
//!   (`OTEL_EXPORTER_OTLP_ENDPOINT`);
//! - [`shutdown`]: one cancellation token fed by SIGTERM and ctrl-c;
//! - [`service`]: a service binary's `main` (healthcheck, or telemetry, build, run, flush);
//! - [`config`]: the one duration format of every setting (`200ms`, `1s`, `2m`), and the refusal
//!   of removed settings (the `*_MS` ones it replaced), naming their replacements;
//! - [`settings`]: the settings every service has (`GRPC_ADDR`, TLS, `METRICS_ADDR`, `LOG_FORMAT`,
//!   liveness, the admin tokens) in one struct each service flattens into its `Config`, and
//!   every service's default ports;
//! - [`liveness`]: the liveness settings (`AMQP_HEARTBEAT`, `DB_STATEMENT_TIMEOUT`) a service
//!   flattens into its `Config`;
//! - [`db`]: connect to PostgreSQL, creating the database when it is missing;
//! - [`email`]: the one rule for customer mail addresses (orders-svc and mail-svc);
//! - [`grpc`]: the one gRPC server wiring (service, health, reflection v1 and v1alpha for grpcurl,
//!   shutdown);
//! - [`health`]: `grpc.health.v1` statuses that follow what the service depends on, and the
//!   `healthcheck` subcommand;
//! - [`tls`]: TLS of the gRPC port (server and the tools' client side) and the PEM checks of
//!   every TLS setting;
//! - [`auth`]: the bearer tokens of `AUTH_TOKENS_FILE` / `ADMIN_TOKENS_FILE`, re-read on SIGHUP;
//! - [`metrics`]: the Prometheus recorder and its `/metrics` listener;
//! - [`outbox`]: the outbox table contract between orders-svc and relay-svc.

pub mod admin;
pub mod auth;
pub mod broker;
pub mod config;
pub mod db;
pub mod email;
pub mod grpc;
pub mod health;
pub mod liveness;
pub mod metrics;
pub mod outbox;
pub mod service;
pub mod settings;
pub mod shutdown;
pub mod telemetry;
pub mod tls;
