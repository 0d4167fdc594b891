//! The relay's SQL: reading and deleting outbox rows, backlog figures, and the leader lock.
//!
//! The read rule: read whatever rows are present in seq order, delete exactly the confirmed
//! seqs. Never a `seq > last` high-water mark, never `seq <= last` (rows commit out of seq
//! order). Reads start at the read floor (see [`crate::floor`]): below it every row is relayed
//! except a few holes read by key, so a read never walks the rows already relayed (dead rows
//! that a pinned xmin horizon keeps from vacuum). The statements are built once per outbox table
//! ([`Queries::new`]).

use chrono::{DateTime, Utc};
use outbox::{TableName, wire};
use sqlx::{
    AssertSqlSafe, FromRow, PgConnection, PgPool, Row,
    postgres::{PgConnectOptions, PgRow},
};

use crate::error::Error;

/// The advisory-lock key the active relay of table `outbox` holds (any 64-bit constant;
/// "relay-svc" in ASCII). Advisory locks are per database, so one leader per database and key.
pub const LEADER_LOCK_KEY: i64 = 0x72_656c_6179_7376;

/// The statements for one outbox table.
#[derive(Debug, Clone)]
pub struct Queries {
    fetch_batch: String,
    collect_holes: String,
    persist_floor: String,
    oldest_writer: String,
    quarantine: String,
    quarantined: String,
    delete: String,
    delete_only: String,
    backlog: String,
    roll_published: String,
    /// The table the statements are built for (the fenced ones are built from it again).
    table: TableName,
    /// Whether the delete moves rows into `T_published` (see [`Queries::without_published`]).
    keeps_published: bool,
    /// Set by [`Queries::fenced`]: the epoch a fleet relay's deletes and quarantine moves
    /// must find in the outbox database's fence.
    fence: Option<i64>,
}

