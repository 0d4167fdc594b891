//! `outboxctl trace`: one order's events and where each went, from the databases (read-only):
//! appended and published (orders database: the outbox, its quarantine and the published rows
//! kept for relay-svc's PUBLISHED_RETENTION), applied, held or dead-lettered (mail-svc's inbox),
//! and the mail (queued, sent, failed). Each event ends with the stage where it stopped.

use chrono::{DateTime, Utc};
use serde_json::json;
use sqlx::PgPool;

use crate::{Failure, Output, Result, cli::TraceArgs, table::Table};

/// One event as the orders database has it.
#[derive(Debug, sqlx::FromRow)]
struct Appended {
    seq: i64,
    event_type: String,
    prev_seq: Option<i64>,
    traceparent: Option<String>,
    created_at: DateTime<Utc>,
    /// `published`, `unpublished` or `quarantined`.
    place: String,
    published_at: Option<DateTime<Utc>>,
    reason: Option<String>,
}

/// What mail-svc's database says of one event.
#[derive(Debug, Default)]
struct Consumed {
    applied: bool,
    held_at: Option<DateTime<Utc>>,
    dead_lettered: Option<(DateTime<Utc>, String)>,
    mail: Option<Mail>,
}

#[derive(Debug, Clone, sqlx::FromRow)]
struct Mail {
    seq: i64,
    queued_at: DateTime<Utc>,
    sent_at: Option<DateTime<Utc>>,
    failed_at: Option<DateTime<Utc>>,
    last_error: Option<String>,
}

pub async fn trace(args: &TraceArgs) -> Result<Output> {
    let sources = args.databases.connect().await?;
    let shard = args.shard.shard as usize;
    let orders = sources.shards.get(shard).ok_or_else(|| {
        Failure::new(
            Failure::FAILED,
            format!(
                "--shard {shard}: only {} orders database(s) given",
                sources.shards.len()
            ),
        )
    })?;
    let read = |e: sqlx::Error| {
        Failure::new(
            Failure::UNREACHABLE,
            format!("the trace cannot read its databases: {e}"),
        )
    };
    let mut events = appended(orders, args.order).await.map_err(read)?;
    if let Some(seq) = args.seq {
        events.retain(|e| e.seq == seq);
    }
    if events.is_empty() {
        let what = args
            .seq
            .map_or_else(String::new, |s| format!(" with seq {s}"));
        return Err(Failure::new(
            Failure::NOT_FOUND,
            format!(
                "no event of order {}{what} in shard {shard}'s outbox, quarantine or published \
                 rows (published rows are kept for relay-svc's PUBLISHED_RETENTION)",
                args.order
            ),
        ));
    }
    let consumed = consumed(&sources.mail, shard as i32, args.order)
        .await
        .map_err(read)?;
    let mut table = Table::new(&[
        "SEQ",
        "TYPE",
        "PREV",
        "APPENDED",
        "PUBLISHED",
        "INBOX",
        "MAIL",
        "STOPPED AT",
        "TRACE",
    ]);
    let mut json_events = Vec::new();
    for e in &events {
        let c = consumed(e.seq);
        let published = match e.place.as_str() {
            "published" => e.published_at.map_or_else(String::new, time),
            "quarantined" => format!("quarantined: {}", e.reason.clone().unwrap_or_default()),
            _ => "not yet (in the outbox)".to_owned(),
        };
        let inbox = if c.applied {
            "applied".to_owned()
        } else if let Some((at, reason)) = &c.dead_lettered {
            format!("dead-lettered {}: {reason}", time(*at))
        } else if let Some(at) = c.held_at {
            format!("held since {}", time(at))
        } else {
            "-".to_owned()
        };
        let mail = match &c.mail {
            Some(m) if m.sent_at.is_some() => {
                format!("sent {}", time(m.sent_at.unwrap_or(m.queued_at)))
            }
            Some(m) if m.failed_at.is_some() => {
                format!("failed: {}", m.last_error.clone().unwrap_or_default())
            }
            Some(m) => format!("queued {}", time(m.queued_at)),
            None => "-".to_owned(),
        };
        let stopped = stopped_at(e, &c);
        let trace_id = e
            .traceparent
            .as_deref()
            .and_then(|t| t.split('-').nth(1))
            .unwrap_or("")
            .to_owned();
        table.row(vec![
            e.seq.to_string(),
            e.event_type.clone(),
            e.prev_seq.map_or_else(|| "-".to_owned(), |p| p.to_string()),
            time(e.created_at),
            published.clone(),
            inbox.clone(),
            mail.clone(),
            stopped.to_owned(),
            trace_id.clone(),
        ]);
        json_events.push(json!({
            "seq": e.seq,
            "type": e.event_type,
            "prev_seq": e.prev_seq,
            "appended_at": e.created_at.to_rfc3339(),
            "published": published,
            "published_at": e.published_at.map(|t| t.to_rfc3339()),
            "inbox": inbox,
            "mail": mail,
            "stopped_at": stopped,
            "trace_id": trace_id,
        }));
    }
    Ok(Output {
        exit: 0,
        human: table.render(),
        json: json!({ "order_id": args.order, "shard": shard, "events": json_events }),
    })
}

