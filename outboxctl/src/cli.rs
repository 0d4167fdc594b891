//! The command line: every subcommand with its examples (`--help`).

use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use outbox_kit::settings;

/// The operator's tool for the outbox stack: see everything at a glance, and get out of every
/// stuck state (an outbox backlog, a quarantined row, a held chain, a dead letter, a failed mail).
///
/// Reads need nothing; commands that change something need the services' ADMIN_TOKEN
/// (`--token` / OUTBOXCTL_ADMIN_TOKEN) and a `--reason`, which is kept with your name
/// (`--operator`, default $USER) in the service's `admin_actions` table.
#[derive(Debug, Parser)]
#[command(
    name = "outboxctl",
    version,
    after_help = "Examples:
  outboxctl status                      # all three services at a glance, and what to do next
  outboxctl held list                   # chains waiting for a missing event
  outboxctl --json status | jq .mail    # for scripts

Exit codes: 0 done, 1 failed, 2 bad usage, 3 token missing or refused, 4 not found (nothing
changed), 5 a service cannot be reached, 6 audit: orders lag past the grace period."
)]
pub struct Cli {
    /// orders-svc's gRPC address.
    #[arg(
        long,
        env = "OUTBOXCTL_ORDERS_ADDR",
        default_value = settings::default_addr(settings::ORDERS_PORTS.grpc_local()),
        global = true
    )]
    pub orders_addr: String,

    /// relay-svc's gRPC address; several, comma-separated, for a leader and its standbys
    /// (`status` shows each; the other commands use the first that answers).
    #[arg(
        long,
        env = "OUTBOXCTL_RELAY_ADDR",
        default_value = settings::default_addr(settings::RELAY_PORTS.grpc_local()),
        value_delimiter = ',',
        global = true
    )]
    pub relay_addr: Vec<String>,

    /// mail-svc's gRPC address; several, comma-separated (`status` shows each).
    #[arg(
        long,
        env = "OUTBOXCTL_MAIL_ADDR",
        default_value = settings::default_addr(settings::MAIL_PORTS.grpc_local()),
        value_delimiter = ',',
        global = true
    )]
    pub mail_addr: Vec<String>,

    /// The services' ADMIN_TOKEN, needed by every command that changes something.
    #[arg(
        long,
        env = "OUTBOXCTL_ADMIN_TOKEN",
        hide_env_values = true,
        global = true
    )]
    pub token: Option<String>,

    /// A token of the services' AUTH_TOKENS_FILE, sent with every call that changes nothing
    /// (calls that change something send the admin token, which the admin services accept for
    /// reads too). Unset: reads send the admin token if given, else nothing.
    #[arg(
        long,
        env = "OUTBOXCTL_AUTH_TOKEN",
        hide_env_values = true,
        global = true
    )]
    pub auth_token: Option<String>,

    #[command(flatten)]
    pub tls: outbox_kit::tls::ClientTls,

    /// Your name, recorded with every change (sent as `x-operator`).
    #[arg(long, env = "USER", global = true)]
    pub operator: Option<String>,

    /// Print JSON (one document on stdout) instead of tables.
    #[arg(long, global = true)]
    pub json: bool,

    /// How long one call may take (e.g. `30s`, `2m`).
    #[arg(long, default_value = "30s", value_parser = parse_duration, global = true)]
    pub timeout: Duration,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// All three services at a glance: health, relay leader, backlog, quarantine, held chains,
    /// dead letters, unsent and failed mails, and the command that resolves each problem.
    #[command(after_help = "Examples:
  outboxctl status
  outboxctl --relay-addr 127.0.0.1:50152,127.0.0.1:50153 --mail-addr 127.0.0.1:50253 status
  outboxctl --json status")]
    Status,

    /// The outbox backlog: how many rows wait, the oldest one's age, the oldest rows.
    #[command(after_help = "Examples:
  outboxctl backlog
  outboxctl backlog --limit 100")]
    Backlog {
        /// How many of the oldest rows to show (at most 1000).
        #[arg(long, default_value_t = 20)]
        limit: u32,
    },

    /// Rows the relay cannot encode: list them, requeue them after a fix, or drop them.
    #[command(subcommand)]
    Quarantine(Quarantine),

    /// Chains mail-svc holds because a predecessor is missing: list them, or release them.
    #[command(subcommand)]
    Held(Held),

    /// mail-svc's dead-letter queue: list it, or redrive messages back to the main queue.
    #[command(subcommand, name = "dead-letters")]
    DeadLetters(DeadLetters),

    /// Mails the mail server refused for good (FAILED): list them, or retry them.
    #[command(subcommand)]
    Mails(Mails),

    /// The completeness audit: orders whose events did not all reach mail-svc's inbox within
    /// the grace period, the seq each waits for, since when, and where it is (unpublished,
    /// quarantined, dead_lettered, not_applied). Reads the databases directly (read-only).
    #[command(after_help = "Examples:
  outboxctl audit                                   # every order, once
  outboxctl audit --grace 5m
  outboxctl audit --watch --interval 30s --metrics-addr 0.0.0.0:9104   # continuously, metrics

