//! relay-svc settings: every one a flag and an environment variable (`--help` lists them).

use std::time::Duration;

use clap::Parser;
use outbox_kit::{
    config::{Removed, default_duration, help_with_default, parse_duration},
    health::Command,
    liveness::LivenessSettings,
    settings::{AdminCalls, AdminSettings, Ports, Profile, RELAY_PORTS, ServerSettings},
};
use outbox_support::{failover::BrokerUrls, secret::SecretUrl};
use sqlx::postgres::PgConnectOptions;

use crate::hook::BeforeDelete;

/// The settings removed from relay-svc, refused at start-up naming their replacements (see
/// [`outbox_kit::config::refuse_removed`]).
pub const REMOVED: &[Removed] = &[
    Removed {
        name: "BACKOFF_MIN_MS",
        replacement: "BACKOFF_MIN",
        example: "200ms",
    },
    Removed {
        name: "BACKOFF_MAX_MS",
        replacement: "BACKOFF_MAX",
        example: "30s",
    },
    Removed {
        name: "POLL_INTERVAL_MS",
        replacement: "POLL_INTERVAL",
        example: "1s",
    },
    Removed {
        name: "STANDBY_RETRY_MS",
        replacement: "STANDBY_RETRY",
        example: "1s",
    },
    Removed {
        name: "CONFIRM_TIMEOUT_MS",
        replacement: "CONFIRM_TIMEOUT",
        example: "15s",
    },
];

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

/// What relay-svc's [`ServerSettings`] are: a broker, an admin service, and the gRPC port's
/// settings after the broker's in `--help`.
#[derive(Debug, Clone)]
pub struct Relay;

impl Profile for Relay {
    const PORTS: Ports = RELAY_PORTS;
    const GRPC_SERVICES: &'static str = "relay.v1.RelayService";
    const LISTEN_AFTER: Option<&'static str> = Some("amqp_exchange");
    const LIVENESS_AFTER: Option<&'static str> = Some("amqp_client_key_file");
    type Liveness = LivenessSettings;
    type Admin = AdminSettings<Self>;
}

impl AdminCalls for Relay {
    const CALLS: &'static str = "`RequeueQuarantined`, `DropQuarantined`, `Replay`";
}

impl outbox_kit::service::Settings for Config {
    type Profile = Relay;
    fn server(&self) -> &ServerSettings<Relay> {
        &self.server
    }
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

    /// Sharded writes: every order database whose outbox this process publishes, comma-separated,
    /// shard 0 first (as orders-svc's `SHARDS`). One relay per shard, each with its own leader
    /// lock in its own database. Unset: one, `DATABASE_URL`. Printed only with passwords masked.
    #[arg(long, env = "RELAY_SHARDS", hide_env_values = true)]
    pub relay_shards: Option<outbox_support::failover::BrokerUrls>,

