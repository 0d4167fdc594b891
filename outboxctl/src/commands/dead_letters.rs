//! `outboxctl dead-letters`: list and redrive mail-svc's dead letters.

use std::time::Duration;

use outbox_proto::mail::admin::v1::{DeadLetterFilter, ListDeadLettersRequest};
use serde_json::json;
use tonic::Status;

use super::{listing::ShardTable, mail_admin, seq_list, u};
use crate::{
    Failure, Output, Result, Services,
    cli::{Act, DeadLetters, ListArgs},
};

/// `outboxctl dead-letters ...`.
pub(super) async fn dead_letters(s: &Services, d: &DeadLetters) -> Result<Output> {
    match d {
        DeadLetters::List(ListArgs { order, limit }) => {
            let (addr, mut c) = mail_admin(s).await?;
            let fail = |e: Status| Failure::from_status("mail-svc", &addr, &e);
            let request = ListDeadLettersRequest {
                limit: *limit,
                order_id: order.unwrap_or_default(),
            };
            let r = c
                .list_dead_letters(s.request(request, false)?)
                .await
                .map_err(fail)?
                .into_inner();
            let sharded = r.messages.iter().any(|m| m.shard > 0);
            let mut t = ShardTable::new(sharded, &["SEQ", "ORDER", "TYPE", "REDRIVEN", "REASON"]);
            for m in &r.messages {
                t.row(
                    m.shard,
                    vec![
                        if m.seq == 0 { "?".into() } else { u(m.seq) },
                        if m.order_id == 0 {
                            "?".into()
                        } else {
                            m.order_id.to_string()
                        },
                        if m.r#type.is_empty() {
                            format!("({} bytes)", m.body_bytes)
                        } else {
                            m.r#type.clone()
                        },
                        m.redrive_count.to_string(),
                        m.reason.clone(),
                    ],
                );
            }
            let human = if r.messages.is_empty() {
                format!(
                    "no dead letter{} ({} in the queue)\n",
                    order.map_or(String::new(), |o| format!(" of order {o}")),
                    r.count
                )
            } else {
                format!("{} dead letter(s) in the queue\n{}", r.count, t.render())
            };
            Ok(Output {
                exit: 0,
                human,
                json: json!({
                    "count": r.count,
                    "messages": r.messages.iter().map(|m| json!({
                        "shard": m.shard, "seq": m.seq, "order_id": m.order_id, "type": m.r#type,
                        "routing_key": m.routing_key, "reason": m.reason,
                        "redrive_count": m.redrive_count, "message_id": m.message_id,
                        "body_bytes": m.body_bytes,
                        "published_at_unix": m.published_at.as_ref().map(|t| t.seconds),
                    })).collect::<Vec<_>>(),
                }),
            })
        }
        DeadLetters::Redrive {
            act:
                Act {
                    select,
                    shard,
                    reason,
                },
            batch,
        } => {
            let (shard, _) = crate::fleet::shard(s.fleet.as_ref(), shard).await?;
            let filter = DeadLetterFilter {
                seqs: select.seq.clone(),
                order_id: select.order.unwrap_or_default(),
                all: select.all,
                shard,
            };
            let json = s.json;
            let moved = s
                .admin()
                .redrive(
                    filter,
                    &reason.reason,
                    *batch,
                    Duration::ZERO,
                    |moved, this_call, target| {
                        let left = target.saturating_sub(moved.len());
                        // When more calls follow, or after the first.
                        if !json && (left > 0 || moved.len() > this_call) {
                            eprintln!("redriven {} of {target}, {left} left", moved.len());
                        }
                    },
                )
                .await
                .map_err(|e| {
                    let mut f = Failure::from(e.error);
                    if !e.moved.is_empty() {
                        f.message = format!(
                            "{} (redriven before the failure: {})",
                            f.message,
                            seq_list(&e.moved)
                        );
                    }
                    f
                })?;
            Ok(Output {
                exit: 0,
                human: format!(
                    "redriven {} message(s) to the main queue: {}\n",
                    moved.len(),
                    seq_list(&moved)
                ),
                json: json!({ "redriven": moved }),
            })
        }
    }
}
