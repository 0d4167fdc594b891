//! relay-svc settings: every one a flag and an environment variable (`--help` lists them).

use std::{net::SocketAddr, str::FromStr, time::Duration};

use clap::Parser;
use outbox_kit::{admin::AdminToken, health::Command, secret::SecretUrl, telemetry::LogFormat};
use sqlx::postgres::PgConnectOptions;

use crate::hook::BeforeDelete;

/// A shorter lease would let a standby terminate a leader that is merely busy for a moment.
const MIN_LEADER_LEASE: Duration = Duration::from_secs(2);
const MAX_LEADER_LEASE: Duration = Duration::from_secs(3600);

/// The command line: run the relay, or `healthcheck` a running one.
#[derive(Debug, Clone, Parser)]
#[command(name = "relay-svc", version, about, long_about = None)]
pub struct Cli {
    #[command(flatten)]
    pub config: Config,

    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Relay: publishes the orders outbox to RabbitMQ with publisher confirms, then deletes what the
/// broker confirmed. Run several; one holds the leader lock, the others stand by.
#[derive(Debug, Clone, Parser)]
#[command(name = "relay-svc", version, about, long_about = None)]
pub struct Config {
    /// The orders database (owned and migrated by orders-svc) whose outbox is published. Printed
    /// only with its password masked (`user:***@host`).
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/orders",
        hide_env_values = true
    )]
    pub database_url: SecretUrl,

    /// The RabbitMQ broker. Printed only with its password masked.
    #[arg(
        long,
        env = "AMQP_URL",
        default_value = "amqp://guest:guest@127.0.0.1:5672/%2f",
        hide_env_values = true
    )]
    pub amqp_url: SecretUrl,

    /// The durable topic exchange events are published to (declared at connect).
    #[arg(long, env = "AMQP_EXCHANGE", default_value = "orders.events")]
    pub amqp_exchange: String,

    /// Address the gRPC server (relay.v1.RelayService, health, reflection) listens on.
    #[arg(long, env = "GRPC_ADDR", default_value = "0.0.0.0:50052")]
    pub grpc_addr: SocketAddr,

    /// Address of the Prometheus `/metrics` listener.
    #[arg(long, env = "METRICS_ADDR", default_value = "0.0.0.0:9102")]
    pub metrics_addr: SocketAddr,

    /// Most outbox rows read and published per cycle (pipelined on one confirm channel).
    #[arg(long, env = "BATCH_SIZE", default_value_t = 256,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub batch_size: u32,

    /// First retry delay after a failure (broker or database), in ms; doubles up to the max.
    #[arg(long, env = "BACKOFF_MIN_MS", default_value_t = 200,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub backoff_min_ms: u64,

    /// Longest retry delay after repeated failures, in ms.
    #[arg(long, env = "BACKOFF_MAX_MS", default_value_t = 30_000,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub backoff_max_ms: u64,

    /// Fallback poll of the outbox when no NOTIFY arrives, in ms (a lost notification costs at
    /// most this much latency). Also how often the leader checks its lock connection when idle.
    #[arg(long, env = "POLL_INTERVAL_MS", default_value_t = 1_000,
          value_parser = clap::value_parser!(u64).range(50..))]
    pub poll_interval_ms: u64,

    /// How often a standby tries to take the leader lock, in ms.
    #[arg(long, env = "STANDBY_RETRY_MS", default_value_t = 1_000,
          value_parser = clap::value_parser!(u64).range(50..))]
    pub standby_retry_ms: u64,

    /// How long one wave of a batch may take, sending included (a broker applying flow control
    /// stops reading), until the broker confirmed it; then the connection is treated as broken.
    /// In ms.
    #[arg(long, env = "CONFIRM_TIMEOUT_MS", default_value_t = 15_000,
          value_parser = clap::value_parser!(u64).range(100..))]
    pub confirm_timeout_ms: u64,

    /// Leader lease: the leader proves it is alive every second; a standby that sees the
    /// leader's lock session silent for longer than this terminates it and takes over (a frozen
    /// or vanished leader). Accepts `10s`, `2m`, `500ms` or plain seconds; at least 2s.
    #[arg(long, env = "LEADER_LEASE", default_value = "10s", value_parser = parse_duration)]
    pub leader_lease: Duration,

    /// The token the admin service's mutating calls (`RequeueQuarantined`, `DropQuarantined`)
    /// must carry as `authorization: Bearer <token>`; at least 16 characters. Unset: the admin
    /// service is read-only. Never printed.
    #[arg(long, env = "ADMIN_TOKEN", hide_env_values = true, default_value = "",
          hide_default_value = true, value_parser = AdminToken::parse)]
    pub admin_token: AdminToken,

    /// Log output: human-readable text or JSON lines. Filter with RUST_LOG.
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,

    /// Test hook: stop between the broker's confirms and the outbox delete.
    #[doc(hidden)]
    #[arg(skip)]
    pub before_delete: Option<BeforeDelete>,
}

