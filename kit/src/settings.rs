//! [`ServerSettings`]: the settings every service has, declared once, and [`Profile`]: what a
//! service's settings are. Each service's `Config` is its own profile (`impl Profile for
//! Config`) and flattens the common settings (`#[command(flatten)] server:
//! ServerSettings<Self>`); the profile says what differs: its default ports ([`Ports`], the one
//! place they are written), the gRPC services its `GRPC_ADDR` help names, whether it has a broker
//! (the liveness settings) and an admin service (`ADMIN_TOKEN`), where the groups stand in its
//! `--help`, and the settings it removed. [`crate::service::run`] reads the rest: the command
//! line, then the service's start-up and shutdown.
//!
//! The groups, in the order `--help` lists them:
//! - the gRPC port: `GRPC_ADDR`, its TLS and `AUTH_TOKENS_FILE` ([`SecuritySettings`]),
//!   `METRICS_ADDR`; first, or after the setting [`Profile::LISTEN_AFTER`] names;
//! - liveness ([`LivenessSettings`](crate::liveness::LivenessSettings): `AMQP_HEARTBEAT`,
//!   `DB_STATEMENT_TIMEOUT`) for a service with a broker; after the setting
//!   [`Profile::LIVENESS_AFTER`] names;
//! - the admin tokens ([`AdminSettings`]: `ADMIN_TOKEN`, `ADMIN_TOKENS_FILE`) for a service with an
//!   admin service, then `LOG_FORMAT`: last.
//!
//! A service without a broker or an admin service takes [`Absent`] for that group: no flag, no
//! variable, no field to misread.

use std::{fmt, marker::PhantomData, net::SocketAddr, path::PathBuf};

use clap::{ArgMatches, Args, Command, FromArgMatches, Id};

use crate::{admin::AdminToken, config::Removed, grpc::SecuritySettings, telemetry::LogFormat};

/// A service's default ports. The services listen on them on every interface (`0.0.0.0`);
/// outboxctl calls them on this host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ports {
    /// `GRPC_ADDR`'s port.
    pub grpc: u16,
    /// `METRICS_ADDR`'s port.
    pub metrics: u16,
}

/// orders-svc's default ports.
pub const ORDERS_PORTS: Ports = Ports {
    grpc: 50051,
    metrics: 9101,
};
/// relay-svc's default ports.
pub const RELAY_PORTS: Ports = Ports {
    grpc: 50052,
    metrics: 9102,
};
/// mail-svc's default ports.
pub const MAIL_PORTS: Ports = Ports {
    grpc: 50053,
    metrics: 9103,
};

impl Ports {
    /// `GRPC_ADDR`'s default: the gRPC port on every interface.
    pub fn grpc_listen(self) -> SocketAddr {
        SocketAddr::from(([0, 0, 0, 0], self.grpc))
    }

    /// `METRICS_ADDR`'s default: the metrics port on every interface.
    pub fn metrics_listen(self) -> SocketAddr {
        SocketAddr::from(([0, 0, 0, 0], self.metrics))
    }

    /// The gRPC port on this host, where a tool (outboxctl) finds a service started with its
    /// defaults.
    pub fn grpc_local(self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.grpc))
    }
}

/// `addr` for clap's `default_value`, which keeps a `&'static str`: one short string per command
/// built (once in a service's life) is leaked for it, as [`crate::config::default_duration`] does.
pub fn default_addr(addr: SocketAddr) -> &'static str {
    Box::leak(addr.to_string().into_boxed_str())
}

