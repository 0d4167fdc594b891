//! `outboxctl held`: the orders mail-svc holds back, and the advice for each.

use outbox_proto::mail::admin::v1::{self as mail_admin, ListHeldRequest};
use serde_json::{Value, json};
use tonic::Status;

use super::{listing::ShardTable, mail_admin, seq_list, step, u};
use crate::{Failure, Output, Result, Services, cli::Held, table::age};

pub(super) fn held_advice(o: &mail_admin::HeldOrder) -> String {
    let (id, w) = (o.order_id, o.waiting_for);
    let shard = step(o.shard > 0, &format!("--shard {} ", o.shard));
    if o.waiting_for_dead_lettered {
        format!(
            "order {id} waits for seq {w}, which is in the dead-letter queue: see why with \
             `outboxctl dead-letters list --order {id}`, fix that, then \
             `outboxctl dead-letters redrive {shard}--seq {w} --reason ...` \
             (or skip it: `outboxctl held release --order {id} --reason ...`)"
        )
    } else {
        format!(
            "order {id} waits for seq {w} (held {}), which is not a dead letter: still in the \
             outbox or quarantine? (`outboxctl backlog`, `outboxctl quarantine list --order \
             {id}`); published and lost from mail-svc's queue? `outboxctl replay {shard}--order \
             {id} --from-seq {w} --to-seq {w} --queue <MAIL_QUEUE> --reason ...`; to skip it: \
             `outboxctl held release --order {id} --reason ...`",
            age(o.oldest_held_age_ms)
        )
    }
}

pub(super) fn held_json(o: &mail_admin::HeldOrder) -> Value {
    json!({
        "shard": o.shard,
        "order_id": o.order_id,
        "processed_up_to": o.processed_up_to,
        "waiting_for": o.waiting_for,
        "waiting_for_dead_lettered": o.waiting_for_dead_lettered,
        "held_seqs": o.held_seqs,
        "oldest_held_age_ms": o.oldest_held_age_ms,
    })
}

/// `outboxctl held ...`.
pub(super) async fn held(s: &Services, h: &Held) -> Result<Output> {
    let (addr, mut c) = mail_admin(s).await?;
    let fail = |e: Status| Failure::from_status("mail-svc", &addr, &e);
    match h {
        Held::List { limit } => {
            let r = c
                .list_held(s.request(ListHeldRequest { limit: *limit }, false)?)
                .await
                .map_err(fail)?
                .into_inner();
            let unknown = !r.dead_letters_unavailable.is_empty();
            let sharded = r.orders.iter().any(|o| o.shard > 0);
            let mut t = ShardTable::new(
                sharded,
                &[
                    "ORDER",
                    "PROCESSED UP TO",
                    "WAITS FOR",
                    "DEAD-LETTERED",
                    "HELD",
                    "OLDEST",
                ],
            );
            for o in &r.orders {
                t.row(
                    o.shard,
                    vec![
                        o.order_id.to_string(),
                        o.processed_up_to.map_or("-".into(), u),
                        u(o.waiting_for),
                        match (unknown, o.waiting_for_dead_lettered) {
                            (true, _) => "unknown".into(),
                            (false, true) => "yes".into(),
                            (false, false) => "no".into(),
                        },
                        seq_list(&o.held_seqs),
                        age(o.oldest_held_age_ms),
                    ],
                );
            }
            let mut human = if r.orders.is_empty() {
                "no held events\n".to_owned()
            } else {
                format!(
                    "{} held event(s) in {} order(s)\n{}",
                    r.held_events,
                    r.orders.len(),
                    t.render()
                )
            };
            if unknown {
                human.push_str(&format!(
                    "(the dead-letter queue could not be read: {})\n",
                    r.dead_letters_unavailable
                ));
            }
            for o in &r.orders {
                human.push_str(&format!("  - {}\n", held_advice(o)));
            }
            Ok(Output {
                exit: 0,
                human,
                json: json!({
                    "held_events": r.held_events,
                    "orders": r.orders.iter().map(held_json).collect::<Vec<_>>(),
                    "dead_letters_unavailable": r.dead_letters_unavailable,
                }),
            })
        }
        Held::Release { order, reason } => {
            let r = s.admin().release_held(*order, &reason.reason).await?;
            let human = if r.already_released {
                format!("order {order}: released before, nothing held now (nothing changed)\n")
            } else {
                format!(
                    "order {order}: skipped seq {}, released {} (their mails are queued, in \
                     chain order)\n",
                    seq_list(&r.skipped),
                    seq_list(&r.released)
                )
            };
            Ok(Output {
                exit: 0,
                human,
                json: json!({
                    "order_id": order, "skipped": r.skipped, "released": r.released,
                    "already_released": r.already_released,
                }),
            })
        }
    }
}
