//! orders-svc settings: every one a flag and an environment variable (`--help` lists them).

use std::net::SocketAddr;

use clap::Parser;
use outbox_kit::{health::Command, telemetry::LogFormat};
use outbox_support::{failover::BrokerUrls, secret::SecretUrl};

/// The command line: run the service, or `healthcheck` a running one.
#[derive(Debug, Clone, Parser)]
#[command(name = "orders-svc", version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub config: Config,

    #[command(subcommand)]
    pub command: Option<Command>,
}

impl outbox_kit::service::Settings for Config {
    fn grpc_addr(&self) -> SocketAddr {
        self.grpc_addr
    }

    fn log_format(&self) -> LogFormat {
        self.log_format
    }
}

/// gRPC orders service: writes each order change and its outbox event in one PostgreSQL transaction.
#[derive(Debug, Clone, Parser)]
#[command(name = "orders-svc", version, about, long_about = None)]
pub struct Config {
    /// Address the gRPC server (orders.v1.OrderService, health, reflection) listens on.
    #[arg(long, env = "GRPC_ADDR", default_value = "0.0.0.0:50051")]
    pub grpc_addr: SocketAddr,

    #[command(flatten)]
    pub grpc_security: outbox_kit::grpc::SecuritySettings,

    /// Address of the Prometheus `/metrics` listener.
    #[arg(long, env = "METRICS_ADDR", default_value = "0.0.0.0:9101")]
    pub metrics_addr: SocketAddr,

    /// The orders database; created if missing, migrated at startup. Printed only with its
    /// password masked (`user:***@host`).
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/orders",
        hide_env_values = true
    )]
    pub database_url: SecretUrl,

    /// Sharded writes: the order databases, comma-separated (a comma inside a password is `%2C`).
    /// An order lives in shard `fnv1a64(id) × N >> 64` (docs/ARCHITECTURE.md, "Sharded writes");
    /// each shard is created if missing, migrated and has its own outbox. Unset: one shard,
    /// `DATABASE_URL`. Printed only with passwords masked.
    #[arg(long, env = "SHARDS", hide_env_values = true)]
    pub shards: Option<BrokerUrls>,

    /// Size of the PostgreSQL connection pool.
    #[arg(long, env = "DB_MAX_CONNECTIONS", default_value_t = 32,
          value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub db_max_connections: u32,

    /// Log output: human-readable text or JSON lines. Filter with RUST_LOG.
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

impl Config {
    /// Checks what clap cannot; the error names the setting to fix and never shows a password.
    pub fn validate(&self) -> anyhow::Result<()> {
        match &self.shards {
            None => {
                outbox_kit::db::options(&self.database_url)?;
            }
            Some(shards) => {
                shards.validate("SHARDS", "PostgreSQL URL", |url| {
                    <sqlx::postgres::PgConnectOptions as std::str::FromStr>::from_str(url)
                })?;
            }
        }
        Ok(())
    }

    /// The order databases, shard 0 first: `SHARDS`, or `DATABASE_URL` alone when it is unset.
    pub fn shard_urls(&self) -> Vec<SecretUrl> {
        match &self.shards {
            Some(shards) => shards.urls().to_vec(),
            None => vec![self.database_url.clone()],
        }
    }
}
