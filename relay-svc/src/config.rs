//! relay-svc settings: every one a flag and an environment variable (`--help` lists them).
//!
//! Adding a duration setting touches three places:
//! 1. its field in [`Config`], with its environment variable, its default (the relay library's
//!    `outbox_relay::DEFAULT_*` constant, through `default_duration`) and its bounds (`bounds =
//!    Bounds::at_least(…)`, which both checks the value at start-up and writes the bound into
//!    `--help`);
//! 2. its use: the line of [`Config::settings`] that hands it to the relay library;
//! 3. the library's default constant and `outbox_relay::Settings` field, when the library does
//!    not have the knob yet.
//!
//! Nothing else: `--help`, the start-up check and the error naming the setting come from the
//! field's attributes.

use std::time::Duration;

use clap::Parser;
use outbox_kit::{
    config::{Bounds, DurationArg, Removed, default_duration, parse_duration},
    defaults,
    liveness::LivenessSettings,
    settings::{AdminSettings, Ports, Profile, RELAY_PORTS, ServerSettings},
};
use outbox_support::{failover::BrokerUrls, secret::SecretUrl};
use sqlx::postgres::PgConnectOptions;

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

const fn ms(ms: u64) -> Duration {
    Duration::from_millis(ms)
}

/// Relay: publishes the orders outbox to RabbitMQ with publisher confirms, then deletes what the
/// broker confirmed. Run several; one holds the leader lock, the others stand by.
#[derive(Debug, Clone, Parser)]
#[command(name = "relay-svc", version, about, long_about = None)]
pub struct Config {
    /// The orders database (owned and migrated by orders-svc) whose outbox is published. Printed
    /// only with its password masked (`user:***@host`).
    #[arg(long, env = "DATABASE_URL", default_value = defaults::ORDERS_DATABASE_URL,
          hide_env_values = true)]
    pub database_url: SecretUrl,

    /// Sharded writes: every order database whose outbox this process publishes, comma-separated,
    /// shard 0 first (as orders-svc's `SHARDS`). One relay per shard, each with its own leader
    /// lock in its own database. Unset: one, `DATABASE_URL`. Printed only with passwords masked.
    #[arg(long, env = "RELAY_SHARDS", hide_env_values = true)]
    pub relay_shards: Option<BrokerUrls>,

    /// The RabbitMQ broker, or a cluster's nodes as a comma-separated list tried in order, with
    /// failover when the connection is lost. Printed only with passwords masked.
    #[arg(long, env = "AMQP_URL", default_value = defaults::AMQP_URL, hide_env_values = true)]
    pub amqp_url: BrokerUrls,

    #[command(flatten)]
    pub amqp_tls: outbox_kit::broker::TlsSettings,

    /// The durable topic exchange events are published to (declared at connect).
    #[arg(long, env = "AMQP_EXCHANGE", default_value = defaults::EXCHANGE)]
    pub amqp_exchange: String,

    /// Most outbox rows read and published per cycle (pipelined on one confirm channel).
    #[arg(long, env = "BATCH_SIZE", default_value_t = outbox_relay::DEFAULT_BATCH_SIZE,
          value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub batch_size: u32,

    /// First retry delay after a failure (broker or database), e.g. `200ms`; doubles up to
    /// BACKOFF_MAX.
    #[arg(long, env = "BACKOFF_MIN", value_parser = parse_duration, bounds = Bounds::at_least(ms(1)),
          default_value = default_duration(outbox_relay::DEFAULT_BACKOFF_MIN))]
    pub backoff_min: Duration,

    /// Longest retry delay after repeated failures, e.g. `30s`.
    #[arg(long, env = "BACKOFF_MAX", value_parser = parse_duration, bounds = Bounds::at_least(ms(1)),
          default_value = default_duration(outbox_relay::DEFAULT_BACKOFF_MAX))]
    pub backoff_max: Duration,

    /// Fallback poll of the outbox when no NOTIFY arrives, e.g. `1s` (a lost notification costs
    /// at most this much latency). Also how often the leader checks its lock connection when
    /// idle.
    #[arg(long, env = "POLL_INTERVAL", value_parser = parse_duration, bounds = Bounds::at_least(ms(50)),
          default_value = default_duration(outbox_relay::DEFAULT_POLL_INTERVAL))]
    pub poll_interval: Duration,

    /// How often a standby tries to take the leader lock, e.g. `1s`.
    #[arg(long, env = "STANDBY_RETRY", value_parser = parse_duration, bounds = Bounds::at_least(ms(50)),
          default_value = default_duration(outbox_relay::DEFAULT_STANDBY_RETRY))]
    pub standby_retry: Duration,

    /// How long one wave of a batch may take, sending included (a broker applying flow control
    /// stops reading), until the broker confirmed it; then the connection is treated as broken.
    /// E.g. `15s`.
    #[arg(long, env = "CONFIRM_TIMEOUT", value_parser = parse_duration, bounds = Bounds::at_least(ms(100)),
          default_value = default_duration(outbox_relay::DEFAULT_CONFIRM_TIMEOUT))]
    pub confirm_timeout: Duration,

    /// Leader lease: the leader proves it is alive every second; a standby that sees the
    /// leader's lock session silent for longer than this terminates it and takes over (a frozen
    /// or vanished leader). Accepts `10s`, `2m`, `500ms` or plain seconds. A shorter lease would
    /// let a standby terminate a leader that is merely busy for a moment.
    #[arg(long, env = "LEADER_LEASE", value_parser = parse_duration,
          bounds = Bounds::between(ms(2_000), ms(3_600_000)),
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
    pub server: ServerSettings<Config>,

    /// Fleet mode: FLEET_DATABASE_URL, FLEET_INSTANCE_ID, FLEET_LEASE, FLEET_POLL_INTERVAL.
    #[command(flatten)]
    pub fleet: crate::fleet::FleetConfig,

    /// Test hook: stop between the broker's confirms and the outbox delete.
    #[cfg(feature = "unstable-internals")]
    #[doc(hidden)]
    #[arg(skip)]
    pub before_delete: Option<outbox_relay::hook::BeforeDelete>,
}