    /// The RabbitMQ broker, or a cluster's nodes as a comma-separated list tried in order, with
    /// failover when the connection is lost. Printed only with passwords masked.
    #[arg(
        long,
        env = "AMQP_URL",
        default_value = "amqp://guest:guest@127.0.0.1:5672/%2f",
        hide_env_values = true
    )]
    pub amqp_url: BrokerUrls,

    #[command(flatten)]
    pub amqp_tls: outbox_kit::broker::TlsSettings,

    /// The durable topic exchange events are published to (declared at connect).
    #[arg(long, env = "AMQP_EXCHANGE", default_value = "orders.events")]
    pub amqp_exchange: String,

    /// Most outbox rows read and published per cycle (pipelined on one confirm channel).
    #[arg(long, env = "BATCH_SIZE", default_value_t = outbox_relay::DEFAULT_BATCH_SIZE,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub batch_size: u32,

    // The five durations below are optional: unset, the relay library's default applies
    // (`outbox_relay::Settings::new`), and their help shows that default.
    /// First retry delay after a failure (broker or database); doubles up to BACKOFF_MAX.
    #[arg(long, env = "BACKOFF_MIN", value_parser = parse_duration,
          help = help_with_default("First retry delay after a failure (broker or database), e.g. \
          `200ms`; doubles up to BACKOFF_MAX.", outbox_relay::DEFAULT_BACKOFF_MIN))]
    pub backoff_min: Option<Duration>,

    /// Longest retry delay after repeated failures.
    #[arg(long, env = "BACKOFF_MAX", value_parser = parse_duration,
          help = help_with_default("Longest retry delay after repeated failures, e.g. `30s`.",
          outbox_relay::DEFAULT_BACKOFF_MAX))]
    pub backoff_max: Option<Duration>,

    /// Fallback poll of the outbox when no NOTIFY arrives.
    #[arg(long, env = "POLL_INTERVAL", value_parser = parse_duration,
          help = help_with_default("Fallback poll of the outbox when no NOTIFY arrives, e.g. `1s` \
          (a lost notification costs at most this much latency). Also how often the leader \
          checks its lock connection when idle. At least 50ms.",
          outbox_relay::DEFAULT_POLL_INTERVAL))]
    pub poll_interval: Option<Duration>,

    /// How often a standby tries to take the leader lock.
    #[arg(long, env = "STANDBY_RETRY", value_parser = parse_duration,
          help = help_with_default("How often a standby tries to take the leader lock, e.g. `1s`. \
          At least 50ms.", outbox_relay::DEFAULT_STANDBY_RETRY))]
    pub standby_retry: Option<Duration>,

    /// How long one wave of a batch may take until the broker confirmed it.
    #[arg(long, env = "CONFIRM_TIMEOUT", value_parser = parse_duration,
          help = help_with_default("How long one wave of a batch may take, sending included (a \
          broker applying flow control stops reading), until the broker confirmed it; then the \
          connection is treated as broken. E.g. `15s`; at least 100ms.",
          outbox_relay::DEFAULT_CONFIRM_TIMEOUT))]
    pub confirm_timeout: Option<Duration>,

    /// Leader lease: the leader proves it is alive every second; a standby that sees the
    /// leader's lock session silent for longer than this terminates it and takes over (a frozen
    /// or vanished leader). Accepts `10s`, `2m`, `500ms` or plain seconds; at least 2s.
    #[arg(long, env = "LEADER_LEASE", value_parser = parse_duration,
          default_value = default_duration(outbox_relay::DEFAULT_LEADER_LEASE))]
    pub leader_lease: Duration,

    /// How long published rows are kept in `outbox_published`, the window of `outboxctl trace`
    /// and `outboxctl replay`, e.g. `7d`, `36h`. Whole days are dropped once older (the leader
    /// checks hourly). `0s`: keep none (trace and replay then find nothing published).
    #[arg(long, env = "PUBLISHED_RETENTION", value_parser = parse_duration,
          default_value = default_duration(outbox_relay::DEFAULT_PUBLISHED_RETENTION))]
    pub published_retention: Duration,

    /// GRPC_ADDR, its TLS and tokens, METRICS_ADDR (after AMQP_EXCHANGE in `--help`),
    /// AMQP_HEARTBEAT and DB_STATEMENT_TIMEOUT (after the broker's TLS), ADMIN_TOKEN,
    /// ADMIN_TOKENS_FILE, LOG_FORMAT.
    #[command(flatten)]
    pub server: ServerSettings<Relay>,

    /// Fleet mode: FLEET_DATABASE_URL, FLEET_INSTANCE_ID, FLEET_LEASE, FLEET_POLL_INTERVAL.
    #[command(flatten)]
    pub fleet: crate::fleet::FleetConfig,

    /// Test hook: stop between the broker's confirms and the outbox delete.
    #[doc(hidden)]
    #[arg(skip)]
    pub before_delete: Option<BeforeDelete>,
}

