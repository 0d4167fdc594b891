//! [`LivenessSettings`]: the two settings by which a service notices a silent peer
//! (`AMQP_HEARTBEAT`, `DB_STATEMENT_TIMEOUT`), declared once for every service that has both.
//! (Apart from [`crate::config`], whose duration parser `broker` and `db` use: no import circle.)

use std::time::Duration;

/// `AMQP_HEARTBEAT` and `DB_STATEMENT_TIMEOUT`: how long a silent broker or a hung statement may
/// go unnoticed. A service's `Config` takes them with `#[command(flatten)]`, where they keep
/// their place in `--help`.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct LivenessSettings {
    #[arg(long, env = "AMQP_HEARTBEAT",
          default_value = crate::config::default_duration(outbox_support::amqp::DEFAULT_HEARTBEAT),
          value_parser = crate::broker::parse_heartbeat,
          help = crate::broker::HEARTBEAT_HELP)]
    pub amqp_heartbeat: Duration,

    #[arg(long, env = "DB_STATEMENT_TIMEOUT",
          default_value = crate::config::default_duration(crate::db::DEFAULT_STATEMENT_TIMEOUT),
          value_parser = crate::db::parse_statement_timeout,
          help = crate::db::STATEMENT_TIMEOUT_HELP)]
    pub db_statement_timeout: Duration,
}

impl Default for LivenessSettings {
    /// The defaults of the flags (the same constants).
    fn default() -> Self {
        Self {
            amqp_heartbeat: outbox_support::amqp::DEFAULT_HEARTBEAT,
            db_statement_timeout: crate::db::DEFAULT_STATEMENT_TIMEOUT,
        }
    }
}
