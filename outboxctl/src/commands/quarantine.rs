//! `outboxctl quarantine`: list, requeue and drop the rows the relay could not publish.

use outbox_proto::relay::admin::v1::{ListQuarantinedRequest, QuarantineSelector};
use serde_json::json;
use tonic::Status;

use super::{
    listing::{ShardTable, event_cells, scope_prefix, unavailable_json, unavailable_note},
    relay_admin, seq_list,
};
use crate::{
    Failure, Output, Result, Services,
    cli::{self, Quarantine},
    table::age,
};

fn quarantine_selector(sel: &cli::QuarantineSelect) -> QuarantineSelector {
    QuarantineSelector {
        seqs: sel.seq.clone(),
        order_id: sel.order.unwrap_or_default(),
    }
}

/// What a requeue or a drop of `shard` (named `db` by `--db`) did: the seqs it `done` now and
/// `before` (a repeated call), and what follows (`next`).
fn acted(
    (shard, db): (u32, Option<&str>),
    (done, now, before): (&str, &[u64], &[u64]),
    next: &str,
) -> Output {
    let mut json = serde_json::Map::new();
    json.insert(done.to_owned(), json!(now));
    json.insert(format!("already_{done}"), json!(before));
    Output {
        exit: 0,
        human: format!(
            "{}{done}: {}\nalready {done} before: {}\n{next}\n",
            scope_prefix(shard, db),
            seq_list(now),
            seq_list(before)
        ),
        json: json.into(),
    }
}

/// `outboxctl quarantine ...`.
pub(super) async fn quarantine(s: &Services, q: &Quarantine) -> Result<Output> {
    match q {
        Quarantine::List(cli::QuarantineList {
            list: cli::ListArgs { order, limit },
            db,
        }) => {
            // Rows of one database: the relay lists every shard's, each with its shard.
            let only = match db {
                Some(_) => {
                    let scope = cli::Shard {
                        shard: 0,
                        db: db.clone(),
                    };
                    Some(crate::fleet::shard(s.fleet.as_ref(), &scope).await?.0)
                }
                None => None,
            };
            let (addr, mut c) = relay_admin(s).await?;
            let fail = |e: Status| Failure::from_status("relay-svc", &addr, &e);
            let request = ListQuarantinedRequest {
                limit: *limit,
                order_id: order.unwrap_or_default(),
            };
            let mut r = c
                .list_quarantined(s.request(request, false)?)
                .await
                .map_err(fail)?
                .into_inner();
            if let Some(shard) = only {
                r.rows.retain(|row| row.shard == shard);
                r.unavailable_shards.retain(|u| u.shard == shard);
                r.count = r.rows.len() as u64;
            }
            let sharded =
                r.rows.iter().any(|row| row.shard > 0) || !r.unavailable_shards.is_empty();
            let mut t = ShardTable::new(
                sharded,
                &[
                    "SEQ",
                    "ORDER",
                    "TYPE",
                    "QUARANTINED",
                    "HOLDS BACK",
                    "REASON",
                ],
            );
            for row in &r.rows {
                let mut cells = event_cells(row.seq, row.order_id, &row.r#type);
                cells.extend([
                    format!("{} ago", age(row.quarantined_age_ms)),
                    row.held_back.to_string(),
                    row.reason.clone(),
                ]);
                t.row(row.shard, cells);
            }
            let mut human = if r.rows.is_empty() {
                "no row in quarantine\n".to_owned()
            } else {
                format!("{} row(s) in quarantine\n{}", r.count, t.render())
            };
            human.push_str(&unavailable_note(&r.unavailable_shards));
            Ok(Output {
                exit: 0,
                human,
                json: json!({
                    "count": r.count,
                    "unavailable_shards": unavailable_json(&r.unavailable_shards),
                    "rows": r.rows.iter().map(|row| json!({
                        "shard": row.shard, "seq": row.seq, "order_id": row.order_id,
                        "type": row.r#type,
                        "prev_seq": row.prev_seq, "reason": row.reason, "age_ms": row.age_ms,
                        "quarantined_age_ms": row.quarantined_age_ms,
                        "held_back": row.held_back,
                    })).collect::<Vec<_>>(),
                }),
            })
        }
        Quarantine::Requeue(act) => {
            let (n, db) = crate::fleet::shard(s.fleet.as_ref(), &act.shard).await?;
            let r = s
                .admin()
                .requeue_quarantined(quarantine_selector(&act.select), n, &act.reason.reason)
                .await?;
            Ok(acted(
                (n, db.as_deref()),
                ("requeued", &r.requeued, &r.already_requeued),
                "The relay publishes them, then their orders' later events (`outboxctl backlog` \
                 shows the progress).",
            ))
        }
        Quarantine::Drop(act) => {
            let (n, db) = crate::fleet::shard(s.fleet.as_ref(), &act.shard).await?;
            let r = s
                .admin()
                .drop_quarantined(quarantine_selector(&act.select), n, &act.reason.reason)
                .await?;
            Ok(acted(
                (n, db.as_deref()),
                ("dropped", &r.dropped, &r.already_dropped),
                "Their orders' later events now flow; mail-svc holds them until `outboxctl held \
                 release --order <order> --reason ...`.",
            ))
        }
    }
}
