//! One order's events and where each went, from the databases (read-only): appended and
//! published (the orders database: the outbox, its quarantine and the published rows kept for
//! relay-svc's PUBLISHED_RETENTION), applied, held or dead-lettered (mail-svc's inbox), and the
//! mail (queued, sent, failed). [`Stop`] says where each event stopped; outboxctl prints it as a
//! table, the console as a timeline.

use std::sync::LazyLock;

use chrono::{DateTime, Utc};
use sqlx::{AssertSqlSafe, PgPool};

use crate::tables::{inbox, outbox};

/// The trace's statements, on the tables' names ([`crate::tables`]).
struct Sql {
    appended: String,
    applied: String,
    held: String,
    order_of: String,
}

static SQL: LazyLock<Sql> = LazyLock::new(|| {
    let (events, published, quarantine) = (
        outbox().events(),
        outbox().published(),
        outbox().quarantine(),
    );
    let (progress, held) = (inbox().progress(), inbox().held());
    Sql {
        appended: format!(
            "select seq, event_type, prev_seq, traceparent, created_at, place, published_at, reason
           from (select seq, event_type, prev_seq, traceparent, created_at,
                        'published' as place, published_at, null::text as reason
                   from {published} where aggregate_type = 'order' and aggregate_id = $1
                 union all
                 select seq, event_type, prev_seq, traceparent, created_at,
                        'unpublished', null, null
                   from {events} where aggregate_type = 'order' and aggregate_id = $1
                 union all
                 select seq, event_type, prev_seq, traceparent, created_at,
                        'quarantined', null, reason
                   from {quarantine} where aggregate_type = 'order' and aggregate_id = $1) e
          order by seq"
        ),
        applied: format!(
            "select last_seq from {progress}
          where shard = $1 and aggregate_type = 'order' and order_id = $2"
        ),
        held: format!(
            "select seq, held_at from {held}
          where shard = $1 and aggregate_type = 'order' and order_id = $2"
        ),
        order_of: format!(
            "select aggregate_id from {published} where seq = $1 and aggregate_type = 'order'
         union all
         select aggregate_id from {events} where seq = $1 and aggregate_type = 'order'
         union all
         select aggregate_id from {quarantine} where seq = $1 and aggregate_type = 'order'
         limit 1"
        ),
    }
});

/// Where the orders database has an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// Published and confirmed (kept in `outbox_published`).
    Published,
    /// Still in the outbox.
    Unpublished,
    /// In the outbox's quarantine.
    Quarantined,
}

/// One event as the orders database has it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Appended {
    pub seq: i64,
    pub event_type: String,
    pub prev_seq: Option<i64>,
    pub traceparent: Option<String>,
    /// The commit's time (the outbox row's `created_at`).
    pub created_at: DateTime<Utc>,
    /// `published`, `unpublished` or `quarantined` (see [`Appended::place`]).
    #[sqlx(rename = "place")]
    pub place_name: String,
    /// When the broker confirmed it.
    pub published_at: Option<DateTime<Utc>>,
    /// The quarantine's reason.
    pub reason: Option<String>,
}

impl Appended {
    /// Where the event is.
    pub fn place(&self) -> Place {
        match self.place_name.as_str() {
            "published" => Place::Published,
            "quarantined" => Place::Quarantined,
            _ => Place::Unpublished,
        }
    }

    /// The trace id of its W3C `traceparent`, or "".
    pub fn trace_id(&self) -> &str {
        self.traceparent
            .as_deref()
            .and_then(|t| t.split('-').nth(1))
            .unwrap_or("")
    }
}

/// What mail-svc's database says of one event.
#[derive(Debug, Clone, Default)]
pub struct Consumed {
    pub applied: bool,
    pub held_at: Option<DateTime<Utc>>,
    /// The last time it was dead-lettered, and why.
    pub dead_lettered: Option<(DateTime<Utc>, String)>,
    pub mail: Option<Mail>,
}

/// The mail of one event.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Mail {
    pub seq: i64,
    pub queued_at: DateTime<Utc>,
    pub sent_at: Option<DateTime<Utc>>,
    pub failed_at: Option<DateTime<Utc>>,
    /// The SMTP server's last answer when it failed.
    pub last_error: Option<String>,
    /// The SMTP server's answer to the sent mail's message (`250 …`); `None` for the log
    /// mailer and for mails sent before mail-svc kept it.
    pub smtp_reply: Option<String>,
}

/// One event of the order and what became of it.
#[derive(Debug, Clone)]
pub struct Traced {
    pub event: Appended,
    pub consumed: Consumed,
}

impl Traced {
    /// Where the event stopped.
    pub fn stop(&self) -> Stop {
        stopped_at(&self.event, &self.consumed)
    }
}

/// The stage an event did not get past ([`Stop::Done`]: its mail went out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    NotPublished,
    Quarantined,
    DeadLettered,
    Held,
    NeverApplied,
    Done,
    MailFailed,
    MailQueued,
    AppliedNoMail,
}