/// What a service's settings are: a service's `Config` implements it (see the module docs).
pub trait Profile: fmt::Debug + Clone + Send + Sync + 'static {
    /// The default ports: one of [`ORDERS_PORTS`], [`RELAY_PORTS`], [`MAIL_PORTS`].
    const PORTS: Ports;
    /// The gRPC services `GRPC_ADDR`'s help names before health and reflection, e.g.
    /// `orders.v1.OrderService`.
    const GRPC_SERVICES: &'static str;
    /// The setting (its clap id, e.g. `amqp_exchange`) after which the gRPC port's group
    /// (`GRPC_ADDR` … `METRICS_ADDR`) stands in `--help`; `None`: first.
    const LISTEN_AFTER: Option<&'static str> = None;
    /// The setting after which the liveness group stands in `--help` (`None`: right after the
    /// gRPC port's group). Only read when [`Profile::Liveness`] has settings.
    const LIVENESS_AFTER: Option<&'static str> = None;
    /// The admin service's mutating calls, for `ADMIN_TOKEN`'s help, e.g.
    /// ``"`RequeueQuarantined`, `DropQuarantined`, `Replay`"``. Only read when
    /// [`Profile::Admin`] has settings.
    const ADMIN_CALLS: &'static str = "";
    /// The settings the service removed, refused at start-up naming their replacements (see
    /// [`crate::config::refuse_removed`]).
    const REMOVED: &'static [Removed] = &[];
    /// [`LivenessSettings`](crate::liveness::LivenessSettings) for a service with a broker, else [`Absent`].
    type Liveness: Group;
    /// [`AdminSettings<Self>`] for a service with an admin service, else [`Absent`].
    type Admin: Group;
    /// The settings every service has, as the service flattened them.
    fn server(&self) -> &ServerSettings<Self>;
}

/// A group of settings a [`Profile`] may have or not ([`Absent`]).
pub trait Group: Args + fmt::Debug + Clone + Default + Send + Sync + 'static {}
impl<T: Args + fmt::Debug + Clone + Default + Send + Sync + 'static> Group for T {}

/// The group a service does not have: no setting.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::Args)]
#[group(skip)]
pub struct Absent;

/// The settings every service has (see the module docs).
#[derive(Debug, Clone)]
pub struct ServerSettings<P: Profile> {
    /// `GRPC_ADDR`: where the gRPC server listens (port 0: a free port; `App` reports the bound
    /// address).
    pub grpc_addr: SocketAddr,
    /// TLS of the gRPC port and `AUTH_TOKENS_FILE`.
    pub grpc_security: SecuritySettings,
    /// `METRICS_ADDR`: where the Prometheus `/metrics` listener listens.
    pub metrics_addr: SocketAddr,
    /// `AMQP_HEARTBEAT` and `DB_STATEMENT_TIMEOUT`, for a service with a broker.
    pub liveness: P::Liveness,
    /// `ADMIN_TOKEN` and `ADMIN_TOKENS_FILE`, for a service with an admin service.
    pub admin: P::Admin,
    /// `LOG_FORMAT`.
    pub log_format: LogFormat,
}

impl<P: Profile> ServerSettings<P> {
    /// The settings of a service that listens on free ports of this host (port 0), with the
    /// defaults of everything else: what a test or an embedding program starts `App` with.
    pub fn on_free_ports() -> Self {
        let local = SocketAddr::from(([127, 0, 0, 1], 0));
        Self {
            grpc_addr: local,
            grpc_security: SecuritySettings::default(),
            metrics_addr: local,
            liveness: P::Liveness::default(),
            admin: P::Admin::default(),
            log_format: LogFormat::default(),
        }
    }
}

/// The gRPC port's group, as clap declares it.
#[derive(clap::Args)]
struct Listen<P: Profile> {
    #[arg(long, env = "GRPC_ADDR", default_value = default_addr(P::PORTS.grpc_listen()),
          help = format!("Address the gRPC server ({}, health, reflection) listens on",
          P::GRPC_SERVICES))]
    grpc_addr: SocketAddr,

    #[command(flatten)]
    grpc_security: SecuritySettings,

    /// Address of the Prometheus `/metrics` listener.
    #[arg(long, env = "METRICS_ADDR", default_value = default_addr(P::PORTS.metrics_listen()))]
    metrics_addr: SocketAddr,

    #[arg(skip)]
    profile: PhantomData<P>,
}

