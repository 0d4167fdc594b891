//! The operator's statements, for any outbox table: what is waiting (from the read floor on, as
//! the relay reads it), what is quarantined, and the two ways out of quarantine (back into the
//! outbox with its seq, or deleted for good). An admin service adds its own access control and
//! audit around them (relay-svc's admin writes `admin_actions`).

use sqlx::{PgConnection, PgPool, Postgres, Transaction, types::JsonValue};

use crate::{db, error::Error};

/// An outbox row waiting to be relayed, as listed (no payload).
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Unsent {
    /// The event's seq.
    pub seq: i64,
    /// Its aggregate (of the outbox's aggregate types).
    pub aggregate_id: i64,
    /// Its event type.
    pub event_type: String,
    /// The aggregate's previous event (`None` for its first).
    pub prev_seq: Option<i64>,
    /// Since it was appended.
    pub age_ms: i64,
}

/// A quarantined row as listed.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct Quarantined {
    /// The event's seq.
    pub seq: i64,
    /// Its aggregate (of the outbox's aggregate types).
    pub aggregate_id: i64,
    /// Its event type.
    pub event_type: String,
    /// The aggregate's previous event (`None` for its first).
    pub prev_seq: Option<i64>,
    /// Why the relay could not publish it.
    pub reason: String,
    /// Since it was appended.
    pub age_ms: i64,
    /// Since it was quarantined.
    pub quarantined_age_ms: i64,
    /// Later events of the aggregate waiting in the outbox.
    pub held_back: i64,
}

/// The statements for one outbox table (made by the `outbox` crate).
#[derive(Debug, Clone)]
pub struct Operator {
    oldest: String,
    counts: String,
    quarantined: String,
    seqs_present: String,
    seqs_of_aggregate: String,
    requeue: String,
    drop: String,
    notify_channel: String,
    /// The relay's own statements, for [`Operator::backlog`].
    queries: db::Queries,
}

