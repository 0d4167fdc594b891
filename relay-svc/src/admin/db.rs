//! The admin service's SQL: backlog and quarantine listings, and the moves out of quarantine with
//! their audit rows (table `admin_actions`, orders-svc migration 0004), each in one transaction.

use sqlx::{PgConnection, PgPool, Postgres, Transaction};

use outbox_relay::error::Error;

/// Every admin mutation takes this transaction-scoped advisory lock first, so that two operators
/// acting on the same rows at once see each other's result (one moves the row, the other finds
/// the audit row and answers "already done") instead of a row that is in neither state.
const ADMIN_LOCK_KEY: i64 = 0x72_656c_6179_6164; // "relayad"

/// The outbox rows not yet relayed, as a `with` clause: from the relay's persisted read floor on,
/// plus the holes below it (outbox crate migration 2, orders-svc migration 0005). Listings start
/// here so that they never walk the rows already relayed, which a pinned xmin horizon keeps from
/// vacuum.
const UNSENT: &str = "with f as (select last_value as floor from outbox_read_floor),
     unsent as (select o.* from outbox o, f where o.seq >= f.floor
                union all
                select o.* from outbox o, f
                 where o.seq = any(array(select seq from outbox_holes h where h.seq < f.floor)))";

/// A read-only transaction for the listings, planned as the relay plans its own figures
/// (`outbox_relay::db::index_walks_only`): index walks from the floor, never a scan of the dead
/// rows below it, whether or not the table has statistics.
async fn index_walks(pool: &PgPool) -> Result<Transaction<'static, Postgres>, Error> {
    let mut tx = pool.begin().await.map_err(Error::from_db)?;
    outbox_relay::db::index_walks_only(&mut tx).await?;
    Ok(tx)
}

/// An outbox row as listed (no payload).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Row {
    pub seq: i64,
    pub aggregate_id: i64,
    pub event_type: String,
    pub prev_seq: Option<i64>,
    pub age_ms: i64,
}

/// The oldest `limit` outbox rows.
pub async fn oldest(pool: &PgPool, limit: i64) -> Result<Vec<Row>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "{UNSENT}
         select seq, aggregate_id, event_type, prev_seq,
                (extract(epoch from clock_timestamp() - created_at) * 1000)::bigint as age_ms
           from unsent order by seq limit $1"
    )))
    .bind(limit)
    .fetch_all(&mut *index_walks(pool).await?)
    .await
    .map_err(Error::from_db)
}

/// Quarantined rows, and outbox rows held back behind them.
pub async fn quarantine_counts(pool: &PgPool) -> Result<(i64, i64), Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "{UNSENT}
         select (select count(*) from outbox_quarantine),
                (select count(*) from unsent o
                  where exists (select 1 from outbox_quarantine q
                                 where q.aggregate_id = o.aggregate_id))"
    )))
    .fetch_one(&mut *index_walks(pool).await?)
    .await
    .map_err(Error::from_db)
}

/// A quarantined row as listed.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Quarantined {
    pub seq: i64,
    pub aggregate_id: i64,
    pub event_type: String,
    pub prev_seq: Option<i64>,
    pub reason: String,
    pub age_ms: i64,
    pub quarantined_age_ms: i64,
    /// Later events of the order waiting in the outbox.
    pub held_back: i64,
}

/// The oldest `limit` quarantined rows (of one order, or all).
pub async fn quarantined(
    pool: &PgPool,
    limit: i64,
    order_id: Option<i64>,
) -> Result<Vec<Quarantined>, Error> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "{UNSENT}
         select q.seq, q.aggregate_id, q.event_type, q.prev_seq, q.reason,
                (extract(epoch from clock_timestamp() - q.created_at) * 1000)::bigint as age_ms,
                (extract(epoch from clock_timestamp() - q.quarantined_at) * 1000)::bigint
                  as quarantined_age_ms,
                (select count(*) from unsent o where o.aggregate_id = q.aggregate_id) as held_back
           from outbox_quarantine q
          where $2::bigint is null or q.aggregate_id = $2
          order by q.seq limit $1"
    )))
    .bind(limit)
    .bind(order_id)
    .fetch_all(&mut *index_walks(pool).await?)
    .await
    .map_err(Error::from_db)
}

/// Which rows a mutation acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selector {
    Seqs(Vec<i64>),
    Order(i64),
}

/// What a move out of quarantine found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Moved {
    /// Rows this call moved.
    pub done: Vec<i64>,
    /// Rows an earlier call of the same action moved.
    pub already: Vec<i64>,
    /// Seqs neither in quarantine nor moved by an earlier call of the action.
    pub unknown: Vec<i64>,
}

/// Starts an admin transaction (with the admin lock).
pub async fn begin(pool: &PgPool) -> Result<Transaction<'static, Postgres>, Error> {
    let mut tx = pool.begin().await.map_err(Error::from_db)?;
    sqlx::query("select pg_advisory_xact_lock($1)")
        .bind(ADMIN_LOCK_KEY)
        .execute(&mut *tx)
        .await
        .map_err(Error::from_db)?;
    Ok(tx)
}