impl Queries {
    /// The statements for the outbox `table` (made by the `outbox` crate). The delete of
    /// published rows moves them into `T_published` ([`TableName::published`]), unless
    /// [`Queries::without_published`].
    pub fn new(table: &TableName) -> Self {
        let (events, quarantine, published) =
            (table.events(), table.quarantine(), table.published());
        let (floor, holes) = (table.read_floor(), table.holes());
        let columns = "o.seq, o.aggregate_type, o.aggregate_id, o.event_type, o.prev_seq, \
                       o.routing_key, o.content_type, o.headers::text as headers, o.payload, \
                       o.traceparent, o.created_at";
        // The quarantined aggregates as one array computed before the walk (an init plan): the
        // walk then reads one table in seq order and stops after the batch, whatever the
        // statistics say (a join could be planned as a scan of the whole table and a sort).
        let unheld = format!(
            "o.aggregate_id <> all($2) \
             and o.seq <> all($3) \
             and o.aggregate_id <> all(array(select aggregate_id from {quarantine}))"
        );
        Self {
            // One statement, one snapshot, one round trip on the path from a commit to its
            // publish: the look at the database (`l`: see floor::Floor::observe) and the batch.
            //
            // The look: its oldest running transaction id, the last seq handed out, a fresh id
            // of our own (greater than every id handed out before), and which holes are still
            // present or in quarantine (a row moves between the two atomically, so one snapshot
            // sees it in exactly one); `present` comes with the first row only.
            //
            // The batch: two index walks merged, the holes by key and the rows from the floor on
            // (each part ordered and limited on its own, so neither reads past what the batch can
            // take). Joined `on true` to the look's one row: an empty batch is one row of nulls.
            fetch_batch: format!(
                "select l.xmin, l.xid, l.handed_out, \
                        case when b.n is null or b.n = 1 then l.present end as present, b.* \
                 from (select pg_snapshot_xmin(pg_current_snapshot())::text::bigint as xmin, \
                              coalesce(pg_sequence_last_value( \
                                  pg_get_serial_sequence('{events}', 'seq')::regclass), 0) \
                                as handed_out, \
                              pg_current_xact_id()::text::bigint as xid, \
                              array(select seq from {events} where seq = any($4) \
                                    union select seq from {quarantine} where seq < $5) \
                                as present) l \
                 left join ( \
                   select row_number() over (order by u.seq) as n, u.* from ( \
                     (select {columns} from {events} o where o.seq = any($4) and {unheld}) \
                     union all \
                     (select {columns} from {events} o where o.seq >= $5 and {unheld} \
                      order by o.seq limit $1) \
                   ) u order by u.seq limit $1 \
                 ) b on true \
                 order by b.seq"
            ),
            // The rows the floor passes that are still present become holes (walks the rows
            // relayed since the floor's last move, once), and so do the quarantined seqs it
            // passes: an operator may move one back (in one snapshot, a row is in exactly one of
            // the two tables).
            collect_holes: format!(
                "with passed as (select seq from {events} where seq >= $1 and seq < $2 \
                                 union all \
                                 select seq from {quarantine} where seq >= $1 and seq < $2), \
                      kept as (insert into {holes} (seq) select seq from passed \
                               on conflict do nothing) \
                 select coalesce(array_agg(seq), '{{}}') from passed"
            ),
            // After the holes are in (a reader of the figures never sees the floor above a
            // hole it cannot see); setval writes in place, no dead row per move.
            persist_floor: format!(
                "with pruned as (delete from {holes} where seq <> all($2)) \
                 select setval('{floor}', $1)"
            ),
            // The transaction holding the oldest running id (cluster-wide, like the horizon the
            // floor waits for): age of its transaction, pid, database.
            oldest_writer: "select extract(epoch from clock_timestamp() - xact_start)::float8, \
                                   pid, coalesce(datname, '') \
                            from pg_stat_activity \
                            where backend_xid is not null and pid <> pg_backend_pid() \
                              and xact_start is not null \
                            order by age(backend_xid) desc limit 1"
                .to_owned(),
            quarantine: format!(
                "with why as (select * from unnest($1::bigint[], $2::text[]) as w(seq, reason)), \
                      moved as ( \
                        delete from {events} o using why where o.seq = why.seq \
                        returning o.seq, o.aggregate_type, o.aggregate_id, o.event_type, \
                                  o.prev_seq, o.routing_key, o.content_type, o.headers, \
                                  o.payload, o.traceparent, o.created_at, why.reason) \
                 insert into {quarantine} \
                   (seq, aggregate_type, aggregate_id, event_type, prev_seq, routing_key, \
                    content_type, headers, payload, traceparent, created_at, reason) \
                 select * from moved"
            ),
            quarantined: format!("select count(*) from {quarantine}"),
            // One statement: a row leaves the outbox and enters the published rows together.
            delete: format!(
                "with gone as (delete from {events} where seq = any($1) \
                               returning seq, aggregate_type, aggregate_id, event_type, \
                                         prev_seq, routing_key, content_type, headers, \
                                         payload, traceparent, created_at) \
                 insert into {published} \
                   (seq, aggregate_type, aggregate_id, event_type, prev_seq, routing_key, \
                    content_type, headers, payload, traceparent, created_at, published_at) \
                 select *, clock_timestamp() from gone"
            ),
            delete_only: format!("delete from {events} where seq = any($1)"),
            roll_published: format!(
                "select * from {}(make_interval(secs => $1))",
                table.published_roll()
            ),
            // From the persisted floor on, plus the holes below it (as an array: looked up by
            // key, never joined against the table): O(backlog), never the rows already relayed.
            backlog: format!(
                "select (select count(*) from {events} where seq >= f.floor) \
                      + (select count(*) from {events} \
                         where seq = any(array(select seq from {holes} where seq < f.floor))), \
                        least((select created_at from {events} where seq >= f.floor \
                               order by seq limit 1), \
                              (select min(created_at) from {events} \
                               where seq = any(array(select seq from {holes} where seq < f.floor)))) \
                 from (select last_value as floor from {floor}) f"
            ),
            table: table.clone(),
            keeps_published: true,
            fence: None,
        }
    }
}

