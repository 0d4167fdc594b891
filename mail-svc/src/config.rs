//! mail-svc settings: every one a flag and an environment variable (`--help` lists them).

use std::{collections::BTreeSet, str::FromStr, time::Duration};

use anyhow::{Context, bail};
use clap::{Parser, ValueEnum};
use lettre::message::Mailbox;
use outbox_kit::{
    config::{Bounds, DurationArg, Removed, default_duration, parse_duration},
    defaults,
    liveness::LivenessSettings,
    settings::{AdminSettings, MAIL_PORTS, Ports, Profile, ServerSettings},
};
use outbox_support::{failover::BrokerUrls, secret::SecretUrl};

/// The settings removed from mail-svc, refused at start-up naming their replacements (see
/// [`outbox_kit::config::refuse_removed`]).
pub const REMOVED: &[Removed] = &[Removed {
    name: "BATCH_WINDOW_MS",
    replacement: "BATCH_WINDOW",
    example: "5ms",
}];

/// The BATCH_WINDOW when it is not set: short enough not to show as latency.
const DEFAULT_BATCH_WINDOW: Duration = Duration::from_millis(5);

/// Consumes order events from RabbitMQ and sends exactly one mail per event, in each order's order.
#[derive(Debug, Clone, Parser)]
#[command(name = "mail-svc", version, about, long_about = None)]
pub struct Config {
    /// mail-svc's own database (watermarks, held events, mails); created if missing, migrated at
    /// startup (waiting for it while it is unreachable). Printed only with its password masked.
    #[arg(long, env = "DATABASE_URL", default_value = defaults::MAIL_DATABASE_URL,
          hide_env_values = true)]
    pub database_url: SecretUrl,

    /// Size of the PostgreSQL connection pool.
    #[arg(long, env = "DB_MAX_CONNECTIONS", default_value_t = 20,
          value_parser = clap::value_parser!(u32).range(2..=1000))]
    pub db_max_connections: u32,

    /// The RabbitMQ broker, or a cluster's nodes as a comma-separated list tried in order, with
    /// failover when the connection is lost (all with the same user). Printed only with
    /// passwords masked.
    #[arg(long, env = "AMQP_URL", default_value = defaults::AMQP_URL, hide_env_values = true)]
    pub amqp_url: BrokerUrls,

    #[command(flatten)]
    pub amqp_tls: outbox_kit::broker::TlsSettings,

    /// The topic exchange relay-svc publishes order events to (declared here too, durable, so
    /// either service may start first).
    #[arg(long, env = "AMQP_EXCHANGE", default_value = defaults::EXCHANGE)]
    pub amqp_exchange: String,

    /// The durable quorum queue this service consumes; `<MAIL_QUEUE>.dlx` and
    /// `<MAIL_QUEUE>.dead-letter` hold poison messages.
    #[arg(long, env = "MAIL_QUEUE", default_value = defaults::MAIL_QUEUE)]
    pub mail_queue: String,

    /// Unacknowledged deliveries the broker may push ahead of the one being processed. It bounds
    /// the deliveries of all batches in flight together: ≥ 2 × BATCH_SIZE lets the next batch
    /// fill while one commits.
    #[arg(long, env = "PREFETCH", default_value_t = 256,
          value_parser = clap::value_parser!(u16).range(1..))]
    pub prefetch: u16,

    /// Deliveries processed at once by this instance (different orders run in parallel; one
    /// order's events are serialised by its lock in the database anyway).
    #[arg(long, env = "CONSUMER_CONCURRENCY", default_value_t = 16,
          value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub consumer_concurrency: u16,

    /// Deliveries applied together in ONE database transaction (one commit, then one ack with
    /// `multiple`), and mails the log mailer marks sent in one statement. 1: one transaction per
    /// delivery.
    #[arg(long, env = "BATCH_SIZE", default_value_t = 64,
          value_parser = clap::value_parser!(u16).range(1..=1024))]
    pub batch_size: u16,

    /// How long a batch may wait for more deliveries, e.g. `5ms`, while an earlier batch is
    /// still in flight. When nothing else is in flight the batch starts at once with what is
    /// ready (no added latency at low load). 0: never wait. A longer wait would show as latency,
    /// not throughput.
    #[arg(long, env = "BATCH_WINDOW", value_parser = parse_duration,
          bounds = Bounds::at_most(Duration::from_secs(1)),
          default_value = default_duration(DEFAULT_BATCH_WINDOW))]
    pub batch_window: Duration,

    /// Delivery loops sending mails side by side (each mail is one transaction; one order's mails
    /// still go out one after another, in order).
    #[arg(long, env = "MAILER_CONCURRENCY", default_value_t = 4,
          value_parser = clap::value_parser!(u16).range(1..=256))]
    pub mailer_concurrency: u16,

    /// How mails are delivered: `log` writes them to the log, `smtp` sends them to SMTP_URL.
    #[arg(long, env = "MAILER", value_enum, default_value_t = MailerKind::Log)]
    pub mailer: MailerKind,

    /// The SMTP server for MAILER=smtp: `smtp://host:port` (plain), `smtp://host:port?tls=required`
    /// (STARTTLS required: a server that does not offer it gets no mail, and the mails stay
    /// queued), `smtp://host:port?tls=opportunistic` (STARTTLS when offered), `smtps://host:port`
    /// (TLS from the first byte), with optional `user:password@` (printed only with the password
    /// masked). Server certificates are verified against the Mozilla roots (plus SMTP_CA_FILE)
    /// and the host name.
    #[arg(
        long,
        env = "SMTP_URL",
        default_value = "smtp://127.0.0.1:1025",
        hide_env_values = true
    )]
    pub smtp_url: SecretUrl,

    /// PEM file of the CA certificate(s) that signed the SMTP server's certificate (a company's
    /// private CA), trusted in addition to the Mozilla roots. Needs an SMTP_URL with TLS
    /// (`smtps://` or `?tls=…`). Read at start-up: a new CA takes a restart.
    #[arg(long, env = "SMTP_CA_FILE")]
    pub smtp_ca_file: Option<std::path::PathBuf>,

    /// The sender of every mail, e.g. `Shop <shop@example.com>`.
    #[arg(
        long,
        env = "MAIL_FROM",
        default_value = "Outbox Shop <shop@example.com>"
    )]
    pub mail_from: String,

    /// An event held (waiting for its predecessor) longer than this raises a warning: a lost
    /// predecessor becomes visible. Accepts `90s`, `2m`, `500ms` or plain seconds.
    #[arg(long, env = "MAIL_HOLD_ALERT", default_value = "60s",
          value_parser = parse_duration, bounds = Bounds::at_least(Duration::from_millis(1)))]
    pub mail_hold_alert: Duration,

    /// How long sent mails are kept: older ones are deleted, oldest first, in small batches
    /// (every instance prunes every tenth of this, at most every minute). `0` keeps them forever.
    /// Deduplication does not need them (a redelivered event is recognised by its order's
    /// watermark, which is kept forever); ListMails shows an order's mails within this period,
    /// and GetStatus's `processed` still counts them. FAILED mails are kept until retried.
    /// Accepts `30d`, `12h`, `90m` or plain seconds.
    #[arg(long, env = "MAIL_RETENTION", default_value = "30d",
          value_parser = parse_duration, bounds = Bounds::zero_or_at_least(Duration::from_secs(1)))]
    pub mail_retention: Duration,

    /// How long the audit rows of operator actions (`admin_actions`) are kept: older ones are
    /// deleted like sent mails. `0` keeps them forever.
    #[arg(long, env = "ADMIN_ACTIONS_RETENTION", default_value = "365d",
          value_parser = parse_duration, bounds = Bounds::zero_or_at_least(Duration::from_secs(1)))]
    pub admin_actions_retention: Duration,

    /// RabbitMQ users whose messages are processed, comma-separated (e.g. `relay-svc`). When set,
    /// a message whose AMQP `user_id` property is missing or names another user is dead-lettered
    /// unread (RabbitMQ itself refuses a `user_id` that is not the publishing connection's user).
    /// Unset: every message that reaches the queue is processed (e.g. hand-published JSON).
    /// Redriven dead letters carry mail-svc's own user (of AMQP_URL): list it too, or redrive is
    /// refused.
    #[arg(long, env = "TRUSTED_PUBLISHERS", value_delimiter = ',')]
    pub trusted_publishers: Vec<String>,

    /// GRPC_ADDR, its TLS and tokens, METRICS_ADDR, AMQP_HEARTBEAT and DB_STATEMENT_TIMEOUT
    /// (after the broker's TLS in `--help`), ADMIN_TOKEN, ADMIN_TOKENS_FILE, LOG_FORMAT.
    #[command(flatten)]
    pub server: ServerSettings<Config>,

    /// Fault injection for the crash tests; never set from the command line.
    #[arg(skip)]
    pub hooks: Hooks,
}

