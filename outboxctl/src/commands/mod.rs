//! One function per command: the calls it makes and what it prints. Each command (or group of
//! subcommands) has a module of its own; `listing` holds how every listing shows shards.

pub mod audit;
mod backlog;
mod dead_letters;
mod fleet;
mod held;
mod listing;
mod mails;
mod quarantine;
mod replay;
mod status;
mod trace;

use outbox_proto::{
    mail::admin::v1::mail_admin_client::MailAdminClient,
    relay::admin::v1::relay_admin_client::RelayAdminClient,
};
use tonic::transport::Channel;

use outbox_ops::settings::ToolSettings;

use crate::{
    Output, Result, Services,
    cli::{Cli, Command},
};

/// Runs one command; `ops` are the databases `audit` and `trace` read, the audit's grace and the
/// replay's queue.
pub async fn dispatch(command: &Command, s: &Services, ops: &ToolSettings<Cli>) -> Result<Output> {
    match command {
        Command::Status => status::status(s).await,
        Command::Backlog { limit } => backlog::backlog(s, *limit).await,
        Command::Quarantine(q) => quarantine::quarantine(s, q).await,
        Command::Held(h) => held::held(s, h).await,
        Command::DeadLetters(d) => dead_letters::dead_letters(s, d).await,
        Command::Mails(m) => mails::mails(s, m).await,
        Command::Audit(a) => audit::audit(s, a, ops).await,
        Command::Trace(t) => trace::trace(s, t, ops).await,
        Command::Replay(r) => replay::replay(s, r, &ops.replay_queue).await,
        Command::Fleet(f) => fleet::fleet(s, f).await,
    }
}

fn u(v: u64) -> String {
    v.to_string()
}

fn seq_list(v: &[u64]) -> String {
    if v.is_empty() {
        return "-".into();
    }
    v.iter().map(u64::to_string).collect::<Vec<_>>().join(",")
}

async fn relay_admin(s: &Services) -> Result<(String, RelayAdminClient<Channel>)> {
    let (addr, ch) = s.first("relay-svc", &s.relays).await?;
    Ok((addr, RelayAdminClient::new(ch)))
}

async fn mail_admin(s: &Services) -> Result<(String, MailAdminClient<Channel>)> {
    let (addr, ch) = s.first("mail-svc", &s.mails).await?;
    Ok((addr, MailAdminClient::new(ch)))
}

fn step(cond: bool, cmd: &str) -> String {
    if cond { cmd.to_owned() } else { String::new() }
}