impl Queries {
    /// The same statements, except that the delete keeps no published rows (a relay with no
    /// retention window).
    pub fn without_published(mut self) -> Self {
        self.delete = std::mem::take(&mut self.delete_only);
        self.keeps_published = false;
        self
    }

    /// The same statements with the delete and the quarantine move fenced at `epoch` (a fleet
    /// relay's, see [`crate::fleet::fence`]): each takes effect only while the outbox database's
    /// fence row holds `epoch`, checked in the same statement under a `for share` lock of the
    /// row. A newer owner's `fence::take` waits for a fenced statement in flight, and one that
    /// starts after the take finds the row moved on and changes nothing.
    pub fn fenced(mut self, epoch: i64) -> Self {
        let (events, quarantine, published) = (
            self.table.events(),
            self.table.quarantine(),
            self.table.published(),
        );
        let fence = crate::fleet::fence::table(&self.table);
        // `materialized`: the fence row is read (and share-locked) once, before any effect.
        let held = format!(
            "f as materialized (select epoch from {fence} where id and epoch = $2 for share)"
        );
        let columns = "seq, aggregate_type, aggregate_id, event_type, prev_seq, routing_key, \
                       content_type, headers, payload, traceparent, created_at";
        self.delete = if self.keeps_published {
            format!(
                "with {held}, \
                      gone as (delete from {events} where seq = any($1) and exists (select from f) \
                               returning {columns}), \
                      kept as (insert into {published} ({columns}, published_at) \
                               select *, clock_timestamp() from gone returning 1) \
                 select exists (select from f), (select count(*) from kept)"
            )
        } else {
            format!(
                "with {held}, \
                      gone as (delete from {events} where seq = any($1) and exists (select from f) \
                               returning 1) \
                 select exists (select from f), (select count(*) from gone)"
            )
        };
        self.quarantine = format!(
            "with {held}, \
                  why as (select * from unnest($1::bigint[], $3::text[]) as w(seq, reason)), \
                  moved as ( \
                    delete from {events} o using why \
                     where o.seq = why.seq and exists (select from f) \
                    returning o.seq, o.aggregate_type, o.aggregate_id, o.event_type, \
                              o.prev_seq, o.routing_key, o.content_type, o.headers, \
                              o.payload, o.traceparent, o.created_at, why.reason), \
                  kept as (insert into {quarantine} ({columns}, reason) \
                           select * from moved returning 1) \
             select exists (select from f), (select count(*) from kept)"
        );
        self.fence = Some(epoch);
        self
    }
}

/// One outbox row.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct OutboxRow {
    /// The event's sequence number (unique in the outbox, the message's `message_id`).
    pub seq: i64,
    /// What kind of aggregate the event belongs to (e.g. `order`).
    pub aggregate_type: String,
    /// The aggregate's id; its events form one chain.
    pub aggregate_id: i64,
    /// The event's type (the message's `type` property).
    pub event_type: String,
    /// The seq of the aggregate's previous event; `None` for its first.
    pub prev_seq: Option<i64>,
    /// Set by every writer using the `outbox` crate; `None` for a row written otherwise (by
    /// hand, or by a writer of an older shape), which [`EnvelopeEncoder`] refuses.
    ///
    /// [`EnvelopeEncoder`]: crate::publisher::EnvelopeEncoder
    pub routing_key: Option<String>,
    /// The payload's content type (`None`: protobuf).
    pub content_type: Option<String>,
    /// Extra headers, a JSON object of strings.
    pub headers: Option<String>,
    /// The caller's payload.
    pub payload: Vec<u8>,
    /// The W3C `traceparent` of the writer's span, if it had one.
    pub traceparent: Option<String>,
    /// When the writer appended the event.
    pub created_at: DateTime<Utc>,
}

