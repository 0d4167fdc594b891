//! `ReleaseHeld`: skip the missing predecessor of an order's held chain and process the chain now.
//!
//! No rule of its own: under the order's advisory lock (the consumer's, so no delivery of the
//! order interleaves), the watermark is moved to the missing seq as if it had been processed
//! without a mail, and the held event waiting for it is applied with [`process::plan_order`],
//! which processes it and releases its held successors in chain order, exactly as the missing
//! event's arrival would have. A chain with several gaps is released gap by gap, lowest first.
//! The writes go through [`db::write_batch`] in the same transaction as the audit row.
//!
//! A skipped seq that arrives later is at or below the watermark: the consumer drops it as a
//! duplicate (its mail is never sent; that is what releasing means).

use sqlx::{Connection, PgPool};

use crate::{
    admin::db as admin_db,
    db, event,
    process::{self, Item},
};

/// What a release did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Released {
    /// The missing seqs skipped.
    pub skipped: Vec<i64>,
    /// The held events processed, in chain order.
    pub released: Vec<i64>,
    /// Nothing was held, and an earlier release of the order is on record.
    pub already: bool,
}

/// Why a release failed.
#[derive(Debug, thiserror::Error)]
pub enum ReleaseError {
    #[error("order {0} has no held events (nothing changed)")]
    NothingHeld(i64),
    #[error("{0}")]
    Corrupt(String),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

/// Releases `order_id`'s held chain (see the module docs) and records it, in one transaction.
pub async fn release(
    pool: &PgPool,
    order_id: i64,
    reason: &str,
    operator: Option<&str>,
) -> Result<Released, ReleaseError> {
    let mut conn = pool.acquire().await?;
    let mut tx = conn.begin().await?;
    db::lock_orders(&mut tx, &[order_id]).await?;
    let mut state = db::orders_state(&mut tx, &[order_id]).await?;
    let watermark = state.watermarks.get(&order_id).copied();
    let mut held = state.held.remove(&order_id).unwrap_or_default();
    if held.is_empty() {
        if admin_db::released_before(&mut tx, order_id).await? {
            return Ok(Released {
                already: true,
                ..Released::default()
            });
        }
        return Err(ReleaseError::NothingHeld(order_id));
    }

    let mut out = Released::default();
    let mut writes = db::BatchWrites::default();
    let mut w = watermark;
    // The held event the chain waits on: the lowest predecessor above the watermark.
    while let Some(pos) = held
        .iter()
        .enumerate()
        .filter(|(_, h)| w.is_none_or(|w| h.prev_seq > w))
        .min_by_key(|(_, h)| (h.prev_seq, h.seq))
        .map(|(pos, _)| pos)
    {
        let first = held.remove(pos);
        let ev = event::decode_stored(&first.event).map_err(|e| {
            ReleaseError::Corrupt(format!(
                "held event seq {} of order {order_id} is corrupt: {e}",
                first.seq
            ))
        })?;
        let items = [(
            0,
            Item {
                event: &ev,
                traceparent: first.traceparent.as_deref(),
            },
        )];
        // As if the missing predecessor had just been processed.
        let skipped = Some(first.prev_seq);
        let plan =
            process::plan_order(skipped, held.clone(), &items).map_err(ReleaseError::Corrupt)?;
        out.skipped.push(first.prev_seq);
        out.released.extend(plan.mails.iter().map(|(e, _)| e.seq));
        held.retain(|h| !plan.released.contains(&h.seq));
        writes.released.push(first.seq);
        w = plan.watermark;
        let mut outcomes = [None];
        process::add(&mut writes, skipped, plan, &mut outcomes);
    }
    // `add` records a watermark move per step; one row per order may be written per statement.
    writes.watermark_orders.clear();
    writes.watermark_seqs.clear();
    if let Some(w) = w.filter(|w| Some(*w) != watermark) {
        writes.watermark_orders.push(order_id);
        writes.watermark_seqs.push(w);
    }
    db::write_batch(&mut tx, "admin", &writes).await?;
    admin_db::audit(
        &mut tx,
        "ReleaseHeld",
        &out.released,
        reason,
        operator,
        Some(serde_json::json!({ "order_id": order_id, "skipped": out.skipped })),
    )
    .await?;
    tx.commit().await?;
    Ok(out)
}
