//! What the outbox services (orders-svc, relay-svc, mail-svc) and the operator's tools
//! (outboxctl, the console) share, so that each rule lives in one place. The support code the
//! published crates share with the services is theirs, imported from there, not through this
//! crate: backoff, secret URLs, broker failover, metric definitions and the AMQP connect are
//! `outbox-support`'s (`outbox_support::{backoff, secret, failover, metrics, amqp}`); the trace
//! context and the wire format are the `outbox` crate's (`outbox::trace`, `outbox::wire`).
//!
//! - [`admin`]: the admin services' token check (`ADMIN_TOKEN`), caller name and field checks;
//! - [`broker`]: the TLS settings of `amqps://` URLs and `AMQP_HEARTBEAT`, for `outbox_support::amqp::connect`;
//! - [`telemetry`]: tracing setup (`RUST_LOG`, `LOG_FORMAT=json`) and OpenTelemetry span export
//!   (`OTEL_EXPORTER_OTLP_ENDPOINT`);
//! - [`shutdown`]: one cancellation token fed by SIGTERM and ctrl-c;
//! - [`service`]: a service binary's whole `main` ([`service::run`]: the command line, then
//!   healthcheck, or telemetry, build, run, flush); outboxctl's and the console's `main` are
//!   their own;
//! - [`config`]: the one duration format of every setting (`200ms`, `1s`, `2m`), each duration's
//!   bounds declared beside its field, and the refusal of removed settings (the `*_MS` ones it
//!   replaced), naming their replacements;
//! - [`settings`]: the settings every service has (`GRPC_ADDR`, TLS, `METRICS_ADDR`, `LOG_FORMAT`,
//!   liveness, the admin tokens) in one struct each service flattens into its `Config`, what
//!   differs between the services (`Profile`), and every service's default ports;
//! - [`defaults`]: the local machine's defaults (database and broker URLs, the exchange, mail-svc's
//!   queue, the audit grace) that the services and the tools share, each written once;
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
//! - [`auth`]: the bearer tokens of `AUTH_TOKENS_FILE` / `ADMIN_TOKENS_FILE`, re-read on SIGHUP,
//!   and the one parser of their `<name> <token>` format (the console's token files too);
//! - [`metrics`]: the Prometheus recorder and its `/metrics` listener;
//! - [`outbox`]: the outbox table contract between orders-svc and relay-svc.

pub mod admin;
pub mod auth;
pub mod broker;
pub mod config;
pub mod db;
pub mod defaults;
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
