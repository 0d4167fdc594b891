//! The inbox's statements, built once per [`Inbox`](crate::Inbox) from its table names.

use std::collections::HashMap;

use sqlx::{AssertSqlSafe, PgConnection, SqlSafeStr, SqlStr};

use crate::{Chain, Held, Tables};

/// The SQL of every statement, for one set of tables.
#[derive(Debug, Clone)]
pub(crate) struct Sql {
    watermark: SqlStr,
    set_watermark: SqlStr,
    hold: SqlStr,
    take_successor: SqlStr,
    state: SqlStr,
    held_count: SqlStr,
    held_chains: SqlStr,
    pub(crate) progress: String,
    pub(crate) held: String,
    pub(crate) column: String,
}

fn sql(s: String) -> SqlStr {
    AssertSqlSafe(s).into_sql_str()
}

impl Sql {
    pub(crate) fn new(t: &Tables) -> Self {
        let (p, h, a) = (t.progress(), t.held(), t.aggregate_column());
        Self {
            watermark: sql(format!(
                "select last_seq from {p} where shard = $1 and aggregate_type = $2 and {a} = $3"
            )),
            set_watermark: sql(format!(
                "insert into {p} (shard, aggregate_type, {a}, last_seq) values ($1, $2, $3, $4)
                 on conflict (shard, aggregate_type, {a})
                 do update set last_seq = excluded.last_seq"
            )),
            hold: sql(format!(
                "insert into {h} (shard, aggregate_type, {a}, seq, prev_seq, event, traceparent)
                 values ($1, $2, $3, $4, $5, $6, $7)
                 on conflict (shard, seq) do nothing"
            )),
            // The lowest seq if a faulty producer forked the chain.
            take_successor: sql(format!(
                "delete from {h}
                  where shard = $1
                    and seq = (select seq from {h}
                                where shard = $1 and aggregate_type = $2 and {a} = $3
                                  and prev_seq = $4
                                order by seq limit 1)
                 returning seq, prev_seq, event, traceparent"
            )),
            // One snapshot, taken after the locks: each chain's watermark and held events.
            state: sql(format!(
                "select o.shard, o.type, o.id, p.last_seq, h.seq, h.prev_seq, h.event,
                        h.traceparent
                   from unnest($1::integer[], $2::text[], $3::bigint[]) as o(shard, type, id)
                   left join {p} p
                     on p.shard = o.shard and p.aggregate_type = o.type and p.{a} = o.id
                   left join {h} h
                     on h.shard = o.shard and h.aggregate_type = o.type and h.{a} = o.id"
            )),
            held_count: sql(format!(
                "select count(*) from {h} where shard = $1 and aggregate_type = $2 and {a} = $3"
            )),
            held_chains: sql(format!(
                "select distinct shard, aggregate_type from {h} where {a} = $1 order by 1, 2"
            )),
            progress: p.to_owned(),
            held: h.to_owned(),
            column: a.to_owned(),
        }
    }
}

/// Serialises every transaction that touches `aggregate_id` (across all consumers) until it
/// ends: the watermark read, the decision and the watermark write must not interleave with
/// another delivery of the same aggregate. A transaction-scoped advisory lock also covers an
/// aggregate that has no watermark row yet (a `for update` would lock nothing).
pub(crate) async fn lock(conn: &mut PgConnection, aggregate_id: i64) -> Result<(), sqlx::Error> {
    sqlx::query("select pg_advisory_xact_lock($1)")
        .bind(aggregate_id)
        .execute(conn)
        .await?;
    Ok(())
}

/// Takes the locks of `ids` (see [`lock`]) in ONE statement. `ids` must be sorted and distinct:
/// the function scan over the array yields its elements in array order, so every transaction
/// takes its locks in ascending order and two batches that share aggregates wait for each other
/// instead of deadlocking.
pub(crate) async fn lock_all(conn: &mut PgConnection, ids: &[i64]) -> Result<(), sqlx::Error> {
    debug_assert!(ids.windows(2).all(|w| w[0] < w[1]));
    sqlx::query("select count(pg_advisory_xact_lock(id)) from unnest($1::bigint[]) as t(id)")
        .bind(ids)
        .execute(conn)
        .await?;
    Ok(())
}