/// A broker and an admin service.
impl Profile for Config {
    const PORTS: Ports = MAIL_PORTS;
    const GRPC_SERVICES: &'static str = "mail.v1.MailService";
    const LIVENESS_AFTER: Option<&'static str> = Some("amqp_client_key_file");
    const ADMIN_CALLS: &'static str = "`ReleaseHeld`, `RedriveDeadLetters`, `RetryMails`";
    const REMOVED: &'static [Removed] = REMOVED;
    type Liveness = LivenessSettings;
    type Admin = AdminSettings<Self>;
    fn server(&self) -> &ServerSettings<Self> {
        &self.server
    }
}

/// The delivery backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum MailerKind {
    /// Write each mail to the log (info level) and mark it sent.
    #[default]
    Log,
    /// Send each mail over SMTP (lettre) to SMTP_URL.
    Smtp,
}

/// Test hooks: ways to make the service fail at a precise point.
#[derive(Debug, Clone, Default)]
pub struct Hooks {
    /// When the event with this seq has been committed, the consumer "crashes": it stops for good
    /// and closes its broker connection without acking, so the broker redelivers the message.
    pub crash_after_commit_seq: Option<i64>,
}

impl Config {
    /// The options of the service's pool on `pg`: DB_STATEMENT_TIMEOUT for its statements, and
    /// for a session idle inside a transaction that plus the longest an SMTP round may keep its
    /// claiming transaction open between two statements (one mail's session, retried once), so
    /// that PostgreSQL frees what a client whose socket went silent holds (the claims, the
    /// orders' locks) without cutting a slow SMTP server's round short.
    ///
    /// Every statement is planned for its own arguments ([`outbox_kit::db::custom_plans`]):
    /// the batch statements join arrays of chains against `mails` and `held_events`.
    pub fn pool_options(
        &self,
        pg: &sqlx::postgres::PgConnectOptions,
    ) -> sqlx::postgres::PgConnectOptions {
        outbox_kit::db::custom_plans(outbox_kit::db::with_session_timeouts(
            pg,
            self.server.liveness.db_statement_timeout,
            self.server.liveness.db_statement_timeout + crate::mailer::LONGEST_SEND,
        ))
    }

