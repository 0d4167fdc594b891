//! A pre-filled orders outbox, and waking the relay to drain it.

use prost::Message;
use sqlx::PgPool;

use super::events::sample_event;

/// Reserves the next `rows` seqs of the outbox in `tx`, after `tx` took its xid (the order the
/// outbox's trigger keeps for every writer, which the relay's read floor relies on). Returns the
/// last one reserved.
pub(crate) async fn reserve_seqs(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    rows: i64,
) -> anyhow::Result<i64> {
    sqlx::query("select pg_current_xact_id()")
        .execute(&mut **tx)
        .await?;
    let last: i64 = sqlx::query_scalar(
        "select setval(pg_get_serial_sequence('outbox', 'seq'),
                       nextval(pg_get_serial_sequence('outbox', 'seq')) + $1 - 1)",
    )
    .bind(rows)
    .fetch_one(&mut **tx)
    .await?;
    Ok(last)
}

/// Appends `events` rows in the outbox's format in one transaction, as a writer would: event `i`
/// belongs to order `first_order + i % orders`, each order's events chained by `prev_seq`. The
/// seqs are reserved up front, after the transaction took its xid (the order the outbox's
/// trigger keeps for every writer, which the relay's read floor relies on), so the chains are
/// written by the insert itself and no dead row versions are left behind. No other writer may
/// run meanwhile.
pub async fn fill_outbox(
    pool: &PgPool,
    events: u64,
    orders: u64,
    first_order: i64,
) -> anyhow::Result<()> {
    let payload = sample_event(1, 1, Some(1))
        .payload
        .unwrap_or_default()
        .encode_to_vec();
    let mut tx = pool.begin().await?;
    let last = reserve_seqs(&mut tx, events as i64).await?;
    sqlx::query(
        "insert into outbox (seq, aggregate_id, event_type, routing_key, content_type, prev_seq,
                             payload)
         overriding system value
         select $4 + g, $5 + (g % $2),
                case when g < $2 then 'OrderCreated' else 'OrderStatusChanged' end,
                case when g < $2 then 'order.created' else 'order.status_changed' end,
                'application/x-protobuf',
                case when g >= $2 then $4 + g - $2 end, $3
           from generate_series(0, $1 - 1) g",
    )
    .bind(events as i64)
    .bind(orders as i64)
    .bind(&payload)
    .bind(last - events as i64 + 1)
    .bind(first_order)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// Wakes the relay now rather than at its next poll.
pub async fn notify_relay(pool: &PgPool) -> anyhow::Result<()> {
    sqlx::query("select pg_notify($1, '')")
        .bind(outbox_kit::outbox::NOTIFY_CHANNEL)
        .execute(pool)
        .await?;
    Ok(())
}