/// The quarantined seqs the selector names now, and (for seqs) those it names that an earlier
/// `action` took out of quarantine already, and those nobody knows.
async fn resolve(conn: &mut PgConnection, action: &str, sel: &Selector) -> Result<Moved, Error> {
    let present: Vec<i64> = match sel {
        Selector::Seqs(seqs) => {
            sqlx::query_scalar("select seq from outbox_quarantine where seq = any($1) order by seq")
                .bind(seqs)
                .fetch_all(&mut *conn)
                .await
        }
        Selector::Order(id) => {
            sqlx::query_scalar(
                "select seq from outbox_quarantine where aggregate_id = $1 order by seq",
            )
            .bind(id)
            .fetch_all(&mut *conn)
            .await
        }
    }
    .map_err(Error::from_db)?;
    let wanted: Vec<i64> = match sel {
        Selector::Seqs(seqs) => seqs
            .iter()
            .filter(|s| !present.contains(s))
            .copied()
            .collect(),
        Selector::Order(_) => Vec::new(),
    };
    let earlier: Vec<i64> = match sel {
        Selector::Seqs(_) => {
            sqlx::query_scalar(
                "select distinct s from admin_actions, unnest(ids) as s
                  where action = $1 and s = any($2) order by s",
            )
            .bind(action)
            .bind(&wanted)
            .fetch_all(&mut *conn)
            .await
        }
        // An order with nothing quarantined any more: what earlier calls took out of it.
        Selector::Order(id) if present.is_empty() => {
            sqlx::query_scalar(
                "select distinct s from admin_actions, unnest(ids) as s
                  where action = $1 and (detail ->> 'order_id')::bigint = $2 order by s",
            )
            .bind(action)
            .bind(id)
            .fetch_all(&mut *conn)
            .await
        }
        Selector::Order(_) => Ok(Vec::new()),
    }
    .map_err(Error::from_db)?;
    let unknown = wanted
        .into_iter()
        .filter(|s| !earlier.contains(s))
        .collect();
    Ok(Moved {
        done: present,
        already: earlier,
        unknown,
    })
}

/// Moves the selected rows back into the outbox with their seqs (see orders-svc's migration
/// 0002) and writes the audit row, in `tx`. Nothing moves when any seq is unknown.
pub async fn requeue(
    tx: &mut PgConnection,
    sel: &Selector,
    reason: &str,
    operator: Option<&str>,
) -> Result<Moved, Error> {
    const ACTION: &str = "RequeueQuarantined";
    let mut found = resolve(tx, ACTION, sel).await?;
    if !found.unknown.is_empty() || found.done.is_empty() {
        return Ok(found);
    }
    let moved: Vec<i64> = sqlx::query_scalar(
        "with r as (
           delete from outbox_quarantine where seq = any($1)
           returning seq, aggregate_id, event_type, prev_seq, payload, traceparent, created_at,
                     aggregate_type, routing_key, content_type, headers)
         insert into outbox (seq, aggregate_id, event_type, prev_seq, payload, traceparent,
                             created_at, aggregate_type, routing_key, content_type, headers)
         overriding system value select * from r
         returning seq",
    )
    .bind(&found.done)
    .fetch_all(&mut *tx)
    .await
    .map_err(Error::from_db)?;
    found.done = moved;
    found.done.sort_unstable();
    audit(tx, ACTION, &found.done, reason, operator, sel, None).await?;
    // The relay wakes on this channel rather than waiting for its next poll.
    sqlx::query("select pg_notify($1, '')")
        .bind(outbox_kit::outbox::NOTIFY_CHANNEL)
        .execute(&mut *tx)
        .await
        .map_err(Error::from_db)?;
    Ok(found)
}

/// Deletes the selected rows for good, keeping their content (payload hex-encoded) in the audit
/// row, in `tx`. Nothing is deleted when any seq is unknown.
pub async fn drop_rows(
    tx: &mut PgConnection,
    sel: &Selector,
    reason: &str,
    operator: Option<&str>,
) -> Result<Moved, Error> {
    const ACTION: &str = "DropQuarantined";
    let mut found = resolve(tx, ACTION, sel).await?;
    if !found.unknown.is_empty() || found.done.is_empty() {
        return Ok(found);
    }
    let (seqs, rows): (Vec<i64>, serde_json::Value) = sqlx::query_as(
        "with d as (delete from outbox_quarantine where seq = any($1) returning *)
         select coalesce(array_agg(seq order by seq), '{}'),
                coalesce(jsonb_agg(jsonb_build_object(
                  'seq', seq, 'order_id', aggregate_id, 'type', event_type,
                  'prev_seq', prev_seq, 'payload_hex', encode(payload, 'hex'),
                  'traceparent', traceparent, 'created_at', created_at,
                  'aggregate_type', aggregate_type, 'routing_key', routing_key,
                  'content_type', content_type, 'headers', headers,
                  'quarantine_reason', reason, 'quarantined_at', quarantined_at)
                  order by seq), '[]')
           from d",
    )
    .bind(&found.done)
    .fetch_one(&mut *tx)
    .await
    .map_err(Error::from_db)?;
    found.done = seqs;
    audit(tx, ACTION, &found.done, reason, operator, sel, Some(rows)).await?;
    Ok(found)
}

async fn audit(
    tx: &mut PgConnection,
    action: &str,
    ids: &[i64],
    reason: &str,
    operator: Option<&str>,
    sel: &Selector,
    rows: Option<serde_json::Value>,
) -> Result<(), Error> {
    let mut detail = serde_json::Map::new();
    if let Selector::Order(id) = sel {
        detail.insert("order_id".into(), (*id).into());
    }
    if let Some(rows) = rows {
        detail.insert("rows".into(), rows);
    }
    sqlx::query(
        "insert into admin_actions (action, ids, reason, operator, detail)
         values ($1, $2, $3, $4, $5)",
    )
    .bind(action)
    .bind(ids)
    .bind(reason)
    .bind(operator)
    .bind(serde_json::Value::Object(detail))
    .execute(tx)
    .await
    .map_err(Error::from_db)?;
    Ok(())
}