impl OutboxRow {
    /// The trace context stored with the row: `traceparent` and the `tracestate` header.
    pub fn trace(&self) -> Option<outbox::trace::TraceHeaders> {
        let traceparent = self.traceparent.as_deref()?;
        let headers = self
            .headers
            .as_deref()
            .and_then(|h| wire::parse_headers(h).ok());
        let tracestate = headers
            .as_ref()
            .and_then(|h| h.get(wire::HEADER_TRACESTATE))
            .map(String::as_str);
        outbox::trace::TraceHeaders::parse(traceparent, tracestate)
    }
}

#[cfg_attr(not(feature = "unstable-internals"), allow(dead_code))] // for tests, through the feature
impl Queries {
    /// The statement of [`fetch_batch`] (`$1` limit, `$2` orders left out, `$3` seqs left out,
    /// `$4` holes, `$5` floor), for a test to `EXPLAIN` exactly what the relay runs.
    pub fn fetch_batch_sql(&self) -> &str {
        &self.fetch_batch
    }

    /// The statement of [`backlog`] (no parameters), for a test to `EXPLAIN`.
    pub fn backlog_sql(&self) -> &str {
        &self.backlog
    }
}

/// Where a read starts: the floor, and the rows below it still to read (by key).
#[derive(Debug, Clone, Copy)]
pub struct ReadFrom<'a> {
    /// Every row below it is relayed, except the holes.
    pub floor: i64,
    /// Rows below the floor that may still be present.
    pub holes: &'a [i64],
}

#[cfg_attr(not(feature = "unstable-internals"), allow(dead_code))] // for tests, through the feature
impl ReadFrom<'_> {
    /// The whole table (a new leader's first read; the walk of the head the floor then avoids).
    pub const START: ReadFrom<'static> = ReadFrom {
        floor: 1,
        holes: &[],
    };
}

/// The oldest `limit` rows present, leaving out the orders in `skip_orders` (a returned or
/// nacked event waits for its retry, or the order has an event in the batch being published
/// right now), the seqs in `skip_seqs` (confirmed, but their delete failed and waits for a
/// retry) and every order with a row in quarantine (its later events wait for an operator).
/// Rows that commit later with a smaller seq are simply found by a later read; that is why there
/// is no `where seq > $last`. Leaving the stuck orders out *in the query* is what keeps a few
/// hundred of them at the head of the table from filling every batch. Rows below `from.floor`
/// are read only by key (`from.holes`).
pub async fn fetch_batch(
    q: &Queries,
    pool: &PgPool,
    limit: u32,
    skip_orders: &[i64],
    skip_seqs: &[i64],
    from: ReadFrom<'_>,
) -> Result<Read, Error> {
    let found = sqlx::query(AssertSqlSafe(q.fetch_batch.as_str()))
        .bind(i64::from(limit))
        .bind(skip_orders)
        .bind(skip_seqs)
        .bind(from.holes)
        .bind(from.floor)
        .fetch_all(pool)
        .await
        .map_err(Error::from_db)?;
    let decode = |found: Vec<PgRow>| -> Result<Read, sqlx::Error> {
        let first = found.first().ok_or(sqlx::Error::RowNotFound)?;
        let look = Observation {
            xmin: first.try_get("xmin")?,
            xid: first.try_get("xid")?,
            handed_out: first.try_get("handed_out")?,
        };
        let present: Vec<i64> = first
            .try_get::<Option<Vec<i64>>, _>("present")?
            .unwrap_or_default();
        let mut rows = Vec::with_capacity(found.len());
        for row in &found {
            if row.try_get::<Option<i64>, _>("seq")?.is_some() {
                rows.push(OutboxRow::from_row(row)?);
            }
        }
        Ok(Read {
            look,
            present,
            rows,
        })
    };
    decode(found).map_err(Error::from_db)
}

/// What one read found: the look at the database, the holes still present (or in
/// quarantine), and the batch.
#[derive(Debug, Clone)]
pub struct Read {
    /// What the read floor moves by (see [`crate::floor`]).
    pub look: Observation,
    /// Which of the read's holes are still present or in quarantine, with the quarantine's other
    /// seqs below the floor (an operator may move them back).
    pub present: Vec<i64>,
    /// The batch, in seq order.
    pub rows: Vec<OutboxRow>,
}