impl Operator {
    /// The statements for outbox `table`.
    pub fn new(table: &outbox::TableName) -> Self {
        let (events, quarantine) = (table.events(), table.quarantine());
        let (floor, holes) = (table.read_floor(), table.holes());
        // The rows not yet relayed: from the relay's persisted floor on, plus the holes below it,
        // so that no listing walks the rows already relayed (which a pinned xmin horizon keeps
        // from vacuum).
        let unsent = format!(
            "with f as (select last_value as floor from {floor}),
                  unsent as (select o.* from {events} o, f where o.seq >= f.floor
                             union all
                             select o.* from {events} o, f
                              where o.seq = any(array(select seq from {holes} h
                                                       where h.seq < f.floor)))"
        );
        let age = |column: &str| {
            format!("(extract(epoch from clock_timestamp() - {column}) * 1000)::bigint")
        };
        Self {
            oldest: format!(
                "{unsent}
                 select seq, aggregate_id, event_type, prev_seq, {} as age_ms
                   from unsent order by seq limit $1",
                age("created_at")
            ),
            counts: format!(
                "{unsent}
                 select (select count(*) from {quarantine}),
                        (select count(*) from unsent o
                          where exists (select 1 from {quarantine} q
                                         where q.aggregate_id = o.aggregate_id))"
            ),
            quarantined: format!(
                "{unsent}
                 select q.seq, q.aggregate_id, q.event_type, q.prev_seq, q.reason,
                        {} as age_ms, {} as quarantined_age_ms,
                        (select count(*) from unsent o where o.aggregate_id = q.aggregate_id)
                          as held_back
                   from {quarantine} q
                  where $2::bigint is null or q.aggregate_id = $2
                  order by q.seq limit $1",
                age("q.created_at"),
                age("q.quarantined_at")
            ),
            seqs_present: format!("select seq from {quarantine} where seq = any($1) order by seq"),
            seqs_of_aggregate: format!(
                "select seq from {quarantine} where aggregate_id = $1 order by seq"
            ),
            // Back with their seqs: the relay reads them again (a requeued seq below the floor
            // is one of its holes).
            requeue: format!(
                "with r as (
                   delete from {quarantine} where seq = any($1)
                   returning seq, aggregate_id, event_type, prev_seq, payload, traceparent,
                             created_at, aggregate_type, routing_key, content_type, headers)
                 insert into {events} (seq, aggregate_id, event_type, prev_seq, payload,
                                       traceparent, created_at, aggregate_type, routing_key,
                                       content_type, headers)
                 overriding system value select * from r
                 returning seq"
            ),
            // What was deleted, every column (the payload hex-encoded), for the caller's record.
            drop: format!(
                "with d as (delete from {quarantine} where seq = any($1) returning *)
                 select coalesce(array_agg(seq order by seq), '{{}}'),
                        coalesce(jsonb_agg(jsonb_build_object(
                          'seq', seq, 'order_id', aggregate_id, 'type', event_type,
                          'prev_seq', prev_seq, 'payload_hex', encode(payload, 'hex'),
                          'traceparent', traceparent, 'created_at', created_at,
                          'aggregate_type', aggregate_type, 'routing_key', routing_key,
                          'content_type', content_type, 'headers', headers,
                          'quarantine_reason', reason, 'quarantined_at', quarantined_at)
                          order by seq), '[]')
                   from d"
            ),
            notify_channel: table.notify_channel(),
            queries: db::Queries::new(table),
        }
    }

    /// The backlog as the relay counts it for `GetStatus` and its metrics: rows waiting (not
    /// quarantined) and when the oldest was appended, counted from the read floor.
    pub async fn backlog(&self, pool: &PgPool) -> Result<crate::Backlog, Error> {
        db::backlog(&self.queries, pool).await
    }

    /// The oldest `limit` rows waiting to be relayed.
    pub async fn oldest_unsent(&self, pool: &PgPool, limit: i64) -> Result<Vec<Unsent>, Error> {
        sqlx::query_as(sqlx::AssertSqlSafe(self.oldest.as_str()))
            .bind(limit)
            .fetch_all(&mut *index_walks(pool).await?)
            .await
            .map_err(Error::from_db)
    }

    /// Quarantined rows, and rows waiting behind them (their aggregates' later events).
    pub async fn quarantine_counts(&self, pool: &PgPool) -> Result<(i64, i64), Error> {
        sqlx::query_as(sqlx::AssertSqlSafe(self.counts.as_str()))
            .fetch_one(&mut *index_walks(pool).await?)
            .await
            .map_err(Error::from_db)
    }

    /// The oldest `limit` quarantined rows, of one aggregate or all.
    pub async fn quarantined(
        &self,
        pool: &PgPool,
        limit: i64,
        aggregate_id: Option<i64>,
    ) -> Result<Vec<Quarantined>, Error> {
        sqlx::query_as(sqlx::AssertSqlSafe(self.quarantined.as_str()))
            .bind(limit)
            .bind(aggregate_id)
            .fetch_all(&mut *index_walks(pool).await?)
            .await
            .map_err(Error::from_db)
    }

    /// Which of `seqs` are quarantined now.
    pub async fn quarantined_seqs(
        &self,
        conn: &mut PgConnection,
        seqs: &[i64],
    ) -> Result<Vec<i64>, Error> {
        sqlx::query_scalar(sqlx::AssertSqlSafe(self.seqs_present.as_str()))
            .bind(seqs)
            .fetch_all(conn)
            .await
            .map_err(Error::from_db)
    }

    /// The quarantined seqs of one aggregate.
    pub async fn quarantined_seqs_of(
        &self,
        conn: &mut PgConnection,
        aggregate_id: i64,
    ) -> Result<Vec<i64>, Error> {
        sqlx::query_scalar(sqlx::AssertSqlSafe(self.seqs_of_aggregate.as_str()))
            .bind(aggregate_id)
            .fetch_all(conn)
            .await
            .map_err(Error::from_db)
    }

    /// Moves `seqs` from quarantine back into the outbox with their seqs, in the caller's
    /// transaction, and wakes the relays (the notification is delivered at commit). The seqs
    /// moved, in order.
    pub async fn requeue(&self, tx: &mut PgConnection, seqs: &[i64]) -> Result<Vec<i64>, Error> {
        let mut moved: Vec<i64> = sqlx::query_scalar(sqlx::AssertSqlSafe(self.requeue.as_str()))
            .bind(seqs)
            .fetch_all(&mut *tx)
            .await
            .map_err(Error::from_db)?;
        moved.sort_unstable();
        sqlx::query("select pg_notify($1, '')")
            .bind(&self.notify_channel)
            .execute(&mut *tx)
            .await
            .map_err(Error::from_db)?;
        Ok(moved)
    }

    /// Deletes `seqs` from quarantine for good, in the caller's transaction: the seqs deleted
    /// and their rows as JSON (every column, the payload hex-encoded), to keep as a record.
    pub async fn drop(
        &self,
        tx: &mut PgConnection,
        seqs: &[i64],
    ) -> Result<(Vec<i64>, JsonValue), Error> {
        sqlx::query_as(sqlx::AssertSqlSafe(self.drop.as_str()))
            .bind(seqs)
            .fetch_one(tx)
            .await
            .map_err(Error::from_db)
    }
}

/// A read-only transaction for the listings, planned as the relay plans its own figures
/// (`db::index_walks_only`): index walks from the floor, never a scan of the dead rows below
/// it, whether or not the table has statistics.
async fn index_walks(pool: &PgPool) -> Result<Transaction<'static, Postgres>, Error> {
    let mut tx = pool.begin().await.map_err(Error::from_db)?;
    db::index_walks_only(&mut tx).await?;
    Ok(tx)
}