impl Stop {
    /// The words outboxctl prints (and the console shows).
    pub fn label(self) -> &'static str {
        match self {
            Stop::NotPublished => "not published yet",
            Stop::Quarantined => "quarantined",
            Stop::DeadLettered => "dead-lettered",
            Stop::Held => "held (waiting for its predecessor)",
            Stop::NeverApplied => "published, never applied",
            Stop::Done => "done (mail sent)",
            Stop::MailFailed => "mail failed",
            Stop::MailQueued => "mail queued, not sent yet",
            Stop::AppliedNoMail => "applied (no mail)",
        }
    }

    /// True when nothing is left to do for the event (or it only waits for the mailer).
    pub fn is_done(self) -> bool {
        matches!(self, Stop::Done | Stop::AppliedNoMail | Stop::MailQueued)
    }
}

fn stopped_at(e: &Appended, c: &Consumed) -> Stop {
    match e.place() {
        Place::Unpublished => return Stop::NotPublished,
        Place::Quarantined => return Stop::Quarantined,
        Place::Published => {}
    }
    if c.dead_lettered.is_some() && !c.applied {
        return Stop::DeadLettered;
    }
    if !c.applied {
        return if c.held_at.is_some() {
            Stop::Held
        } else {
            Stop::NeverApplied
        };
    }
    match &c.mail {
        Some(m) if m.sent_at.is_some() => Stop::Done,
        Some(m) if m.failed_at.is_some() => Stop::MailFailed,
        Some(_) => Stop::MailQueued,
        None => Stop::AppliedNoMail,
    }
}

/// The events of order `order` of the shard whose database is `orders`, in seq order, each with
/// what mail-svc's database (`mail`) says of it. Empty when the order has no event in the
/// outbox, the quarantine or the published rows kept.
pub async fn trace(
    orders: &PgPool,
    mail: &PgPool,
    shard: i32,
    order: i64,
) -> Result<Vec<Traced>, sqlx::Error> {
    let events = appended(orders, order).await?;
    if events.is_empty() {
        return Ok(Vec::new());
    }
    let consumed = consumed(mail, shard, order).await?;
    Ok(events
        .into_iter()
        .map(|event| Traced {
            consumed: consumed(event.seq),
            event,
        })
        .collect())
}

/// The order's events in the orders database, wherever they are, in seq order.
async fn appended(orders: &PgPool, order: i64) -> Result<Vec<Appended>, sqlx::Error> {
    sqlx::query_as(AssertSqlSafe(SQL.appended.as_str()))
        .bind(order)
        .fetch_all(orders)
        .await
}

/// mail-svc's watermark for the order: the last seq it applied, if any.
pub(crate) async fn applied(
    mail: &PgPool,
    shard: i32,
    order: i64,
) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar(AssertSqlSafe(SQL.applied.as_str()))
        .bind(shard)
        .bind(order)
        .fetch_optional(mail)
        .await
}

/// What mail-svc's database says of the order's events: a function of the seq.
async fn consumed(
    mail: &PgPool,
    shard: i32,
    order: i64,
) -> Result<impl Fn(i64) -> Consumed, sqlx::Error> {
    let applied = applied(mail, shard, order).await?;
    let held: Vec<(i64, DateTime<Utc>)> = sqlx::query_as(AssertSqlSafe(SQL.held.as_str()))
        .bind(shard)
        .bind(order)
        .fetch_all(mail)
        .await?;
    let dead: Vec<(i64, DateTime<Utc>, String)> = sqlx::query_as(
        "select seq, at, reason from dead_letters
          where shard = $1 and aggregate_type = 'order' and order_id = $2 and seq is not null
          order by id",
    )
    .bind(shard)
    .bind(order)
    .fetch_all(mail)
    .await?;
    let mails: Vec<Mail> = sqlx::query_as(
        "select seq, queued_at, sent_at, failed_at, last_error, smtp_reply from mails
          where shard = $1 and order_id = $2",
    )
    .bind(shard)
    .bind(order)
    .fetch_all(mail)
    .await?;
    Ok(move |seq: i64| Consumed {
        applied: applied.is_some_and(|a| seq <= a),
        held_at: held.iter().find(|h| h.0 == seq).map(|h| h.1),
        dead_lettered: dead
            .iter()
            .rfind(|d| d.0 == seq)
            .map(|d| (d.1, d.2.clone())),
        mail: mails.iter().find(|m| m.seq == seq).cloned(),
    })
}

/// The order whose event `seq` is, wherever the orders database has it (`None`: no such event,
/// or published before the retention window).
pub async fn order_of(orders: &PgPool, seq: i64) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar(AssertSqlSafe(SQL.order_of.as_str()))
        .bind(seq)
        .fetch_optional(orders)
        .await
}