    /// Checks what clap cannot: the error names the setting to fix.
    pub fn validate(&self) -> anyhow::Result<()> {
        outbox_kit::db::options(&self.database_url)?;
        let brokers =
            self.amqp_url
                .validate("AMQP_URL", "AMQP URL", lapin::uri::AMQPUri::from_str)?;
        // The user names redriven copies (`user_id`) and TRUSTED_PUBLISHERS: one per service.
        let users: BTreeSet<&str> = brokers
            .iter()
            .map(|u| u.authority.userinfo.username.as_str())
            .collect();
        if users.len() > 1 {
            bail!(
                "AMQP_URL: every address must use the same user (cluster nodes share their users)"
            );
        }
        self.amqp_tls.load(&self.amqp_url)?;
        if self.amqp_exchange.trim().is_empty() {
            bail!("AMQP_EXCHANGE must not be empty (the default exchange cannot be bound)");
        }
        if self.mail_queue.trim().is_empty() {
            bail!("MAIL_QUEUE must not be empty");
        }
        // The dead-letter names add 12 bytes; AMQP names are at most 255 bytes.
        if self.mail_queue.len() > 240 || self.amqp_exchange.len() > 255 {
            bail!("MAIL_QUEUE / AMQP_EXCHANGE is too long (at most 240 / 255 bytes)");
        }
        self.from_mailbox()?;
        self.server.admin.validate()?;
        if self.mailer == MailerKind::Smtp {
            // The mailer's own parser: what passes here is what the mailer uses.
            self.smtp_server()?;
        }
        // An empty name would trust nobody while looking like a list; a padded one would never
        // match (RabbitMQ user names are compared exactly).
        if self
            .trusted_publishers
            .iter()
            .any(|u| u.is_empty() || u.trim() != u || u.len() > 255)
        {
            bail!(
                "TRUSTED_PUBLISHERS must be comma-separated RabbitMQ user names without spaces or empty entries"
            );
        }
        Ok(())
    }

