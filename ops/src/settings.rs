//! [`ToolSettings`]: the settings outboxctl and the console share, declared once: the databases
//! they read, the audit's grace period and the queue a replay sends to. Each tool flattens them
//! into its own command line with its [`Tool`], which names their environment variables
//! (`OUTBOXCTL_ORDERS_DB`, `CONSOLE_ORDERS_DB`, …); the defaults are
//! [`outbox_kit::defaults`]'s.

use std::{marker::PhantomData, time::Duration};

use clap::Args;
use outbox_kit::{
    config::{default_duration, parse_duration},
    defaults,
};

use crate::{audit::Sources, fleet::Target};

/// The tool whose command line flattens [`ToolSettings`].
pub trait Tool: 'static {
    /// The prefix of its environment variables: `OUTBOXCTL_`, `CONSOLE_`.
    const ENV_PREFIX: &'static str;
}

/// The environment variable `name` of tool `T`, e.g. `OUTBOXCTL_ORDERS_DB`; clap keeps a
/// `&'static str`, so each name is leaked once per command built (once in a tool's life).
fn env<T: Tool>(name: &str) -> &'static str {
    Box::leak(format!("{}{name}", T::ENV_PREFIX).into_boxed_str())
}

/// The databases the tools read, the audit's grace period and the replay's queue. Global: in
/// outboxctl they follow any subcommand (`outboxctl audit --grace 5m`).
#[derive(Debug, Clone, Args)]
pub struct ToolSettings<T: Tool> {
    /// The orders databases, shard 0 first, comma-separated (as orders-svc's SHARDS; read-only
    /// access is enough).
    #[arg(long, env = env::<T>("ORDERS_DB"), default_value = defaults::ORDERS_DATABASE_URL,
          value_delimiter = ',', hide_env_values = true, global = true)]
    pub orders_db: Vec<String>,

    /// mail-svc's database (its inbox and mails; read-only access is enough).
    #[arg(long, env = env::<T>("MAIL_DB"), default_value = defaults::MAIL_DATABASE_URL,
          hide_env_values = true, global = true)]
    pub mail_db: String,

    /// The audit's grace period: an order lags once the event its consumer waits for is older
    /// than this (normal latency and held chains that resolve within it are not reported).
    #[arg(long, visible_alias = "grace", env = env::<T>("AUDIT_GRACE"),
          default_value = default_duration(defaults::AUDIT_GRACE), value_parser = parse_duration,
          global = true)]
    pub audit_grace: Duration,

    /// The one queue a replay sends to; it must exist. The default is mail-svc's queue (its
    /// MAIL_QUEUE default).
    #[arg(long, visible_alias = "queue", env = env::<T>("REPLAY_QUEUE"),
          default_value = defaults::MAIL_QUEUE, global = true)]
    pub replay_queue: String,

    #[arg(skip)]
    tool: PhantomData<T>,
}

impl<T: Tool> ToolSettings<T> {
    /// Checks what clap cannot; the error names the setting.
    pub fn validate(&self) -> Result<(), String> {
        if self.orders_db.iter().all(|u| u.trim().is_empty()) {
            return Err(format!("{} names no database", env::<T>("ORDERS_DB")));
        }
        if self.replay_queue.trim().is_empty() {
            return Err(format!("{} names no queue", env::<T>("REPLAY_QUEUE")));
        }
        Ok(())
    }

    /// Read-only pools of every database named (see [`Sources::connect`]); the error names the
    /// settings.
    pub async fn connect(&self) -> Result<Sources, String> {
        Sources::connect(&self.orders_db, &self.mail_db)
            .await
            .map_err(|e| self.unreachable(e))
    }

    /// Read-only pools of `targets` (orders databases chosen by [`crate::fleet::targets`]) and
    /// of mail-svc's database (see [`Sources::connect_targets`]); the error names the settings.
    pub async fn connect_targets(&self, targets: &[Target]) -> Result<Sources, String> {
        Sources::connect_targets(targets, &self.mail_db)
            .await
            .map_err(|e| self.unreachable(e))
    }

    fn unreachable(&self, e: String) -> String {
        format!(
            "{e} (see --orders-db / {}, --mail-db / {})",
            env::<T>("ORDERS_DB"),
            env::<T>("MAIL_DB")
        )
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;

    #[derive(Debug, Clone)]
    struct Ctl;
    impl Tool for Ctl {
        const ENV_PREFIX: &'static str = "OUTBOXCTL_";
    }

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        settings: ToolSettings<Ctl>,
        #[command(subcommand)]
        command: Option<Sub>,
    }

    #[derive(Debug, clap::Subcommand)]
    enum Sub {
        Audit,
    }

    #[test]
    fn defaults_are_the_local_machines_and_the_names_are_the_tools() {
        let cli = Cli::parse_from(["outboxctl"]);
        assert_eq!(cli.settings.orders_db, [defaults::ORDERS_DATABASE_URL]);
        assert_eq!(cli.settings.mail_db, defaults::MAIL_DATABASE_URL);
        assert_eq!(cli.settings.audit_grace, defaults::AUDIT_GRACE);
        assert_eq!(cli.settings.replay_queue, defaults::MAIL_QUEUE);
        let help = Cli::command().render_long_help().to_string();
        for name in [
            "OUTBOXCTL_ORDERS_DB",
            "OUTBOXCTL_MAIL_DB",
            "OUTBOXCTL_AUDIT_GRACE",
            "OUTBOXCTL_REPLAY_QUEUE",
        ] {
            assert!(help.contains(name), "{name}: {help}");
        }
    }

    #[test]
    fn the_short_names_follow_a_subcommand() {
        let cli = Cli::parse_from(["outboxctl", "audit", "--grace", "5m", "--queue", "billing"]);
        assert!(matches!(cli.command, Some(Sub::Audit)));
        assert_eq!(cli.settings.audit_grace, Duration::from_secs(300));
        assert_eq!(cli.settings.replay_queue, "billing");
        let cli = Cli::parse_from(["outboxctl", "--orders-db", " ,"]);
        let err = cli.settings.validate().expect_err("no database");
        assert_eq!(err, "OUTBOXCTL_ORDERS_DB names no database");
    }
}