impl Config {
    /// Checks what clap cannot; the error names the setting to fix.
    pub fn validate(&self) -> anyhow::Result<()> {
        self.shards()?;
        // Parses every address of AMQP_URL, and checks the TLS files against them.
        self.amqp_tls.load(&self.amqp_url)?;
        if self.amqp_exchange.is_empty() || self.amqp_exchange.len() > 255 {
            anyhow::bail!("AMQP_EXCHANGE must be 1 to 255 bytes long");
        }
        if self.leader_lease < MIN_LEADER_LEASE || self.leader_lease > MAX_LEADER_LEASE {
            anyhow::bail!(
                "LEADER_LEASE must be between {MIN_LEADER_LEASE:?} and {MAX_LEADER_LEASE:?} \
                 (the leader proves it is alive every second)"
            );
        }
        self.server.admin.validate()?;
        let t = self.relay_settings();
        for (name, value, min) in [
            ("BACKOFF_MIN", t.backoff_min, Duration::from_millis(1)),
            ("BACKOFF_MAX", t.backoff_max, Duration::from_millis(1)),
            ("POLL_INTERVAL", t.poll_interval, Duration::from_millis(50)),
            ("STANDBY_RETRY", t.standby_retry, Duration::from_millis(50)),
            (
                "CONFIRM_TIMEOUT",
                t.confirm_timeout,
                Duration::from_millis(100),
            ),
        ] {
            if value < min {
                anyhow::bail!("{name} must be at least {min:?} (it is {value:?})");
            }
        }
        if t.backoff_min > t.backoff_max {
            anyhow::bail!(
                "BACKOFF_MIN ({:?}) must not exceed BACKOFF_MAX ({:?})",
                t.backoff_min,
                t.backoff_max
            );
        }
        Ok(())
    }

    /// The parsed `DATABASE_URL` (the error names it and never shows the password).
    pub fn pg_options(&self) -> anyhow::Result<PgConnectOptions> {
        outbox_kit::db::options(&self.database_url)
    }

    /// The options of the relay's pool on a shard's database `pg`: DB_STATEMENT_TIMEOUT for its
    /// statements and for a session idle inside a transaction (the relay's transactions run
    /// their statements back to back), so that PostgreSQL frees what a silent client holds.
    pub fn pool_options(&self, pg: &PgConnectOptions) -> PgConnectOptions {
        outbox_kit::db::with_session_timeouts(
            pg,
            self.server.liveness.db_statement_timeout,
            self.server.liveness.db_statement_timeout,
        )
    }

    /// Each shard's database, shard 0 first, with the setting it came from (for errors):
    /// `RELAY_SHARDS`, or `DATABASE_URL` alone when it is unset.
    pub fn shards(&self) -> anyhow::Result<Vec<(String, SecretUrl, PgConnectOptions)>> {
        match &self.relay_shards {
            None => Ok(vec![(
                "DATABASE_URL".to_owned(),
                self.database_url.clone(),
                self.pg_options()?,
            )]),
            Some(list) => {
                list.validate("RELAY_SHARDS", "PostgreSQL URL", |url| {
                    <PgConnectOptions as std::str::FromStr>::from_str(url)
                })?;
                let n = list.urls().len();
                list.urls()
                    .iter()
                    .enumerate()
                    .map(|(i, url)| {
                        let setting = format!("RELAY_SHARDS (shard {i} of {n})");
                        let options = outbox_kit::db::options_for(&setting, url)?;
                        Ok((setting, url.clone(), options))
                    })
                    .collect()
            }
        }
    }

    /// The relay library's settings: the table `outbox` of the orders database.
    pub fn settings(&self) -> anyhow::Result<outbox_relay::Settings> {
        let mut s = self.relay_settings();
        s.amqp_tls = self.amqp_tls.load(&self.amqp_url)?;
        Ok(s)
    }

