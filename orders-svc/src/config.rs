//! orders-svc settings: every one a flag and an environment variable (`--help` lists them).

use clap::Parser;
use outbox_kit::{
    defaults,
    settings::{Absent, ORDERS_PORTS, Ports, Profile, ServerSettings},
};
use outbox_support::{failover::BrokerUrls, secret::SecretUrl};
use sqlx::postgres::PgConnectOptions;

/// gRPC orders service: writes each order change and its outbox event in one PostgreSQL transaction.
#[derive(Debug, Clone, Parser)]
#[command(name = "orders-svc", version, about, long_about = None)]
pub struct Config {
    /// The orders database; created if missing, migrated at startup. Printed only with its
    /// password masked (`user:***@host`).
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = defaults::ORDERS_DATABASE_URL,
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

    /// GRPC_ADDR, its TLS and tokens, METRICS_ADDR, LOG_FORMAT.
    #[command(flatten)]
    pub server: ServerSettings<Config>,
}

/// No broker, no admin service.
impl Profile for Config {
    const PORTS: Ports = ORDERS_PORTS;
    const GRPC_SERVICES: &'static str = "orders.v1.OrderService";
    type Liveness = Absent;
    type Admin = Absent;
    fn server(&self) -> &ServerSettings<Self> {
        &self.server
    }
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

    /// Each order database's options, shard 0 first, with the setting that names it in errors:
    /// every statement planned for its own arguments ([`outbox_kit::db::custom_plans`]), since a
    /// generic plan of the batch's `where id = any($1)` cached while `orders` was small scans the
    /// whole table.
    pub fn shard_options(&self) -> anyhow::Result<Vec<(String, PgConnectOptions)>> {
        let urls = self.shard_urls();
        let count = urls.len();
        urls.iter()
            .enumerate()
            .map(|(index, url)| {
                let setting = match &self.shards {
                    None => "DATABASE_URL".to_owned(),
                    Some(_) => format!("SHARDS (shard {index} of {count})"),
                };
                let options =
                    outbox_kit::db::custom_plans(outbox_kit::db::options_for(&setting, url)?);
                Ok((setting, options))
            })
            .collect()
    }
}