/// Moves rows that can never be encoded into `outbox_quarantine` with their reason, in one
/// statement (a crash leaves each row in exactly one of the two tables). Their orders' later
/// events stay in the outbox, left out by [`fetch_batch`], until an operator moves the row back
/// (see orders-svc's migration 0002). Returns how many rows moved (fewer when another instance
/// moved them first).
pub async fn quarantine(q: &Queries, pool: &PgPool, rows: &[(i64, String)]) -> Result<u64, Error> {
    let (seqs, reasons): (Vec<i64>, Vec<String>) = rows.iter().cloned().unzip();
    if let Some(epoch) = q.fence {
        let query = sqlx::query_as(AssertSqlSafe(q.quarantine.as_str()))
            .bind(&seqs)
            .bind(epoch)
            .bind(&reasons);
        return fenced(query, pool, epoch).await;
    }
    let done = sqlx::query(AssertSqlSafe(q.quarantine.as_str()))
        .bind(&seqs)
        .bind(&reasons)
        .execute(pool)
        .await
        .map_err(Error::from_db)?;
    Ok(done.rows_affected())
}

/// Rows in quarantine (each one holds back its order).
pub async fn quarantined(q: &Queries, pool: &PgPool) -> Result<u64, Error> {
    let n: i64 = sqlx::query_scalar(AssertSqlSafe(q.quarantined.as_str()))
        .fetch_one(pool)
        .await
        .map_err(Error::from_db)?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// Deletes exactly the seqs the broker confirmed (and that no earlier failure of their order
/// holds back), in one statement per batch. Returns how many rows went away (fewer when another
/// instance got there first).
pub async fn delete<'c>(
    q: &Queries,
    pool: impl sqlx::PgExecutor<'c>,
    seqs: &[i64],
) -> Result<u64, Error> {
    if let Some(epoch) = q.fence {
        let query = sqlx::query_as(AssertSqlSafe(q.delete.as_str()))
            .bind(seqs)
            .bind(epoch);
        return fenced(query, pool, epoch).await;
    }
    let done = sqlx::query(AssertSqlSafe(q.delete.as_str()))
        .bind(seqs)
        .execute(pool)
        .await
        .map_err(Error::from_db)?;
    Ok(done.rows_affected())
}

/// Runs a fenced statement (see [`Queries::fenced`]): how many rows it moved, or
/// [`Error::Fenced`] when the fence no longer holds `epoch` (then it moved none).
async fn fenced<'q, 'c>(
    query: sqlx::query::QueryAs<'q, sqlx::Postgres, (bool, i64), sqlx::postgres::PgArguments>,
    pool: impl sqlx::PgExecutor<'c>,
    epoch: i64,
) -> Result<u64, Error> {
    let (held, moved) = query.fetch_one(pool).await.map_err(Error::from_db)?;
    if !held {
        return Err(Error::Fenced { epoch });
    }
    Ok(u64::try_from(moved).unwrap_or(0))
}

/// The published rows (`T_published`) of one aggregate with seqs from `from` to `to`
/// (inclusive), in seq order: what [`crate::replay`] sends again. One walk of the index by
/// (aggregate_type, aggregate_id, seq) per day partition.
pub async fn published_of(
    table: &TableName,
    pool: &PgPool,
    aggregate_type: &str,
    aggregate_id: i64,
    (from, to): (i64, i64),
) -> Result<Vec<OutboxRow>, Error> {
    let sql = format!(
        "select seq, aggregate_type, aggregate_id, event_type, prev_seq, routing_key, \
                content_type, headers::text as headers, payload, traceparent, created_at \
           from {} \
          where aggregate_type = $1 and aggregate_id = $2 and seq between $3 and $4 \
          order by seq",
        table.published()
    );
    sqlx::query_as(AssertSqlSafe(sql))
        .bind(aggregate_type)
        .bind(aggregate_id)
        .bind(from)
        .bind(to)
        .fetch_all(pool)
        .await
        .map_err(Error::from_db)
}

