//! `outboxctl`: the operator's one tool for the outbox stack. It wraps the services' status RPCs
//! (`relay.v1.RelayService/GetStatus`, `mail.v1.MailService/GetStatus`, gRPC health) and their
//! admin services (`relay.admin.v1.RelayAdmin`, `mail.admin.v1.MailAdmin`), prints tables for
//! people and `--json` for scripts, and turns every gRPC failure into a sentence that says what
//! to do (and an exit code, see [`Failure`]).
//!
//! Layout: [`cli`] (the commands and their `--help` examples), [`table`] (plain text tables),
//! [`commands`] (one function per command), [`fleet`] (the relay fleet's registry and
//! `--db NAME`), and here: connecting ([`Services`]) and the error
//! mapping. The audit, the trace and the admin calls themselves are `outbox-ops`'s, shared with
//! outbox-console; this crate words and prints them.

pub mod cli;
pub mod commands;
pub mod fleet;
pub mod table;

use std::{fmt, process::ExitCode};

use outbox_ops::admin::{Admin, Error as AdminError};
use serde_json::{Value, json};
use tonic::{Code, Request, Status, transport::Channel};

pub use cli::Cli;
/// The completeness audit, shared with outbox-console (see [`outbox_ops::audit`]).
pub use outbox_ops::audit;

/// A failed command: what to print, and the exit code.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl Failure {
    pub const FAILED: u8 = 1;
    pub const AUTH: u8 = 3;
    pub const NOT_FOUND: u8 = 4;
    pub const UNREACHABLE: u8 = 5;
    /// Not a failure of the command: `outboxctl audit` found orders lagging past the grace
    /// period (it printed them), so that a cron job or a script can alert on the exit code alone.
    pub const LAGGING: u8 = 6;

    pub(crate) fn new(code: u8, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// A gRPC error from `service` at `addr`, in words an operator can act on.
    pub(crate) fn from_status(service: &str, addr: &str, s: &Status) -> Self {
        let msg = s.message();
        match s.code() {
            Code::Unauthenticated => Self::new(
                Self::AUTH,
                format!(
                    "{service} at {addr} refused the admin token: {msg} (pass the services' \
                     ADMIN_TOKEN with --token or OUTBOXCTL_ADMIN_TOKEN)"
                ),
            ),
            Code::PermissionDenied => Self::new(Self::AUTH, format!("{service} at {addr}: {msg}")),
            Code::NotFound => Self::new(Self::NOT_FOUND, format!("{service}: {msg}")),
            Code::InvalidArgument | Code::FailedPrecondition => {
                Self::new(Self::FAILED, format!("{service}: {msg}"))
            }
            Code::Unimplemented => Self::new(
                Self::FAILED,
                format!(
                    "{service} at {addr} does not serve this call ({msg}): an older release \
                     without the admin service, or another service on that port?"
                ),
            ),
            code => Self::new(
                Self::FAILED,
                format!("{service} at {addr}: {code:?}: {msg}"),
            ),
        }
    }
}

pub(crate) fn unreachable(service: &str, addr: &str, detail: &str) -> Failure {
    let flag = match service {
        "orders-svc" => "--orders-addr / OUTBOXCTL_ORDERS_ADDR",
        "relay-svc" => "--relay-addr / OUTBOXCTL_RELAY_ADDR",
        _ => "--mail-addr / OUTBOXCTL_MAIL_ADDR",
    };
    Failure::new(
        Failure::UNREACHABLE,
        format!("cannot reach {service} at {addr} ({detail}): is it running? (address: {flag})"),
    )
}

pub(crate) type Result<T> = std::result::Result<T, Failure>;

/// Runs the command, prints its output (or the failure on stderr) and returns the exit code.
pub async fn run(cli: Cli) -> ExitCode {
    let services = Services::new(&cli);
    match commands::dispatch(&cli.command, &services, &cli.ops).await {
        Ok(out) => {
            if cli.json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&out.json).unwrap_or_default()
                );
            } else {
                print!("{}", out.human);
            }
            ExitCode::from(out.exit)
        }
        Err(f) => {
            if cli.json {
                println!("{}", json!({ "error": f.message, "exit_code": f.code }));
            }
            eprintln!("outboxctl: {f}");
            ExitCode::from(f.code)
        }
    }
}

