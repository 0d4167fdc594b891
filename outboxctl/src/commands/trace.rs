//! `outboxctl trace`: one order's events and where each went, from the databases (read-only):
//! appended and published (orders database: the outbox, its quarantine and the published rows
//! kept for relay-svc's PUBLISHED_RETENTION), applied, held or dead-lettered (mail-svc's inbox),
//! and the mail (queued, sent, failed). Each event ends with the stage where it stopped.

use chrono::{DateTime, Utc};
use outbox_ops::trace::Place;
use serde_json::json;

use outbox_ops::settings::ToolSettings;

use crate::{
    Failure, Output, Result, Services,
    cli::{Cli, TraceArgs},
    table::Table,
};

pub async fn trace(s: &Services, args: &TraceArgs, ops: &ToolSettings<Cli>) -> Result<Output> {
    // `--db NAME`, or `--shard N` as the fixed deployment's shard N.
    let db = args.shard.db.clone().unwrap_or_else(|| {
        if s.fleet.is_some() {
            // A fleet database is named; a bare index names no database of it.
            String::new()
        } else {
            outbox_ops::fleet::shard_name(args.shard.shard as usize)
        }
    });
    if db.is_empty() {
        return Err(Failure::new(
            Failure::FAILED,
            "--db: with a fleet database, name the order's database (`outboxctl fleet list` \
             shows them)",
        ));
    }
    let sources = crate::fleet::connect(ops, s.fleet.as_ref(), Some(&db)).await?;
    let (Some(orders), Some(id)) = (sources.shards.first(), sources.ids.first()) else {
        return Err(Failure::new(
            Failure::FAILED,
            format!("--db: no database {db:?}"),
        ));
    };
    let (shard, name) = (id.shard, id.name.clone());
    let read = |e: sqlx::Error| {
        Failure::new(
            Failure::UNREACHABLE,
            format!("the trace cannot read its databases: {e}"),
        )
    };
    let mut events = outbox_ops::trace::trace(orders, &sources.mail, shard, args.order)
        .await
        .map_err(read)?;
    if let Some(seq) = args.seq {
        events.retain(|t| t.event.seq == seq);
    }
    if events.is_empty() {
        let what = args
            .seq
            .map_or_else(String::new, |s| format!(" with seq {s}"));
        return Err(Failure::new(
            Failure::NOT_FOUND,
            format!(
                "no event of order {}{what} in {name}'s outbox, quarantine or published rows \
                 (published rows are kept for relay-svc's PUBLISHED_RETENTION)",
                args.order
            ),
        ));
    }
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
    for traced in &events {
        let (e, c) = (&traced.event, &traced.consumed);
        let published = match e.place() {
            Place::Published => e.published_at.map_or_else(String::new, time),
            Place::Quarantined => {
                format!("quarantined: {}", e.reason.clone().unwrap_or_default())
            }
            Place::Unpublished => "not yet (in the outbox)".to_owned(),
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
                let at = time(m.sent_at.unwrap_or(m.queued_at));
                match &m.smtp_reply {
                    Some(reply) => format!("sent {at}: {reply}"),
                    None => format!("sent {at}"),
                }
            }
            Some(m) if m.failed_at.is_some() => {
                format!("failed: {}", m.last_error.clone().unwrap_or_default())
            }
            Some(m) => format!("queued {}", time(m.queued_at)),
            None => "-".to_owned(),
        };
        let stopped = traced.stop().label();
        let trace_id = e.trace_id().to_owned();
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
        json: json!({ "order_id": args.order, "shard": shard, "db": name, "events": json_events }),
    })
}

fn time(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}
