//! The console's settings: flags and environment variables, with defaults that work on a local
//! machine (`deploy/local.sh`'s services and databases), checked at start-up with a message that
//! names the bad setting.

use std::{net::SocketAddr, path::PathBuf, time::Duration};

use anyhow::bail;
use clap::Parser;
use outbox_kit::{
    config::{Bounds, DurationArg, parse_duration},
    settings,
    telemetry::LogFormat,
};
use outbox_ops::{
    fleet::SecretUrl,
    settings::{Tool, ToolSettings},
};

/// The address the console serves on unless `CONSOLE_ADDR` says otherwise.
pub const DEFAULT_ADDR: &str = "127.0.0.1:8080";

/// The operator console: a web page on CONSOLE_ADDR.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "outbox-console",
    version,
    after_help = "Sign in with a token of CONSOLE_VIEWER_TOKENS_FILE (read-only) or \
CONSOLE_OPERATOR_TOKENS_FILE (may act); both files have the `<name> <token>` lines of the \
services' AUTH_TOKENS_FILE and are re-read on SIGHUP. The name is recorded with every action \
(admin_actions.operator)."
)]
pub struct Config {
    /// The address the console serves HTTP (HTTPS with TLS_CERT_FILE) on.
    #[arg(long, env = "CONSOLE_ADDR", default_value = DEFAULT_ADDR)]
    pub addr: SocketAddr,

    /// File of viewer tokens (`<name> <token>` lines): read-only sign-in.
    #[arg(long, env = "CONSOLE_VIEWER_TOKENS_FILE")]
    pub viewer_tokens_file: Option<PathBuf>,

    /// File of operator tokens (`<name> <token>` lines): sign-in that may act.
    #[arg(long, env = "CONSOLE_OPERATOR_TOKENS_FILE")]
    pub operator_tokens_file: Option<PathBuf>,

    /// CONSOLE_ORDERS_DB, CONSOLE_MAIL_DB, CONSOLE_AUDIT_GRACE and CONSOLE_REPLAY_QUEUE, as
    /// outboxctl has them.
    #[command(flatten)]
    pub ops: ToolSettings<Config>,

    /// The relay fleet's database (relay-svc's FLEET_DATABASE_URL, as outboxctl's
    /// --fleet-database-url): the fleet page lists and changes its registry, and `db=` on the
    /// lists names its databases. Unset: the console reads CONSOLE_ORDERS_DB only, and `db=`
    /// names those shards (`shard-N`). Its password is never printed.
    #[arg(long, env = "CONSOLE_FLEET_DATABASE_URL", hide_env_values = true)]
    pub fleet_database_url: Option<SecretUrl>,

    /// orders-svc's gRPC address.
    #[arg(
        long,
        env = "CONSOLE_ORDERS_ADDR",
        default_value = settings::default_addr(settings::ORDERS_PORTS.grpc_local())
    )]
    pub orders_addr: String,

    /// relay-svc's gRPC addresses, comma-separated (the overview shows each).
    #[arg(
        long,
        env = "CONSOLE_RELAY_ADDR",
        default_value = settings::default_addr(settings::RELAY_PORTS.grpc_local()),
        value_delimiter = ','
    )]
    pub relay_addr: Vec<String>,

    /// mail-svc's gRPC addresses, comma-separated.
    #[arg(
        long,
        env = "CONSOLE_MAIL_ADDR",
        default_value = settings::default_addr(settings::MAIL_PORTS.grpc_local()),
        value_delimiter = ','
    )]
    pub mail_addr: Vec<String>,

    /// The services' Prometheus listeners (their METRICS_ADDRs), comma-separated: the
    /// overview's rates. Each counter is summed over the listeners that export it.
    #[arg(
        long,
        env = "CONSOLE_METRICS",
        default_value = default_metrics(),
        value_delimiter = ','
    )]
    pub metrics: Vec<String>,

    /// The services' ADMIN_TOKEN: the console's actions are the services' admin calls. Unset:
    /// every action fails with the services' refusal.
    #[arg(long, env = "CONSOLE_ADMIN_TOKEN", hide_env_values = true)]
    pub admin_token: Option<String>,

    /// A file in the services' ADMIN_TOKENS_FILE format (`<name> <token>` lines): its first
    /// token is used as CONSOLE_ADMIN_TOKEN (compose mounts the services' own file).
    #[arg(long, env = "CONSOLE_ADMIN_TOKEN_FILE", conflicts_with = "admin_token")]
    pub admin_token_file: Option<PathBuf>,

    /// A token of the services' AUTH_TOKENS_FILE, sent with the calls that change nothing.
    #[arg(long, env = "CONSOLE_AUTH_TOKEN", hide_env_values = true)]
    pub auth_token: Option<String>,

    /// A file in the AUTH_TOKENS_FILE format: its first token is used as CONSOLE_AUTH_TOKEN.
    #[arg(long, env = "CONSOLE_AUTH_TOKEN_FILE", conflicts_with = "auth_token")]
    pub auth_token_file: Option<PathBuf>,

    #[command(flatten)]
    pub grpc_tls: outbox_kit::tls::ClientTls,

    #[command(flatten)]
    pub tls: outbox_kit::tls::ServerTls,

    /// How often the live figures refresh.
    #[arg(long, env = "CONSOLE_REFRESH", default_value = "1s",
          value_parser = parse_duration,
          bounds = Bounds::between(Duration::from_millis(1), Duration::from_secs(2)))]
    pub refresh: Duration,

    /// Order heads the live audit reads per shard and pass, besides the orders that moved.
    #[arg(long, env = "CONSOLE_AUDIT_SLICE", default_value_t = 10_000,
          value_parser = clap::value_parser!(i64).range(1..))]
    pub audit_slice: i64,

    /// A bulk redrive moves at most this many dead letters per second.
    #[arg(long, env = "CONSOLE_REDRIVE_RATE", default_value_t = 200,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub redrive_rate: u32,

    /// A replay sends at most this many events per second.
    #[arg(long, env = "CONSOLE_REPLAY_RATE", default_value_t = 50,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub replay_rate: u32,

    /// A session ends this long after sign-in.
    #[arg(long, env = "CONSOLE_SESSION_TTL", default_value = "8h", value_parser = parse_duration)]
    pub session_ttl: Duration,

    /// How long one call to a service may take.
    #[arg(long, env = "CONSOLE_TIMEOUT", default_value = "10s", value_parser = parse_duration)]
    pub timeout: Duration,

    /// Log output: human-readable text or JSON lines. Filter with RUST_LOG.
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