/// What a command prints: the same facts for people and for scripts, and the exit code
/// (0, or [`Failure::LAGGING`] for an audit that found lagging orders).
#[derive(Debug, Default)]
pub struct Output {
    pub human: String,
    pub json: Value,
    pub exit: u8,
}

/// The addresses and credentials every command uses: the shared admin client
/// ([`outbox_ops::admin::Admin`]), its failures in outboxctl's words.
#[derive(Debug)]
pub struct Services {
    admin: Admin,
    pub(crate) orders: String,
    pub(crate) relays: Vec<String>,
    pub(crate) mails: Vec<String>,
    pub(crate) json: bool,
    /// The relay fleet's database (`--fleet-database-url`), if given.
    pub(crate) fleet: Option<fleet::Fleet>,
}

impl Services {
    fn new(cli: &Cli) -> Self {
        let clean = |v: &[String]| -> Vec<String> {
            v.iter()
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect()
        };
        let admin = Admin {
            orders: cli.orders_addr.trim().to_owned(),
            relays: clean(&cli.relay_addr),
            mails: clean(&cli.mail_addr),
            token: cli.token.clone().filter(|t| !t.is_empty()),
            read_token: cli
                .auth_token
                .clone()
                .or_else(|| cli.token.clone())
                .filter(|t| !t.is_empty()),
            tls: cli.tls.clone(),
            operator: cli.operator.clone().filter(|o| !o.is_empty()),
            timeout: cli.timeout,
        };
        Self {
            orders: admin.orders.clone(),
            relays: admin.relays.clone(),
            mails: admin.mails.clone(),
            admin,
            json: cli.json,
            fleet: fleet::Fleet::new(cli.fleet_database_url.as_deref()),
        }
    }

    /// The shared admin client.
    pub(crate) fn admin(&self) -> &Admin {
        &self.admin
    }

    pub(crate) async fn channel(&self, service: &str, addr: &str) -> Result<Channel> {
        self.admin
            .channel(service, addr)
            .await
            .map_err(Failure::from)
    }

    /// The first address of `addrs` that accepts a connection.
    pub(crate) async fn first(&self, service: &str, addrs: &[String]) -> Result<(String, Channel)> {
        self.admin
            .first(service, addrs)
            .await
            .map_err(Failure::from)
    }

    /// A request that carries the operator's name, and the token when `mutating` (an error
    /// before anything is sent when there is none).
    pub(crate) fn request<T>(&self, msg: T, mutating: bool) -> Result<Request<T>> {
        self.admin.request(msg, mutating).map_err(Failure::from)
    }

    /// A request that changes nothing, with the read token (`--auth-token`, else `--token`)
    /// when there is one.
    pub(crate) fn authed<T>(&self, msg: T) -> Request<T> {
        self.admin.authed(msg)
    }
}

impl From<AdminError> for Failure {
    fn from(e: AdminError) -> Self {
        match e {
            AdminError::BadAddress { .. } | AdminError::Tls(_) | AdminError::NoAddress { .. } => {
                Failure::new(Failure::FAILED, e.to_string())
            }
            AdminError::Unreachable {
                service,
                addr,
                detail,
            } => unreachable(&service, &addr, &detail),
            AdminError::NoToken => Failure::new(
                Failure::AUTH,
                "this command changes something and needs the admin token: pass --token or \
                 set OUTBOXCTL_ADMIN_TOKEN (the services' ADMIN_TOKEN)",
            ),
            AdminError::BadToken => Failure::new(Failure::AUTH, e.to_string()),
            AdminError::Status {
                service,
                addr,
                status,
            } => Failure::from_status(&service, &addr, &status),
        }
    }
}