/// A broker and an admin service; the gRPC port's settings after the broker's in `--help`.
impl Profile for Config {
    const PORTS: Ports = RELAY_PORTS;
    const GRPC_SERVICES: &'static str = "relay.v1.RelayService";
    const LISTEN_AFTER: Option<&'static str> = Some("amqp_exchange");
    const LIVENESS_AFTER: Option<&'static str> = Some("amqp_client_key_file");
    const ADMIN_CALLS: &'static str = "`RequeueQuarantined`, `DropQuarantined`, `Replay`";
    const REMOVED: &'static [Removed] = REMOVED;
    type Liveness = LivenessSettings;
    type Admin = AdminSettings<Self>;
    fn server(&self) -> &ServerSettings<Self> {
        &self.server
    }
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
        self.server.admin.validate()?;
        if self.backoff_min > self.backoff_max {
            anyhow::bail!(
                "BACKOFF_MIN ({:?}) must not exceed BACKOFF_MAX ({:?})",
                self.backoff_min,
                self.backoff_max
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

    /// The relay library's settings for the table `outbox` of the orders database: each setting
    /// handed over, the TLS material read.
    pub fn settings(&self) -> anyhow::Result<outbox_relay::Settings> {
        let mut s = outbox_relay::Settings::new(self.amqp_url.clone(), self.amqp_exchange.clone());
        s.amqp_tls = self.amqp_tls.load(&self.amqp_url)?;
        s.amqp_heartbeat = self.server.liveness.amqp_heartbeat;
        s.db_step_timeout = outbox_kit::db::step_timeout(self.server.liveness.db_statement_timeout);
        s.batch_size = self.batch_size;
        s.backoff_min = self.backoff_min;
        s.backoff_max = self.backoff_max;
        s.poll_interval = self.poll_interval;
        s.standby_retry = self.standby_retry;
        s.confirm_timeout = self.confirm_timeout;
        s.leader_lease = self.leader_lease;
        s.published_retention = Some(self.published_retention).filter(|d| !d.is_zero());
        #[cfg(feature = "unstable-internals")]
        {
            s.before_delete = self.before_delete.clone();
        }
        Ok(s)
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
        for short_or_long in ["1500ms", "2h"] {
            let err = Config::try_parse_from(["relay-svc", "--leader-lease", short_or_long])
                .expect_err(short_or_long)
                .to_string();
            assert!(
                err.contains("LEADER_LEASE") && err.contains("must be between 2s and 1h"),
                "{err}"
            );
        }
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
        let err = Config::parse_from(["relay-svc", "--backoff-min", "2s", "--backoff-max", "1s"])
            .validate()
            .expect_err("min > max")
            .to_string();
        assert!(
            err.contains("BACKOFF_MIN (2s) must not exceed BACKOFF_MAX (1s)"),
            "{err}"
        );
    }

    /// Each duration's minimum, as its field declares it: a value below it stops the relay at
    /// start-up (clap reads the command line and the environment alike), naming the setting,
    /// and `--help` states it.
    #[test]
    fn a_duration_below_its_minimum_fails_at_startup_naming_the_setting() {
        let help = <Config as clap::CommandFactory>::command()
            .render_long_help()
            .to_string();
        for (name, flag, below, min) in [
            ("BACKOFF_MIN", "--backoff-min", "0s", "1ms"),
            ("BACKOFF_MAX", "--backoff-max", "0s", "1ms"),
            ("POLL_INTERVAL", "--poll-interval", "10ms", "50ms"),
            ("STANDBY_RETRY", "--standby-retry", "49ms", "50ms"),
            ("CONFIRM_TIMEOUT", "--confirm-timeout", "99ms", "100ms"),
            ("LEADER_LEASE", "--leader-lease", "1s", "2s"),
        ] {
            let err = Config::try_parse_from(["relay-svc", flag, below])
                .expect_err(name)
                .to_string();
            let bound = [format!("at least {min}"), format!("between {min}")];
            assert!(
                err.contains(&format!("{flag} <{name}>")) && bound.iter().any(|b| err.contains(b)),
                "{name}: {err}"
            );
            Config::try_parse_from(["relay-svc", flag, min]).expect(name);
        }
        for bound in [
            "At least 1ms.",
            "At least 50ms.",
            "At least 100ms.",
            "Between 2s and 1h.",
        ] {
            assert!(help.contains(bound), "{bound}: {help}");
        }
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