Without --watch it exits 0 when no order lags past the grace period and 6 when some do (it lists
them either way), so a cron job can alert on the exit code; 5 when a database cannot be read.
With --watch it reads incrementally (orders published since the last pass, orders behind at the
last pass, and --slice heads per pass in key order) and exports outbox_audit_lagging_aggregates
and outbox_audit_oldest_lag_seconds by consumer and stage.")]
    Audit(AuditArgs),

    /// One order's events and where each went: appended, published (confirmed), applied, held
    /// or dead-lettered at mail-svc's inbox, mail queued, sent or failed; and where it stopped.
    /// Reads the databases directly (read-only).
    #[command(after_help = "Examples:
  outboxctl trace --order 42
  outboxctl trace --order 42 --seq 118
  outboxctl trace --shard 1 --order 42")]
    Trace(TraceArgs),

    /// Sends an order's published events (kept for relay-svc's PUBLISHED_RETENTION) again to ONE
    /// queue, in seq order, each as first published plus the header `x-outbox-replay: true`; no
    /// other queue sees them. A consumer that dedupes by seq skips those it handled: a replay
    /// fills the holes of a consumer that lost messages (a purged queue) or feeds one that
    /// rebuilt its state. Each run sends again.
    #[command(after_help = "Examples:
  outboxctl replay --order 43 --reason 'mail-svc queue purged by mistake, INC-2240'
  outboxctl replay --order 43 --from-seq 11 --to-seq 14 --reason 'lost in INC-2240'
  outboxctl replay --shard 1 --order 43 --queue billing.order-events --reason 'billing rebuilt'")]
    Replay(Replay),
}

/// The databases the audit and the trace read (read-only access is enough).
#[derive(Debug, Args)]
pub struct Databases {
    /// The orders databases, shard 0 first, comma-separated (as orders-svc's SHARDS).
    #[arg(
        long,
        env = "OUTBOXCTL_ORDERS_DB",
        default_value = "postgres://postgres@127.0.0.1:5432/orders",
        value_delimiter = ',',
        hide_env_values = true
    )]
    pub orders_db: Vec<String>,

    /// mail-svc's database (its inbox and mails).
    #[arg(
        long,
        env = "OUTBOXCTL_MAIL_DB",
        default_value = "postgres://postgres@127.0.0.1:5432/mail",
        hide_env_values = true
    )]
    pub mail_db: String,
}

impl Databases {
    /// Read-only pools of every database named (see [`crate::audit::Sources::connect`]).
    pub async fn connect(&self) -> crate::Result<crate::audit::Sources> {
        crate::audit::Sources::connect(&self.orders_db, &self.mail_db)
            .await
            .map_err(|e| {
                crate::Failure::new(
                    crate::Failure::UNREACHABLE,
                    format!(
                        "{e} (see --orders-db / OUTBOXCTL_ORDERS_DB, --mail-db / OUTBOXCTL_MAIL_DB)"
                    ),
                )
            })
    }
}

#[derive(Debug, Args)]
pub struct AuditArgs {
    #[command(flatten)]
    pub databases: Databases,

    /// An order lags once the event its consumer waits for is older than this: normal latency
    /// and held chains that resolve within it are not reported.
    #[arg(long, env = "OUTBOXCTL_AUDIT_GRACE", default_value = "1m", value_parser = parse_duration)]
    pub grace: Duration,

    /// Audit continuously, with metrics, until SIGTERM or Ctrl-C.
    #[arg(long)]
    pub watch: bool,

    /// With --watch: the pause between passes.
    #[arg(long, env = "OUTBOXCTL_AUDIT_INTERVAL", default_value = "30s", value_parser = parse_duration)]
    pub interval: Duration,

    /// With --watch: how many order heads per shard each pass reads beside the orders that
    /// changed (a restored consumer database is found within heads/slice passes).
    #[arg(long, env = "OUTBOXCTL_AUDIT_SLICE", default_value_t = 10_000)]
    pub slice: i64,