/// `LOG_FORMAT`, as clap declares it.
#[derive(clap::Args)]
struct Logs {
    /// Log output: human-readable text or JSON lines. Filter with RUST_LOG.
    #[arg(long, env = "LOG_FORMAT", value_enum, default_value_t = LogFormat::default())]
    log_format: LogFormat,
}

/// The ids of the settings `add` declares on `cmd`.
fn added(cmd: Command, add: impl FnOnce(Command) -> Command) -> (Command, Vec<Id>) {
    let before = cmd.get_arguments().count();
    let cmd = add(cmd);
    let ids = cmd
        .get_arguments()
        .skip(before)
        .map(|a| a.get_id().clone())
        .collect();
    (cmd, ids)
}

/// Where a group of settings stands in `--help`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place<'a> {
    First,
    /// Right after the setting with this clap id.
    After(&'a str),
    Last,
}

/// Gives every option of `cmd` its place in `--help` (clap lists options by display order): the
/// command's own in the order they were declared, each group of `groups` where its [`Place`]
/// says, groups with the same place in the order of `groups`.
fn place(cmd: Command, groups: &[(Place<'_>, &[Id])]) -> Command {
    let grouped: Vec<&Id> = groups.iter().flat_map(|(_, ids)| ids.iter()).collect();
    let own: Vec<Id> = cmd
        .get_arguments()
        .filter(|a| !a.is_positional() && !grouped.contains(&a.get_id()))
        .map(|a| a.get_id().clone())
        .collect();
    let at = |place: Place<'_>, order: &mut Vec<Id>| {
        for (p, ids) in groups {
            if *p == place {
                order.extend(ids.iter().cloned());
            }
        }
    };
    let mut order: Vec<Id> = Vec::new();
    at(Place::First, &mut order);
    for id in own {
        let anchor = id.as_str().to_owned();
        order.push(id);
        at(Place::After(&anchor), &mut order);
    }
    at(Place::Last, &mut order);
    let next = order.len();
    order
        .into_iter()
        .enumerate()
        .fold(cmd, |cmd, (i, id)| cmd.mut_arg(id, |a| a.display_order(i)))
        .next_display_order(next)
}

impl<P: Profile> Args for ServerSettings<P> {
    fn augment_args(cmd: Command) -> Command {
        Self::augment(cmd, false)
    }

    fn augment_args_for_update(cmd: Command) -> Command {
        Self::augment(cmd, true)
    }
}

impl<P: Profile> ServerSettings<P> {
    fn augment(cmd: Command, update: bool) -> Command {
        fn group<T: Args>(update: bool) -> impl FnOnce(Command) -> Command {
            move |cmd| {
                if update {
                    T::augment_args_for_update(cmd)
                } else {
                    T::augment_args(cmd)
                }
            }
        }
        let (cmd, listen) = added(cmd, group::<Listen<P>>(update));
        let (cmd, liveness) = added(cmd, group::<P::Liveness>(update));
        let (cmd, admin) = added(cmd, group::<P::Admin>(update));
        let (cmd, logs) = added(cmd, group::<Logs>(update));
        // An anchor that is not a setting would put its group nowhere: a service's mistake, found
        // by its first `--help` test.
        for anchor in [P::LISTEN_AFTER, P::LIVENESS_AFTER].into_iter().flatten() {
            assert!(
                cmd.get_arguments().any(|a| a.get_id() == anchor),
                "{anchor} is not a setting declared before ServerSettings"
            );
        }
        let listen_place = P::LISTEN_AFTER.map_or(Place::First, Place::After);
        let liveness_place = P::LIVENESS_AFTER.map_or(listen_place, Place::After);
        place(
            cmd,
            &[
                (listen_place, &listen),
                (liveness_place, &liveness),
                (Place::Last, &admin),
                (Place::Last, &logs),
            ],
        )
    }
}

impl<P: Profile> FromArgMatches for ServerSettings<P> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let listen = Listen::<P>::from_arg_matches(matches)?;
        Ok(Self {
            grpc_addr: listen.grpc_addr,
            grpc_security: listen.grpc_security,
            metrics_addr: listen.metrics_addr,
            liveness: P::Liveness::from_arg_matches(matches)?,
            admin: P::Admin::from_arg_matches(matches)?,
            log_format: Logs::from_arg_matches(matches)?.log_format,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        let mut listen = Listen::<P> {
            grpc_addr: self.grpc_addr,
            grpc_security: self.grpc_security.clone(),
            metrics_addr: self.metrics_addr,
            profile: PhantomData,
        };
        listen.update_from_arg_matches(matches)?;
        let mut logs = Logs {
            log_format: self.log_format,
        };
        logs.update_from_arg_matches(matches)?;
        self.liveness.update_from_arg_matches(matches)?;
        self.admin.update_from_arg_matches(matches)?;
        (self.grpc_addr, self.grpc_security, self.metrics_addr) =
            (listen.grpc_addr, listen.grpc_security, listen.metrics_addr);
        self.log_format = logs.log_format;
        Ok(())
    }
}

/// `ADMIN_TOKEN` and `ADMIN_TOKENS_FILE`: who may make the admin service's mutating calls (the
/// help names them: [`Profile::ADMIN_CALLS`]).
#[derive(Debug, Clone, clap::Args)]
pub struct AdminSettings<P: Profile> {
    #[arg(long, env = "ADMIN_TOKEN", hide_env_values = true, default_value = "",
          hide_default_value = true, value_parser = AdminToken::parse,
          help = format!("The token the admin service's mutating calls ({}) must carry as \
          `authorization: Bearer <token>`; at least 16 characters. Unset: the admin service is \
          read-only. Never printed", P::ADMIN_CALLS))]
    pub admin_token: AdminToken,

    /// File of admin tokens, in the format of AUTH_TOKENS_FILE (`<name> <token>` lines): each
    /// may make the admin service's mutating calls, beside ADMIN_TOKEN; re-read on SIGHUP. The
    /// logs show the token's name, never the token.
    #[arg(long, env = "ADMIN_TOKENS_FILE")]
    pub admin_tokens_file: Option<PathBuf>,

    #[arg(skip)]
    profile: PhantomData<P>,
}