impl Sql {
    pub(crate) async fn watermark(
        &self,
        conn: &mut PgConnection,
        chain: &Chain,
    ) -> Result<Option<i64>, sqlx::Error> {
        sqlx::query_scalar(self.watermark.clone())
            .bind(chain.shard)
            .bind(&chain.aggregate_type)
            .bind(chain.aggregate_id)
            .fetch_optional(conn)
            .await
    }

    pub(crate) async fn set_watermark(
        &self,
        conn: &mut PgConnection,
        chain: &Chain,
        seq: i64,
    ) -> Result<(), sqlx::Error> {
        sqlx::query(self.set_watermark.clone())
            .bind(chain.shard)
            .bind(&chain.aggregate_type)
            .bind(chain.aggregate_id)
            .bind(seq)
            .execute(conn)
            .await?;
        Ok(())
    }

    /// False when the seq is held already (a duplicate delivery of a held event).
    pub(crate) async fn hold(
        &self,
        conn: &mut PgConnection,
        chain: &Chain,
        held: &Held,
    ) -> Result<bool, sqlx::Error> {
        let done = sqlx::query(self.hold.clone())
            .bind(chain.shard)
            .bind(&chain.aggregate_type)
            .bind(chain.aggregate_id)
            .bind(held.seq)
            .bind(held.prev_seq)
            .bind(&held.payload)
            .bind(held.traceparent.as_deref())
            .execute(conn)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    pub(crate) async fn take_successor(
        &self,
        conn: &mut PgConnection,
        chain: &Chain,
        prev_seq: i64,
    ) -> Result<Option<Held>, sqlx::Error> {
        let row: Option<(i64, i64, Vec<u8>, Option<String>)> =
            sqlx::query_as(self.take_successor.clone())
                .bind(chain.shard)
                .bind(&chain.aggregate_type)
                .bind(chain.aggregate_id)
                .bind(prev_seq)
                .fetch_optional(conn)
                .await?;
        Ok(row.map(|(seq, prev_seq, payload, traceparent)| Held {
            seq,
            prev_seq,
            payload,
            traceparent,
        }))
    }

    pub(crate) async fn held_count(
        &self,
        conn: &mut PgConnection,
        chain: &Chain,
    ) -> Result<i64, sqlx::Error> {
        sqlx::query_scalar(self.held_count.clone())
            .bind(chain.shard)
            .bind(&chain.aggregate_type)
            .bind(chain.aggregate_id)
            .fetch_one(conn)
            .await
    }

    pub(crate) async fn held_chains(
        &self,
        conn: &mut PgConnection,
        aggregate_id: i64,
    ) -> Result<Vec<(i32, String)>, sqlx::Error> {
        sqlx::query_as(self.held_chains.clone())
            .bind(aggregate_id)
            .fetch_all(conn)
            .await
    }

    /// Each chain's watermark (absent: none yet) and held events, in one statement.
    pub(crate) async fn state(
        &self,
        conn: &mut PgConnection,
        chains: &[Chain],
    ) -> Result<(HashMap<Chain, i64>, HashMap<Chain, Vec<Held>>), sqlx::Error> {
        type Row = (
            i32,
            String,
            i64,
            Option<i64>,
            Option<i64>,
            Option<i64>,
            Option<Vec<u8>>,
            Option<String>,
        );
        let shards: Vec<i32> = chains.iter().map(|c| c.shard).collect();
        let types: Vec<&str> = chains.iter().map(|c| c.aggregate_type.as_str()).collect();
        let ids: Vec<i64> = chains.iter().map(|c| c.aggregate_id).collect();
        let rows: Vec<Row> = sqlx::query_as(self.state.clone())
            .bind(&shards)
            .bind(&types)
            .bind(&ids)
            .fetch_all(conn)
            .await?;
        let mut watermarks = HashMap::new();
        let mut held: HashMap<Chain, Vec<Held>> = HashMap::new();
        for (shard, aggregate_type, id, last_seq, seq, prev_seq, payload, traceparent) in rows {
            let chain = Chain::new(shard, aggregate_type, id);
            if let Some(w) = last_seq {
                watermarks.insert(chain.clone(), w);
            }
            if let (Some(seq), Some(prev_seq), Some(payload)) = (seq, prev_seq, payload) {
                held.entry(chain).or_default().push(Held {
                    seq,
                    prev_seq,
                    payload,
                    traceparent,
                });
            }
        }
        Ok((watermarks, held))
    }
}