    /// With --watch: where `GET /metrics` answers.
    #[arg(
        long,
        env = "OUTBOXCTL_AUDIT_METRICS_ADDR",
        default_value = "0.0.0.0:9104"
    )]
    pub metrics_addr: std::net::SocketAddr,
}

#[derive(Debug, Args)]
pub struct TraceArgs {
    #[command(flatten)]
    pub databases: Databases,

    /// The order whose events to show.
    #[arg(long)]
    pub order: i64,

    /// Only this event of the order.
    #[arg(long)]
    pub seq: Option<i64>,

    #[command(flatten)]
    pub shard: Shard,
}

/// What `outboxctl replay` sends, and where.
#[derive(Debug, Args)]
pub struct Replay {
    /// The order whose events to send again.
    #[arg(long)]
    pub order: i64,
    /// The first seq to send (inclusive). [default: the first kept]
    #[arg(long)]
    pub from_seq: Option<i64>,
    /// The last seq to send (inclusive). [default: the last kept]
    #[arg(long)]
    pub to_seq: Option<i64>,
    #[command(flatten)]
    pub shard: Shard,
    /// The one queue that receives them; it must exist. The default is mail-svc's queue
    /// (its MAIL_QUEUE default).
    #[arg(long, default_value = "mail-svc.order-events")]
    pub queue: String,
    #[command(flatten)]
    pub reason: Reason,
}

#[derive(Debug, Subcommand)]
pub enum Quarantine {
    /// The quarantined rows, why, and how many later events of their order wait behind them.
    #[command(after_help = "Examples:
  outboxctl quarantine list
  outboxctl quarantine list --order 45")]
    List {
        /// Only this order's rows.
        #[arg(long)]
        order: Option<i64>,
        #[arg(long, default_value_t = 100)]
        limit: u32,
    },
    /// Moves rows back into the outbox after the cause was fixed (a relay that understands
    /// them, a repaired payload); the relay publishes them, then their order's later events.
    #[command(after_help = "Examples:
  outboxctl quarantine requeue --seq 118 --reason 'relay 1.4 knows OrderRefunded'
  outboxctl quarantine requeue --order 45 --reason 'payload repaired, INC-2231'
  outboxctl quarantine requeue --shard 1 --seq 118 --reason 'relay 1.4 knows OrderRefunded'")]
    Requeue {
        #[command(flatten)]
        select: QuarantineSelect,
        #[command(flatten)]
        shard: Shard,
        #[command(flatten)]
        reason: Reason,
    },
    /// Deletes rows for good (their content stays in the audit row). Their order's later events
    /// then flow, and mail-svc holds them: release them with `outboxctl held release`.
    #[command(after_help = "Examples:
  outboxctl quarantine drop --seq 118 --reason 'test event written by hand, INC-2231'
  outboxctl quarantine drop --shard 1 --order 45 --reason 'test order, INC-2231'")]
    Drop {
        #[command(flatten)]
        select: QuarantineSelect,
        #[command(flatten)]
        shard: Shard,
        #[command(flatten)]
        reason: Reason,
    },
}

#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
pub struct QuarantineSelect {
    /// The rows' seqs (repeat or comma-separate).
    #[arg(long, value_delimiter = ',')]
    pub seq: Vec<u64>,
    /// Every quarantined row of this order.
    #[arg(long)]
    pub order: Option<i64>,
}

/// Which shard the seqs are of (a sharded orders-svc numbers each shard's events from 1).
#[derive(Debug, Args)]
pub struct Shard {
    /// The orders shard: its index in orders-svc's SHARDS, the same as in relay-svc's
    /// RELAY_SHARDS, as the listings' SHARD column shows it (0, the only shard without them).
    #[arg(long, default_value_t = 0)]
    pub shard: u32,
}

#[derive(Debug, Args)]
pub struct Reason {
    /// Why you are doing this (kept in admin_actions with your name): one line of plain text,
    /// at most 1,000 characters.
    #[arg(long, value_parser = reason)]
    pub reason: String,
}

/// `--reason` by the rule every admin API applies ([`outbox_kit::admin::check_reason`]), so a
/// bad one is refused before any call.
fn reason(value: &str) -> Result<String, String> {
    outbox_kit::admin::check_reason(value).map_err(|e| e.problem())
}