    /// The library's settings without the TLS material: its own defaults
    /// (`outbox_relay::Settings::new`) for the durations left unset.
    fn relay_settings(&self) -> outbox_relay::Settings {
        let mut s = outbox_relay::Settings::new(self.amqp_url.clone(), self.amqp_exchange.clone());
        s.amqp_heartbeat = self.server.liveness.amqp_heartbeat;
        s.db_step_timeout = outbox_kit::db::step_timeout(self.server.liveness.db_statement_timeout);
        s.batch_size = self.batch_size;
        for (set, value) in [
            (&mut s.backoff_min, self.backoff_min),
            (&mut s.backoff_max, self.backoff_max),
            (&mut s.poll_interval, self.poll_interval),
            (&mut s.standby_retry, self.standby_retry),
            (&mut s.confirm_timeout, self.confirm_timeout),
        ] {
            if let Some(value) = value {
                *set = value;
            }
        }
        s.leader_lease = self.leader_lease;
        s.published_retention = Some(self.published_retention).filter(|d| !d.is_zero());
        s.before_delete = self.before_delete.clone();
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn liveness_settings_take_durations_in_range_and_name_themselves() {
        outbox_testkit::settings::assert_liveness_settings::<Config>("relay-svc", |c| {
            (
                c.server.liveness.amqp_heartbeat,
                c.server.liveness.db_statement_timeout,
            )
        });
    }

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

    const NEW: [(&str, &str); 5] = [
        ("BACKOFF_MIN", "--backoff-min"),
        ("BACKOFF_MAX", "--backoff-max"),
        ("POLL_INTERVAL", "--poll-interval"),
        ("STANDBY_RETRY", "--standby-retry"),
        ("CONFIRM_TIMEOUT", "--confirm-timeout"),
    ];

    fn durations(cfg: &Config) -> [Duration; 5] {
        let s = cfg.settings().expect("settings");
        [
            s.backoff_min,
            s.backoff_max,
            s.poll_interval,
            s.standby_retry,
            s.confirm_timeout,
        ]
    }

    #[test]
    fn defaults_are_unchanged() {
        let cfg = Config::parse_from(["relay-svc"]);
        cfg.validate().expect("defaults are valid");
        let ms = Duration::from_millis;
        assert_eq!(
            durations(&cfg),
            [ms(200), ms(30_000), ms(1_000), ms(1_000), ms(15_000)]
        );
    }

    #[test]
    fn each_duration_setting_takes_humantime_and_names_itself_on_garbage() {
        for (i, (name, flag)) in NEW.into_iter().enumerate() {
            let cfg = Config::try_parse_from(["relay-svc", flag, "250ms"]).expect(name);
            cfg.validate().expect(name);
            assert_eq!(durations(&cfg)[i], Duration::from_millis(250), "{name}");
            let cfg = Config::try_parse_from(["relay-svc", flag, "1m 30s"]).expect(name);
            assert_eq!(durations(&cfg)[i], Duration::from_secs(90), "{name}");
            let err = Config::try_parse_from(["relay-svc", flag, "fast"])
                .expect_err(name)
                .to_string();
            assert!(err.contains(flag) && err.contains("fast"), "{name}: {err}");
        }
        let err = Config::parse_from(["relay-svc", "--poll-interval", "10ms"])
            .validate()
            .expect_err("too short")
            .to_string();
        assert!(err.contains("POLL_INTERVAL must be at least"), "{err}");
        let err = Config::parse_from(["relay-svc", "--backoff-min", "2s", "--backoff-max", "1s"])
            .validate()
            .expect_err("min > max")
            .to_string();
        assert!(
            err.contains("BACKOFF_MIN (2s) must not exceed BACKOFF_MAX (1s)"),
            "{err}"
        );
    }

    #[test]
    fn every_removed_ms_setting_is_refused_naming_its_replacement() {
        assert_eq!(REMOVED.len(), NEW.len());
        for (r, (name, _)) in REMOVED.iter().zip(NEW) {
            assert_eq!(
                (r.name, r.replacement),
                (format!("{name}_MS").as_str(), name)
            );
        }
        for (name, flag) in NEW {
            let old_flag = format!("{flag}-ms");
            // clap alone no longer knows the flag; the check before it names the replacement.
            assert!(Config::try_parse_from(["relay-svc", &old_flag, "3000"]).is_err());
            let err = outbox_kit::config::check_removed(REMOVED, [&old_flag, "3000"], |_| None)
                .expect_err(name)
                .to_string();
            assert!(
                err.contains(&format!("{old_flag} was removed: use {flag}")),
                "{name}: {err}"
            );
            let old = format!("{name}_MS");
            let err = outbox_kit::config::check_removed(REMOVED, [""; 0], |n| {
                (n == old).then(|| "3000".into())
            })
            .expect_err(name)
            .to_string();
            assert_eq!(
                err,
                format!("{old} was removed: use {name}, a duration ({old}=3000 is {name}=3s)")
            );
        }
    }
}
