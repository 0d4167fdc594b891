//! `ReleaseHeld`: skip the missing predecessor of an order's held chain and process the chain now.
//!
//! No rule of its own: [`outbox_inbox::Inbox::release_held`] does it under the order's advisory
//! lock (the consumer's, so no delivery of the order interleaves): the watermark is moved to the
//! missing seq as if it had been processed without a mail, and the held chain waiting for it is
//! processed (each event's mail queued) in chain order, exactly as the missing event's arrival
//! would have. A chain with several gaps is released gap by gap, lowest first. All of it
//! commits in the same transaction as the audit row.
//!
//! A skipped seq that arrives later is at or below the watermark: the consumer drops it as a
//! duplicate (its mail is never sent; that is what releasing means).

use sqlx::{Connection, PgConnection, PgPool};

use outbox_inbox::{ApplyError, Envelope, Handler};

use crate::{admin::db as admin_db, process};

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

/// The release's handler: queues each released event's mail.
struct QueueReleased;

impl Handler for QueueReleased {
    type Error = ReleaseError;
    async fn handle(&mut self, tx: &mut PgConnection, e: &Envelope) -> Result<(), ReleaseError> {
        let ev = process::decode_held(e).map_err(|e| ReleaseError::Corrupt(e.to_string()))?;
        process::queue(tx, &ev, e.traceparent.as_deref()).await?;
        Ok(())
    }
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
    // An order lives in one orders-svc shard, so this is one chain; each is released on its own.
    let chains = process::INBOX.held_chains(&mut tx, order_id).await?;
    let mut released = outbox_inbox::Released::default();
    for chain in chains.clone() {
        let r = process::INBOX
            .release_held(&mut tx, chain, &mut QueueReleased)
            .await
            .map_err(|e| match e {
                ApplyError::Handler { source, .. } => source,
                ApplyError::Db(e) => ReleaseError::Db(e),
            })?;
        released.skipped.extend(r.skipped);
        released.released.extend(r.released);
        released.stranded.extend(r.stranded);
    }
    if released.released.is_empty() && released.skipped.is_empty() && released.stranded.is_empty() {
        if admin_db::released_before(&mut tx, order_id).await? {
            return Ok(Released {
                already: true,
                ..Released::default()
            });
        }
        return Err(ReleaseError::NothingHeld(order_id));
    }
    let out = Released {
        skipped: released.skipped,
        released: released.released,
        already: false,
    };
    outbox_kit::admin::audit(
        &mut tx,
        "ReleaseHeld",
        &out.released,
        reason,
        operator,
        serde_json::json!({
            "order_id": order_id,
            "skipped": out.skipped,
            "shards": chains.iter().map(|c| c.shard).collect::<Vec<_>>(),
        }),
    )
    .await?;
    tx.commit().await?;
    Ok(out)
}