#[derive(Debug, Subcommand)]
pub enum Held {
    /// Orders whose chain is held: what is held, which seq it waits for, whether that seq is a
    /// dead letter.
    #[command(after_help = "Examples:
  outboxctl held list")]
    List {
        #[arg(long, default_value_t = 100)]
        limit: u32,
    },
    /// Skips the missing predecessor(s) and sends the held chain now, in chain order. The
    /// skipped event's mail is never sent (a late copy is dropped as a duplicate): redrive it
    /// instead when it is in the dead-letter queue and can be fixed.
    #[command(after_help = "Examples:
  outboxctl held release --order 43 --reason 'seq 11 was a test event, INC-2231'")]
    Release {
        /// The order whose chain to release.
        #[arg(long)]
        order: i64,
        #[command(flatten)]
        reason: Reason,
    },
}

#[derive(Debug, Subcommand)]
pub enum DeadLetters {
    /// The dead letters, oldest first: seq, order, why each died, how often it was redriven.
    #[command(after_help = "Examples:
  outboxctl dead-letters list
  outboxctl dead-letters list --order 43")]
    List {
        /// Only this order's dead letters.
        #[arg(long)]
        order: Option<i64>,
        #[arg(long, default_value_t = 100)]
        limit: u32,
    },
    /// Moves dead letters back to the main queue (after fixing why they died), each with its
    /// original properties and an `x-redrive-count` header. Each copy is confirmed by the broker
    /// before the dead letter is removed. Shows progress; a filter matching nothing is an error.
    #[command(after_help = "Examples:
  outboxctl dead-letters redrive --seq 11 --reason 'TRUSTED_PUBLISHERS fixed, INC-2231'
  outboxctl dead-letters redrive --order 43 --reason 'mailbox fixed'
  outboxctl dead-letters redrive --all --reason 'after the 1.4 deploy' --batch 500
  outboxctl dead-letters redrive --shard 1 --seq 11 --reason 'TRUSTED_PUBLISHERS fixed'")]
    Redrive {
        #[command(flatten)]
        select: DeadLetterSelect,
        #[command(flatten)]
        shard: Shard,
        #[command(flatten)]
        reason: Reason,
        /// Messages per call (progress is shown after each).
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=1000))]
        batch: u32,
    },
}

#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
pub struct DeadLetterSelect {
    /// The events' seqs (repeat or comma-separate).
    #[arg(long, value_delimiter = ',')]
    pub seq: Vec<u64>,
    /// Every dead letter of this order.
    #[arg(long)]
    pub order: Option<i64>,
    /// Every dead letter.
    #[arg(long)]
    pub all: bool,
}

#[derive(Debug, Subcommand)]
pub enum Mails {
    /// FAILED mails: recipient, the server's answer, attempts.
    #[command(after_help = "Examples:
  outboxctl mails failed
  outboxctl mails failed --order 43")]
    Failed {
        #[arg(long)]
        order: Option<i64>,
        #[arg(long, default_value_t = 100)]
        limit: u32,
    },
    /// Puts FAILED mails back in the send queue (after the mailbox or server was fixed).
    #[command(after_help = "Examples:
  outboxctl mails retry --seq 12 --reason 'mailbox restored'
  outboxctl mails retry --all-failed --reason 'SMTP relay misconfiguration fixed'
  outboxctl mails retry --shard 1 --seq 12 --reason 'mailbox restored'")]
    Retry {
        #[command(flatten)]
        select: MailSelect,
        #[command(flatten)]
        shard: Shard,
        #[command(flatten)]
        reason: Reason,
    },
}

#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
pub struct MailSelect {
    /// The mails' seqs (repeat or comma-separate).
    #[arg(long, value_delimiter = ',')]
    pub seq: Vec<u64>,
    /// Every FAILED mail of this order.
    #[arg(long)]
    pub order: Option<i64>,
    /// Every FAILED mail.
    #[arg(long)]
    pub all_failed: bool,
}

/// `30s`, `2m`, `500ms` or plain seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (n, unit) = s
        .find(|c: char| !c.is_ascii_digit())
        .map_or((s, ""), |i| s.split_at(i));
    let n: u64 = n
        .parse()
        .map_err(|_| format!("{s:?} is not a duration like 30s, 2m or 500ms"))?;
    let d = match unit {
        "" | "s" => Duration::from_secs(n),
        "ms" => Duration::from_millis(n),
        "m" => Duration::from_secs(n * 60),
        _ => return Err(format!("{s:?}: unknown unit {unit:?} (ms, s or m)")),
    };
    if d.is_zero() {
        return Err("must be more than 0".into());
    }
    Ok(d)
}