    /// The transport MAILER selects (for SMTP: SMTP_URL, SMTP_CA_FILE and MAIL_FROM read and
    /// checked).
    pub fn transport(&self) -> anyhow::Result<crate::mailer::Transport> {
        use crate::mailer::Transport;
        Ok(match self.mailer {
            MailerKind::Log => Transport::Log,
            MailerKind::Smtp => Transport::Smtp {
                server: Box::new(self.smtp_server()?),
                from: Box::new(self.from_mailbox()?),
            },
        })
    }

    /// The SMTP server of SMTP_URL and SMTP_CA_FILE (the file read and checked).
    pub fn smtp_server(&self) -> anyhow::Result<crate::mailer::SmtpServer> {
        crate::mailer::SmtpServer::from_settings(&self.smtp_url, self.smtp_ca_file.as_deref())
    }

    /// MAIL_RETENTION and ADMIN_ACTIONS_RETENTION.
    pub fn retention(&self) -> crate::retention::Retention {
        crate::retention::Retention::new(self.mail_retention, self.admin_actions_retention)
    }

    /// MAIL_FROM, parsed.
    pub fn from_mailbox(&self) -> anyhow::Result<Mailbox> {
        Mailbox::from_str(&self.mail_from)
            .with_context(|| format!("MAIL_FROM is not a mail address: {:?}", self.mail_from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn liveness_settings_take_durations_in_range_and_name_themselves() {
        outbox_testkit::settings::assert_liveness_settings::<Config>("mail-svc", |c| {
            (
                c.server.liveness.amqp_heartbeat,
                c.server.liveness.db_statement_timeout,
            )
        });
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("60s"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("75"), Ok(Duration::from_secs(75)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("5 parsecs").is_err());
    }

    #[test]
    fn batch_window_takes_humantime_and_the_old_ms_setting_is_refused() {
        let cfg = Config::parse_from(["mail-svc"]);
        assert_eq!(cfg.batch_window, Duration::from_millis(5));

        let cfg = Config::parse_from(["mail-svc", "--batch-window", "20ms"]);
        cfg.validate().expect("valid");
        assert_eq!(cfg.batch_window, Duration::from_millis(20));
        let cfg = Config::parse_from(["mail-svc", "--batch-window", "0"]);
        cfg.validate().expect("valid");
        assert_eq!(cfg.batch_window, Duration::ZERO);

        let err = Config::try_parse_from(["mail-svc", "--batch-window", "soonish"])
            .expect_err("garbage")
            .to_string();
        assert!(
            err.contains("--batch-window") && err.contains("soonish"),
            "{err}"
        );
        let err = Config::try_parse_from(["mail-svc", "--batch-window", "2s"])
            .expect_err("too long")
            .to_string();
        assert!(
            err.contains("<BATCH_WINDOW>': must be at most 1s (it is 2s)"),
            "{err}"
        );

        assert!(Config::try_parse_from(["mail-svc", "--batch-window-ms", "12"]).is_err());
        let err = outbox_kit::config::check_removed(REMOVED, ["--batch-window-ms", "12"], |_| None)
            .expect_err("removed")
            .to_string();
        assert_eq!(
            err,
            "--batch-window-ms was removed: use --batch-window, a duration \
             (--batch-window-ms=12 is --batch-window=12ms)"
        );
        let err = outbox_kit::config::check_removed(REMOVED, [""; 0], |name| {
            (name == "BATCH_WINDOW_MS").then(|| "12".into())
        })
        .expect_err("removed")
        .to_string();
        assert_eq!(
            err,
            "BATCH_WINDOW_MS was removed: use BATCH_WINDOW, a duration \
             (BATCH_WINDOW_MS=12 is BATCH_WINDOW=12ms)"
        );
    }

    #[test]
    fn bad_settings_are_named() {
        let mut cfg = Config::parse_from(["mail-svc"]);
        cfg.validate().expect("defaults are valid");
        cfg.mail_from = "not an address".into();
        assert!(
            cfg.validate()
                .unwrap_err()
                .to_string()
                .contains("MAIL_FROM")
        );
        let mut cfg = Config::parse_from(["mail-svc", "--mailer", "smtp"]);
        cfg.smtp_url = "ftp://x".into();
        assert!(cfg.validate().unwrap_err().to_string().contains("SMTP_URL"));
        let mut cfg = Config::parse_from(["mail-svc"]);
        cfg.amqp_url = "http://nope".into();
        assert!(cfg.validate().unwrap_err().to_string().contains("AMQP_URL"));
        for bad in ["relay,", "relay, mail", ",relay"] {
            let cfg = Config::parse_from(["mail-svc", "--trusted-publishers", bad]);
            assert!(
                cfg.validate()
                    .unwrap_err()
                    .to_string()
                    .contains("TRUSTED_PUBLISHERS"),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn retentions_default_to_30_and_365_days_and_0_keeps_forever() {
        let day = Duration::from_secs(86_400);
        let cfg = Config::parse_from(["mail-svc"]);
        assert_eq!(
            (cfg.mail_retention, cfg.admin_actions_retention),
            (30 * day, 365 * day)
        );
        let cfg = Config::parse_from([
            "mail-svc",
            "--mail-retention",
            "0",
            "--admin-actions-retention",
            "2h",
        ]);
        cfg.validate().expect("valid");
        assert_eq!(cfg.retention().mails, None);
        assert_eq!(
            cfg.retention().admin_actions,
            Some(Duration::from_secs(7200))
        );
        for (flag, name) in [
            ("--mail-retention", "MAIL_RETENTION"),
            ("--admin-actions-retention", "ADMIN_ACTIONS_RETENTION"),
        ] {
            let err = Config::try_parse_from(["mail-svc", flag, "500ms"])
                .expect_err("too short")
                .to_string();
            assert!(
                err.contains(name) && err.contains("must be 0 or at least 1s"),
                "{err}"
            );
            let err = Config::try_parse_from(["mail-svc", flag, "a month"])
                .expect_err("garbage")
                .to_string();
            assert!(err.contains(flag), "{err}");
        }
    }

    #[test]
    fn trusted_publishers_are_a_list() {
        let cfg = Config::parse_from(["mail-svc"]);
        assert!(cfg.trusted_publishers.is_empty(), "unset: everyone");
        let cfg = Config::parse_from(["mail-svc", "--trusted-publishers", "relay-svc,relay-2"]);
        assert_eq!(cfg.trusted_publishers, ["relay-svc", "relay-2"]);
        cfg.validate().expect("valid");
    }

    /// Each bound, as its field declares it: a value out of bounds stops mail-svc at start-up
    /// naming the setting, and `--help` states the bound.
    #[test]
    fn a_duration_out_of_its_bounds_fails_at_startup_naming_the_setting() {
        let help = <Config as clap::CommandFactory>::command()
            .render_long_help()
            .to_string();
        for (name, flag, bad, bound) in [
            (
                "MAIL_HOLD_ALERT",
                "--mail-hold-alert",
                "0",
                "must be at least 1ms",
            ),
            (
                "BATCH_WINDOW",
                "--batch-window",
                "1001ms",
                "must be at most 1s",
            ),
            (
                "MAIL_RETENTION",
                "--mail-retention",
                "999ms",
                "must be 0 or at least 1s",
            ),
        ] {
            let err = Config::try_parse_from(["mail-svc", flag, bad])
                .expect_err(name)
                .to_string();
            assert!(
                err.contains(&format!("{flag} <{name}>")) && err.contains(bound),
                "{name}: {err}"
            );
        }
        for bound in ["At least 1ms.", "At most 1s.", "0 or at least 1s."] {
            assert!(help.contains(bound), "{bound}: {help}");
        }
    }
}
