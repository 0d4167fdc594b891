//! The admin service's moves out of quarantine with their audit rows (table `admin_actions`,
//! orders-svc migration 0004), each in one transaction. The outbox's own statements (listings,
//! the moves themselves) are the relay library's ([`outbox_relay::operator::Operator`]).

use sqlx::{PgConnection, PgPool, Postgres, Transaction};

use outbox_relay::{error::Error, operator::Operator};

/// Every admin mutation takes this transaction-scoped advisory lock first, so that two operators
/// acting on the same rows at once see each other's result (one moves the row, the other finds
/// the audit row and answers "already done") instead of a row that is in neither state.
const ADMIN_LOCK_KEY: i64 = 0x72_656c_6179_6164; // "relayad"

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
async fn resolve(
    op: &Operator,
    conn: &mut PgConnection,
    action: &str,
    sel: &Selector,
) -> Result<Moved, Error> {
    let present = match sel {
        Selector::Seqs(seqs) => op.quarantined_seqs(conn, seqs).await?,
        Selector::Order(id) => op.quarantined_seqs_of(conn, *id).await?,
    };
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

/// What an operator does with quarantined rows.
#[derive(Debug, Clone, Copy)]
pub enum Move {
    /// Back into the outbox, with their seqs (see orders-svc's migration 0002).
    Requeue,
    /// Gone for good, their content (payload hex-encoded) kept in the audit row.
    Drop,
}

/// Moves the selected rows out of quarantine as `action` says and writes the audit row, in `tx`.
/// Nothing moves when any seq is unknown.
pub async fn move_quarantined(
    action: Move,
    op: &Operator,
    tx: &mut PgConnection,
    sel: &Selector,
    reason: &str,
    operator: Option<&str>,
) -> Result<Moved, Error> {
    let name = match action {
        Move::Requeue => "RequeueQuarantined",
        Move::Drop => "DropQuarantined",
    };
    let mut found = resolve(op, tx, name, sel).await?;
    if !found.unknown.is_empty() || found.done.is_empty() {
        return Ok(found);
    }
    let rows = match action {
        Move::Requeue => {
            found.done = op.requeue(tx, &found.done).await?;
            None
        }
        Move::Drop => {
            let (seqs, rows) = op.drop(tx, &found.done).await?;
            found.done = seqs;
            Some(rows)
        }
    };
    audit(tx, name, &found.done, reason, operator, sel, rows).await?;
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
    let detail = serde_json::Value::Object(detail);
    outbox_kit::admin::audit(tx, action, ids, reason, operator, detail)
        .await
        .map(drop)
        .map_err(Error::from_db)
}