impl Tool for Config {
    const ENV_PREFIX: &'static str = "CONSOLE_";
}

impl Config {
    /// Checks what clap cannot; the error names the setting.
    pub fn validate(&self) -> anyhow::Result<()> {
        if self.viewer_tokens_file.is_none() && self.operator_tokens_file.is_none() {
            bail!(
                "set CONSOLE_VIEWER_TOKENS_FILE or CONSOLE_OPERATOR_TOKENS_FILE (or both): \
                 without a token nobody can sign in"
            );
        }
        self.ops.validate().map_err(anyhow::Error::msg)?;
        if self.tls.tls_client_ca_file.is_some() {
            bail!(
                "TLS_CLIENT_CA_FILE: the console does not ask browsers for client certificates; \
                 unset it for the console"
            );
        }
        if self.tls.tls_cert_file.is_some() != self.tls.tls_key_file.is_some() {
            bail!("TLS_CERT_FILE and TLS_KEY_FILE go together: set both or neither");
        }
        Ok(())
    }

    /// The services' admin token: CONSOLE_ADMIN_TOKEN, else CONSOLE_ADMIN_TOKEN_FILE's first.
    pub fn admin_token(&self) -> anyhow::Result<Option<String>> {
        token(
            &self.admin_token,
            &self.admin_token_file,
            "CONSOLE_ADMIN_TOKEN_FILE",
        )
    }

    /// The services' read token: CONSOLE_AUTH_TOKEN, else CONSOLE_AUTH_TOKEN_FILE's first.
    pub fn auth_token(&self) -> anyhow::Result<Option<String>> {
        token(
            &self.auth_token,
            &self.auth_token_file,
            "CONSOLE_AUTH_TOKEN_FILE",
        )
    }

    /// True when the console serves HTTPS (cookies are then `Secure`).
    pub fn tls_on(&self) -> bool {
        self.tls.tls_cert_file.is_some()
    }
}

/// `CONSOLE_METRICS`' default: the three services' metrics ports on this host (leaked once, as
/// [`settings::default_addr`] does).
fn default_metrics() -> &'static str {
    let ports = [
        settings::ORDERS_PORTS,
        settings::RELAY_PORTS,
        settings::MAIL_PORTS,
    ];
    let addrs: Vec<String> = ports
        .iter()
        .map(|p| SocketAddr::from(([127, 0, 0, 1], p.metrics)).to_string())
        .collect();
    Box::leak(addrs.join(",").into_boxed_str())
}

/// `value`, else the first token of the token file `file` of `setting` (in the services'
/// format, read by kit's one parser of it); the error names the setting and never quotes a token.
fn token(
    value: &Option<String>,
    file: &Option<PathBuf>,
    setting: &str,
) -> anyhow::Result<Option<String>> {
    if let Some(v) = value.as_ref().filter(|v| !v.is_empty()) {
        return Ok(Some(v.clone()));
    }
    file.as_deref()
        .map(|path| outbox_kit::auth::first_token(setting, path))
        .transpose()
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_fleet_database_is_optional_and_its_password_is_never_printed() {
        let base = ["outbox-console", "--viewer-tokens-file=/dev/null"];
        let cfg = Config::try_parse_from(base).expect("no fleet database");
        assert!(cfg.fleet_database_url.is_none());
        let url = "--fleet-database-url=postgres://ops:s3cr3t-pw@fleet-db:5432/fleet";
        let cfg = Config::try_parse_from(base.into_iter().chain([url])).expect("a fleet database");
        let debug = format!("{cfg:?}");
        assert!(!debug.contains("s3cr3t-pw"), "{debug}");
        assert!(debug.contains("ops:***@fleet-db:5432/fleet"), "{debug}");
        let fleet = cfg.fleet_database_url.as_ref().expect("set");
        assert_eq!(
            fleet.expose(),
            url.trim_start_matches("--fleet-database-url=")
        );
        let help = Config::command().render_long_help().to_string();
        assert!(help.contains("CONSOLE_FLEET_DATABASE_URL"), "{help}");
    }
}