/// Creates the coming days' partitions of the published rows and drops those older than
/// `keep` (`T_published_roll`); returns what it did (`created T_published_p20261203`, ...).
pub async fn roll_published(
    q: &Queries,
    pool: &PgPool,
    keep: std::time::Duration,
) -> Result<Vec<String>, Error> {
    sqlx::query_scalar(AssertSqlSafe(q.roll_published.as_str()))
        .bind(keep.as_secs_f64())
        .fetch_all(pool)
        .await
        .map_err(Error::from_db)
}

/// One look at the database, taken by every read ([`fetch_batch`]): what the read floor moves
/// by (see [`crate::floor`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Observation {
    /// The oldest transaction id still running (every id below it has ended).
    pub xmin: i64,
    /// A fresh transaction id of the relay's own, greater than every id handed out before.
    pub xid: i64,
    /// The last seq the outbox's sequence handed out (0: none).
    pub handed_out: i64,
}

/// Records the rows present in `[from, to)` as holes and returns them.
pub async fn collect_holes(
    q: &Queries,
    pool: &PgPool,
    from: i64,
    to: i64,
) -> Result<Vec<i64>, Error> {
    sqlx::query_scalar(AssertSqlSafe(q.collect_holes.as_str()))
        .bind(from)
        .bind(to)
        .fetch_one(pool)
        .await
        .map_err(Error::from_db)
}

/// Persists the floor for every instance's figures, dropping the recorded holes not in `holes`.
pub async fn persist_floor(
    q: &Queries,
    pool: &PgPool,
    floor: i64,
    holes: &[i64],
) -> Result<(), Error> {
    sqlx::query(AssertSqlSafe(q.persist_floor.as_str()))
        .bind(floor)
        .bind(holes)
        .execute(pool)
        .await
        .map_err(Error::from_db)
        .map(|_| ())
}

/// The transaction holding the oldest running transaction id, if any.
#[derive(Debug, Clone, PartialEq)]
pub struct OldestWriter {
    /// How long its transaction has been open, seconds.
    pub age_secs: f64,
    /// Its backend's process id.
    pub pid: i32,
    /// Its database (the horizon is cluster-wide).
    pub database: String,
}

/// The transaction holding the oldest running transaction id (what holds the floor back).
pub async fn oldest_writer(q: &Queries, pool: &PgPool) -> Result<Option<OldestWriter>, Error> {
    let row: Option<(Option<f64>, i32, String)> =
        sqlx::query_as(AssertSqlSafe(q.oldest_writer.as_str()))
            .fetch_optional(pool)
            .await
            .map_err(Error::from_db)?;
    Ok(row.map(|(age, pid, database)| OldestWriter {
        age_secs: age.unwrap_or(0.0),
        pid,
        database,
    }))
}

/// Backlog figures: unsent rows and the creation time of the oldest one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Backlog {
    /// Rows waiting to be published (quarantined rows not counted).
    pub rows: u64,
    /// When the oldest of them was appended.
    pub oldest: Option<DateTime<Utc>>,
}

/// Counts the outbox from the floor the leading relay persisted (plus the holes below it), so
/// the cost follows the backlog, not the rows relayed before; under a large backlog the relay
/// calls it at most once per cycle.
pub async fn backlog(q: &Queries, pool: &PgPool) -> Result<Backlog, Error> {
    let mut tx = pool.begin().await.map_err(Error::from_db)?;
    index_walks_only(&mut tx).await?;
    let (rows, oldest): (i64, Option<DateTime<Utc>>) =
        sqlx::query_as(AssertSqlSafe(q.backlog.as_str()))
            .fetch_one(&mut *tx)
            .await
            .map_err(Error::from_db)?;
    tx.commit().await.map_err(Error::from_db)?;
    Ok(Backlog {
        rows: u64::try_from(rows).unwrap_or(0),
        oldest,
    })
}