impl Config {
    /// Checks what clap cannot; the error names the setting to fix.
    pub fn validate(&self) -> anyhow::Result<()> {
        self.pg_options()?;
        self.amqp_url
            .parse("AMQP_URL", "AMQP URL", lapin::uri::AMQPUri::from_str)?;
        if self.amqp_exchange.is_empty() || self.amqp_exchange.len() > 255 {
            anyhow::bail!("AMQP_EXCHANGE must be 1 to 255 bytes long");
        }
        if self.leader_lease < MIN_LEADER_LEASE || self.leader_lease > MAX_LEADER_LEASE {
            anyhow::bail!(
                "LEADER_LEASE must be between {MIN_LEADER_LEASE:?} and {MAX_LEADER_LEASE:?} \
                 (the leader proves it is alive every second)"
            );
        }
        self.admin_token.validate()?;
        if self.backoff_min_ms > self.backoff_max_ms {
            anyhow::bail!(
                "BACKOFF_MIN_MS ({}) must not exceed BACKOFF_MAX_MS ({})",
                self.backoff_min_ms,
                self.backoff_max_ms
            );
        }
        Ok(())
    }

    /// The parsed `DATABASE_URL` (the error names it and never shows the password).
    pub fn pg_options(&self) -> anyhow::Result<PgConnectOptions> {
        outbox_kit::db::options(&self.database_url)
    }

    /// The relay library's settings: the table `outbox` of the orders database.
    pub fn settings(&self) -> outbox_relay::Settings {
        let mut s = outbox_relay::Settings::new(
            self.database_url.expose(),
            self.amqp_url.expose(),
            self.amqp_exchange.clone(),
        );
        s.batch_size = self.batch_size;
        s.backoff_min_ms = self.backoff_min_ms;
        s.backoff_max_ms = self.backoff_max_ms;
        s.poll_interval_ms = self.poll_interval_ms;
        s.standby_retry_ms = self.standby_retry_ms;
        s.confirm_timeout_ms = self.confirm_timeout_ms;
        s.leader_lease = self.leader_lease;
        s.before_delete = self.before_delete.clone();
        s
    }
}

/// Parses `500ms`, `10s`, `2m`, `1h` or a plain number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, unit) = s.split_at(split);
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{s:?} is not a duration (use e.g. 10s, 2m, 500ms)"))?;
    match unit.trim() {
        "" | "s" => Ok(Duration::from_secs(n)),
        "ms" => Ok(Duration::from_millis(n)),
        "m" => Ok(Duration::from_secs(n * 60)),
        "h" => Ok(Duration::from_secs(n * 3600)),
        other => Err(format!(
            "unknown duration unit {other:?} (use ms, s, m or h)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lease_is_a_duration_and_is_range_checked() {
        let cfg = Config::parse_from(["relay-svc"]);
        assert_eq!(cfg.leader_lease, Duration::from_secs(10));
        cfg.validate().expect("defaults are valid");
        let cfg = Config::parse_from(["relay-svc", "--leader-lease", "1500ms"]);
        let err = cfg.validate().expect_err("too short");
        assert!(err.to_string().contains("LEADER_LEASE"), "{err}");
        assert!(Config::try_parse_from(["relay-svc", "--leader-lease", "soon"]).is_err());
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("30"), Ok(Duration::from_secs(30)));
    }
}