fn time(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// The stage an event did not get past (`done`: its mail went out).
fn stopped_at(e: &Appended, c: &Consumed) -> &'static str {
    match e.place.as_str() {
        "unpublished" => return "not published yet",
        "quarantined" => return "quarantined",
        _ => {}
    }
    if c.dead_lettered.is_some() && !c.applied {
        return "dead-lettered";
    }
    if !c.applied {
        return if c.held_at.is_some() {
            "held (waiting for its predecessor)"
        } else {
            "published, never applied"
        };
    }
    match &c.mail {
        Some(m) if m.sent_at.is_some() => "done (mail sent)",
        Some(m) if m.failed_at.is_some() => "mail failed",
        Some(_) => "mail queued, not sent yet",
        None => "applied (no mail)",
    }
}

/// The order's events in the orders database, wherever they are, in seq order.
async fn appended(orders: &PgPool, order: i64) -> std::result::Result<Vec<Appended>, sqlx::Error> {
    sqlx::query_as(
        "select seq, event_type, prev_seq, traceparent, created_at, place, published_at, reason
           from (select seq, event_type, prev_seq, traceparent, created_at,
                        'published' as place, published_at, null::text as reason
                   from outbox_published where aggregate_type = 'order' and aggregate_id = $1
                 union all
                 select seq, event_type, prev_seq, traceparent, created_at,
                        'unpublished', null, null
                   from outbox where aggregate_type = 'order' and aggregate_id = $1
                 union all
                 select seq, event_type, prev_seq, traceparent, created_at,
                        'quarantined', null, reason
                   from outbox_quarantine where aggregate_type = 'order' and aggregate_id = $1) e
          order by seq",
    )
    .bind(order)
    .fetch_all(orders)
    .await
}

/// What mail-svc's database says of the order's events: a function of the seq.
async fn consumed(
    mail: &PgPool,
    shard: i32,
    order: i64,
) -> std::result::Result<impl Fn(i64) -> Consumed, sqlx::Error> {
    let applied: Option<i64> = sqlx::query_scalar(
        "select last_seq from order_progress
          where shard = $1 and aggregate_type = 'order' and order_id = $2",
    )
    .bind(shard)
    .bind(order)
    .fetch_optional(mail)
    .await?;
    let held: Vec<(i64, DateTime<Utc>)> = sqlx::query_as(
        "select seq, held_at from held_events
          where shard = $1 and aggregate_type = 'order' and order_id = $2",
    )
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
        "select seq, queued_at, sent_at, failed_at, last_error from mails
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