impl<P: Profile> Default for AdminSettings<P> {
    /// Unset: a read-only admin service.
    fn default() -> Self {
        Self {
            admin_token: AdminToken::default(),
            admin_tokens_file: None,
            profile: PhantomData,
        }
    }
}

impl<P: Profile> AdminSettings<P> {
    /// Checks `ADMIN_TOKEN` (the error names it).
    pub fn validate(&self) -> anyhow::Result<()> {
        self.admin_token.validate()
    }

    /// `ADMIN_TOKEN` and the list of `ADMIN_TOKENS_FILE` (read and checked) together.
    pub fn tokens(&self) -> anyhow::Result<AdminToken> {
        self.admin_token
            .clone()
            .with_file(self.admin_tokens_file.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;
    use crate::liveness::LivenessSettings;

    #[derive(Debug, Clone, Parser)]
    struct PlainConfig {
        #[arg(long)]
        database: Option<String>,
        #[command(flatten)]
        server: ServerSettings<Self>,
    }

    impl Profile for PlainConfig {
        const PORTS: Ports = ORDERS_PORTS;
        const GRPC_SERVICES: &'static str = "x.v1.X";
        type Liveness = Absent;
        type Admin = Absent;
        fn server(&self) -> &ServerSettings<Self> {
            &self.server
        }
    }

    #[derive(Debug, Clone, Parser)]
    struct FullConfig {
        #[arg(long)]
        database: Option<String>,
        #[arg(long)]
        broker: Option<String>,
        #[arg(long)]
        exchange: Option<String>,
        #[arg(long)]
        batch: Option<String>,
        #[command(flatten)]
        server: ServerSettings<Self>,
    }

    impl Profile for FullConfig {
        const PORTS: Ports = RELAY_PORTS;
        const GRPC_SERVICES: &'static str = "y.v1.Y";
        const LISTEN_AFTER: Option<&'static str> = Some("exchange");
        const LIVENESS_AFTER: Option<&'static str> = Some("broker");
        const ADMIN_CALLS: &'static str = "`Fix`";
        type Liveness = LivenessSettings;
        type Admin = AdminSettings<Self>;
        fn server(&self) -> &ServerSettings<Self> {
            &self.server
        }
    }

    fn flags<C: clap::CommandFactory>() -> Vec<String> {
        let mut cmd = C::command();
        cmd.build();
        let mut args: Vec<_> = cmd
            .get_arguments()
            .filter_map(|a| Some((a.get_display_order(), a.get_long()?.to_owned())))
            .collect();
        args.sort();
        args.into_iter().map(|(_, long)| long).collect()
    }

    #[test]
    fn each_group_stands_where_its_profile_says() {
        assert_eq!(
            flags::<PlainConfig>(),
            [
                "grpc-addr",
                "tls-cert-file",
                "tls-key-file",
                "tls-client-ca-file",
                "auth-tokens-file",
                "metrics-addr",
                "database",
                "log-format",
                "help",
            ]
        );
        assert_eq!(
            flags::<FullConfig>(),
            [
                "database",
                "broker",
                "amqp-heartbeat",
                "db-statement-timeout",
                "exchange",
                "grpc-addr",
                "tls-cert-file",
                "tls-key-file",
                "tls-client-ca-file",
                "auth-tokens-file",
                "metrics-addr",
                "batch",
                "admin-token",
                "admin-tokens-file",
                "log-format",
                "help",
            ]
        );
    }

    #[test]
    fn defaults_come_from_the_profile_and_flags_override_them() {
        let cfg = PlainConfig::parse_from(["x"]);
        assert_eq!(cfg.server.grpc_addr, ORDERS_PORTS.grpc_listen());
        assert_eq!(cfg.server.metrics_addr, ORDERS_PORTS.metrics_listen());
        assert_eq!(cfg.server.log_format, LogFormat::Text);
        assert!(PlainConfig::try_parse_from(["x", "--admin-token", "t"]).is_err());
        assert!(PlainConfig::try_parse_from(["x", "--amqp-heartbeat", "5s"]).is_err());

        let cfg = FullConfig::parse_from([
            "x",
            "--grpc-addr",
            "127.0.0.1:1",
            "--amqp-heartbeat",
            "5s",
            "--admin-token",
            "0123456789abcdef",
            "--log-format",
            "json",
        ]);
        assert_eq!(cfg.server.grpc_addr, SocketAddr::from(([127, 0, 0, 1], 1)));
        assert_eq!(cfg.server.metrics_addr, RELAY_PORTS.metrics_listen());
        assert_eq!(
            cfg.server.liveness.amqp_heartbeat,
            std::time::Duration::from_secs(5)
        );
        assert!(cfg.server.admin.admin_token.is_set());
        assert_eq!(cfg.server.log_format, LogFormat::Json);
        let help = FullConfig::command().render_long_help().to_string();
        assert!(help.contains("(y.v1.Y, health, reflection)"), "{help}");
        assert!(help.contains("mutating calls (`Fix`) must carry"), "{help}");
    }

    #[test]
    fn update_reads_every_group() {
        let mut cfg = FullConfig::parse_from(["x"]);
        cfg.update_from([
            "x",
            "--metrics-addr",
            "127.0.0.1:2",
            "--db-statement-timeout",
            "1m",
            "--admin-tokens-file",
            "/tokens",
            "--log-format",
            "json",
        ]);
        assert_eq!(
            cfg.server.metrics_addr,
            SocketAddr::from(([127, 0, 0, 1], 2))
        );
        assert_eq!(
            cfg.server.liveness.db_statement_timeout,
            std::time::Duration::from_secs(60)
        );
        assert_eq!(
            cfg.server.admin.admin_tokens_file,
            Some(PathBuf::from("/tokens"))
        );
        assert_eq!(cfg.server.log_format, LogFormat::Json);
    }
}