/// Plans for the rest of the transaction `tx` walk an index, never the whole table: a count from
/// the floor must cost the backlog whether or not the table has statistics yet (without them the
/// planner guesses a third of the table and may scan all of it, dead rows included).
///
/// JIT goes off with it: the seq scan left in the plan (the floor's one-row sequence) carries
/// the planner's penalty cost, far above `jit_above_cost`, and compiling that plan would take
/// longer (≈ 200 ms) than running it (< 1 ms).
pub async fn index_walks_only(tx: &mut PgConnection) -> Result<(), Error> {
    sqlx::query("select set_config('enable_seqscan', 'off', true), set_config('jit', 'off', true)")
        .execute(tx)
        .await
        .map_err(Error::from_db)
        .map(|_| ())
}

/// The server side of the lock connection sends TCP keepalives, so that PostgreSQL itself ends
/// the session (and the lock) of a leader whose host vanished in about 5 + 3 × 2 = 11 s rather
/// than after the kernel default of over two hours. (Ignored on a Unix socket.)
const LOCK_KEEPALIVES: [(&str, &str); 3] = [
    ("tcp_keepalives_idle", "5"),
    ("tcp_keepalives_interval", "2"),
    ("tcp_keepalives_count", "3"),
];

/// The options of the connection that holds the leader lock: the relay pool's options plus
/// keepalives.
pub fn lock_options(pg: &PgConnectOptions) -> PgConnectOptions {
    pg.clone().options(LOCK_KEEPALIVES)
}

/// Tries to take the leader lock on `conn` without waiting. A session-level lock: it is held
/// for as long as this connection lives, and released by PostgreSQL the moment the session
/// ends, which is what lets a standby take over from a leader that crashed or lost the network.
pub async fn try_lock(conn: &mut PgConnection, key: i64) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("select pg_try_advisory_lock($1)")
        .bind(key)
        .fetch_one(conn)
        .await
}

/// Proves the lock connection (and therefore the lock) is still alive. Each ping also moves the
/// session's `pg_stat_activity.state_change`, which is what standbys read as the lease.
pub async fn ping(conn: &mut PgConnection) -> Result<(), sqlx::Error> {
    sqlx::query("select 1").execute(conn).await.map(|_| ())
}

/// A leader session a standby terminated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Terminated {
    /// The terminated backend's process id.
    pub pid: i32,
    /// How long the session had been silent, seconds.
    pub idle_secs: f64,
}

/// Terminates the session holding the leader lock if it has not run a statement for longer than
/// `lease` (a frozen process, a vanished host): PostgreSQL releases the lock with the session.
/// A live leader pings at least every second, so it is never idle that long.
///
/// One statement, so the idle time is read and acted on together. `pg_locks` shows a bigint
/// advisory key as classid = high 32 bits, objid = low 32 bits, objsubid = 1. Needs the same
/// database role as the leader (or `pg_signal_backend` and `pg_read_all_stats`): for another
/// role's session `state_change` reads as null, and nothing is terminated.
pub async fn terminate_stale_leader(
    conn: &mut PgConnection,
    key: i64,
    lease: std::time::Duration,
) -> Result<Option<Terminated>, sqlx::Error> {
    let row: Option<(i32, f64, bool)> = sqlx::query_as(
        "select a.pid, \
                extract(epoch from clock_timestamp() - a.state_change)::float8, \
                pg_terminate_backend(a.pid, 5000) \
         from pg_locks l join pg_stat_activity a on a.pid = l.pid \
         where l.locktype = 'advisory' and l.granted and l.objsubid = 1 \
           and l.database = (select oid from pg_database where datname = current_database()) \
           and l.classid = $1::bigint::oid and l.objid = $2::bigint::oid \
           and a.pid <> pg_backend_pid() \
           and a.state_change < clock_timestamp() - make_interval(secs => $3)",
    )
    .bind(key >> 32)
    .bind(key & 0xffff_ffff)
    .bind(lease.as_secs_f64())
    .fetch_optional(conn)
    .await?;
    Ok(row.map(|(pid, idle_secs, _)| Terminated { pid, idle_secs }))
}
