//! A transactional outbox for sqlx and PostgreSQL: append events inside your own transaction,
//! each aggregate's events chained by `prev_seq`, for a relay to publish after commit.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let pool = outbox::doctest_pool().await?;
//! use outbox::{NewEvent, Outbox};
//!
//! let outbox = Outbox::new("billing.outbox")?;
//! outbox.table().migrator().run(&pool).await?; // or paste table().migration_sql() into yours
//!
//! let mut tx = pool.begin().await?;
//! // ... your own writes in `tx` ...
//! let first = outbox
//!     .append(&mut tx, NewEvent::new("invoice", 7, "InvoiceIssued", "invoice.issued", b"{}".to_vec())
//!         .content_type("application/json"))
//!     .await?;
//! let second = outbox
//!     .append(&mut tx, NewEvent::new("invoice", 7, "InvoicePaid", "invoice.paid", b"{}".to_vec()))
//!     .await?;
//! tx.commit().await?;
//! outbox.notify(&pool).await?; // wake the relay now rather than at its next poll
//!
//! assert_eq!(first.prev_seq, None);
//! assert_eq!(second.prev_seq, Some(first.seq));
//! # sqlx::query("drop schema billing cascade").execute(&pool).await?;
//! # Ok(()) }
//! ```
//!
//! **The chain.** [`Outbox::append`] takes the aggregate's head row lock (`T_heads`) in the
//! caller's transaction, links the new event to the head, and moves the head. Two writers of one
//! aggregate therefore append one after the other, and an aggregate's events commit in seq order
//! with gap-free `prev_seq` links; a rolled-back transaction takes its events and its head move
//! with it. The head lives in its own table because relays delete published rows.
//!
//! **Locks.** An append holds the aggregate's head lock until the caller's transaction ends. Lock
//! your own rows first and the heads after (as [`Outbox::append_all`] does, in key order), so two
//! transactions touching the same aggregates wait for each other instead of deadlocking.
//!
//! **Reading.** Seqs are handed out before commit, so rows commit out of seq order: a reader must
//! read the rows present and delete exactly the seqs it published, never keep a `seq > last`
//! mark. The message format a relay gives a row is in [`wire`].
//!
//! **Traces.** An append stores the W3C trace context of the current `tracing` span (through
//! `tracing-opentelemetry`; [`NewEvent::trace`] overrides it) with the row: `traceparent` in its
//! column, `tracestate` among the headers. The relay's publish span continues it. Without the
//! OpenTelemetry layer in the subscriber nothing is stored; no exporter is needed either way.
//!
//! Layout: `schema` ([`TableName`]: names, migration), [`wire`] (envelope and headers), [`trace`] (W3C
//! trace context), [`rounds`] (the order of a batch's appends), and the append API here. What
//! the outbox crates share besides (retry pacing, secret URLs, broker failover, metric
//! declarations, the AMQP connection) is the `outbox-support` crate.
//!
//! ## Stable API
//!
//! What this version promises, changed only with a new version and a CHANGELOG line with the
//! signature before → after (`docs/public-api/outbox.txt` lists every item; CI holds the crate to
//! it, see `.ci/public-api.sh`): [`Outbox`], [`NewEvent`], [`Appended`], [`Error`], [`TableName`]
//! (the names, the migrations and their SQL), the modules [`rounds`], [`trace`], [`wire`] (the
//! message format), and the re-export of `sqlx`. Each item has one path. Nothing else is public, except `doctest_pool`, the
//! doctests' fresh database, behind the feature `unstable-internals` (no promise: it changes in any
//! version).

#![warn(missing_docs)]

// The foreign crate this API takes and returns, re-exported so a user's version always matches
// (two sqlxes in one build give baffling type errors).
pub use sqlx;

pub mod rounds;
mod schema;
pub mod trace;
pub mod wire;

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use sqlx::{AssertSqlSafe, PgConnection, PgExecutor};

pub use schema::TableName;

// The README's snippets are doctests too: they compile (the getting-started) or run against the
// test database, as the examples above do.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
mod readme_doctests {}

/// What can go wrong appending.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The outbox table name cannot be used.
    #[error("outbox table name {name:?}: {reason}")]
    InvalidTableName {
        /// The name given.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An event field cannot be stored (empty, reserved, malformed).
    #[error("outbox event field {field}: {reason}")]
    InvalidEvent {
        /// The [`NewEvent`] field.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// The database failed; the caller's transaction should be rolled back.
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

/// One event to append. Build it with [`NewEvent::new`] and the setters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEvent {
    aggregate_type: String,
    aggregate_id: i64,
    event_type: String,
    routing_key: String,
    content_type: String,
    payload: Vec<u8>,
    headers: BTreeMap<String, String>,
    trace: Option<trace::TraceHeaders>,
}

impl NewEvent {
    /// An event of `aggregate_type` / `aggregate_id` with its type, the routing key to publish
    /// it under, and the payload bytes (content type [`wire::CONTENT_TYPE_PROTOBUF`] unless set).
    pub fn new(
        aggregate_type: impl Into<String>,
        aggregate_id: i64,
        event_type: impl Into<String>,
        routing_key: impl Into<String>,
        payload: Vec<u8>,
    ) -> Self {
        Self {
            aggregate_type: aggregate_type.into(),
            aggregate_id,
            event_type: event_type.into(),
            routing_key: routing_key.into(),
            content_type: wire::CONTENT_TYPE_PROTOBUF.to_owned(),
            payload,
            headers: BTreeMap::new(),
            trace: None,
        }
    }

    /// The payload's content type (e.g. `application/json`).
    pub fn content_type(mut self, content_type: impl Into<String>) -> Self {
        self.content_type = content_type.into();
        self
    }

    /// An extra message header (a string). The names in [`wire::RESERVED_HEADERS`] are refused
    /// at append.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.insert(name.into(), value.into());
        self
    }

    /// The W3C trace context of the work that causes the event, instead of the current span's
    /// (which [`Outbox::append`] takes by default): for a writer that appends on behalf of
    /// callers whose spans are not current, such as a group commit. The relay publishes a
    /// child of it.
    pub fn trace(mut self, trace: trace::TraceHeaders) -> Self {
        self.trace = Some(trace);
        self
    }

    /// The aggregate this event belongs to: `(type, id)`, the key of its chain.
    pub fn aggregate(&self) -> (&str, i64) {
        (&self.aggregate_type, self.aggregate_id)
    }

    fn check(&self) -> Result<(), Error> {
        let invalid = |field, reason: &str| {
            Err(Error::InvalidEvent {
                field,
                reason: reason.to_owned(),
            })
        };
        for (field, value) in [
            ("aggregate_type", &self.aggregate_type),
            ("event_type", &self.event_type),
            ("routing_key", &self.routing_key),
            ("content_type", &self.content_type),
        ] {
            if value.trim().is_empty() {
                return invalid(field, "must not be empty");
            }
        }
        if let Some(name) = self
            .headers
            .keys()
            .find(|k| wire::RESERVED_HEADERS.contains(&k.as_str()))
        {
            return invalid("headers", &format!("{name:?} is set by the relay"));
        }
        Ok(())
    }

    /// The `headers` column: the caller's headers and the trace state of `trace`.
    fn headers_json(&self, trace: Option<&trace::TraceHeaders>) -> Option<String> {
        let state = trace.and_then(trace::TraceHeaders::tracestate);
        if self.headers.is_empty() && state.is_none() {
            return None;
        }
        let mut headers: BTreeMap<&str, &str> = self
            .headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        if let Some(state) = state {
            headers.insert(wire::HEADER_TRACESTATE, state);
        }
        Some(serde_json::to_string(&headers).expect("a map of strings serialises"))
    }
}

/// Where an appended event landed in its aggregate's chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Appended {
    /// The event's seq (unique in this outbox).
    pub seq: i64,
    /// The aggregate's previous event, `None` for its first.
    pub prev_seq: Option<i64>,
    /// When it was appended (the database's clock).
    pub created_at: DateTime<Utc>,
}

/// `returning seq, aggregate_type, aggregate_id, prev_seq, created_at` of the insert.
type InsertedRow = (i64, String, i64, Option<i64>, DateTime<Utc>);

/// An outbox table: appends events and wakes relays. Cheap to clone; build it once.
#[derive(Debug, Clone)]
pub struct Outbox {
    table: TableName,
    lock_heads: String,
    insert: String,
}

impl Outbox {
    /// The outbox named `table` (`outbox`, `schema.outbox`; see [`TableName::parse`]).
    pub fn new(table: &str) -> Result<Self, Error> {
        Ok(Self::for_table(TableName::parse(table)?))
    }

    /// The outbox of an already parsed name.
    pub fn for_table(table: TableName) -> Self {
        let (events, heads) = (table.events(), table.heads());
        // `on conflict do update` takes the row lock of an existing head, and waits for (then
        // locks) a head another transaction is inserting: either way one writer per aggregate.
        // Keys in order (the caller sorted them): overlapping batches wait instead of deadlocking.
        let lock_heads = format!(
            "insert into {heads} as h (aggregate_type, aggregate_id)
             select * from unnest($1::text[], $2::bigint[])
             on conflict (aggregate_type, aggregate_id) do update set last_seq = h.last_seq
             returning aggregate_type, aggregate_id, last_seq"
        );
        // One round: each aggregate at most once. The heads move by the table's trigger
        // (`TableName::heads_trigger_sql`), in this statement.
        let insert = format!(
            "insert into {events} (aggregate_type, aggregate_id, event_type, prev_seq, routing_key,
                                   content_type, headers, payload, traceparent)
             select t, id, et, prev, rk, ct, h::jsonb, p, tp
               from unnest($1::text[], $2::bigint[], $3::text[], $4::bigint[], $5::text[],
                           $6::text[], $7::text[], $8::bytea[], $9::text[])
                    as u(t, id, et, prev, rk, ct, h, p, tp)
             returning seq, aggregate_type, aggregate_id, prev_seq, created_at"
        );
        Self {
            table,
            lock_heads,
            insert,
        }
    }

    /// The table's names and migration.
    pub fn table(&self) -> &TableName {
        &self.table
    }

    /// Appends one event in the caller's transaction (or on any connection: outside a
    /// transaction the append commits at once). Two round trips: the head lock, then the row.
    /// The event carries the current span's trace context unless it has its own
    /// ([`NewEvent::trace`]).
    pub async fn append(
        &self,
        conn: &mut PgConnection,
        event: NewEvent,
    ) -> Result<Appended, Error> {
        let mut all = self.append_all(conn, std::slice::from_ref(&event)).await?;
        Ok(all.remove(0))
    }

    /// Appends `events` in the caller's transaction, in slice order per aggregate: an
    /// aggregate's events chain in the order given. Set-based: one statement locks every head,
    /// then one statement per *round* (round k holds each aggregate's k-th event of the slice).
    /// Returns one [`Appended`] per event, in slice order. Nothing is validated half-way: a bad
    /// event fails the call before any statement runs.
    pub async fn append_all(
        &self,
        conn: &mut PgConnection,
        events: &[NewEvent],
    ) -> Result<Vec<Appended>, Error> {
        for e in events {
            e.check()?;
        }
        if events.is_empty() {
            return Ok(Vec::new());
        }
        let current = trace::TraceHeaders::current();
        let trace_of = |e: &'_ NewEvent| e.trace.clone().or_else(|| current.clone());
        let mut keys: Vec<(&str, i64)> = events.iter().map(NewEvent::aggregate).collect();
        keys.sort_unstable();
        keys.dedup();
        let (types, ids): (Vec<&str>, Vec<i64>) = keys.iter().copied().unzip();
        let heads: Vec<(String, i64, Option<i64>)> =
            sqlx::query_as(AssertSqlSafe(self.lock_heads.as_str()))
                .bind(&types)
                .bind(&ids)
                .fetch_all(&mut *conn)
                .await?;
        let mut head: HashMap<(String, i64), Option<i64>> = heads
            .into_iter()
            .map(|(t, id, last)| ((t, id), last))
            .collect();

        // rounds[k]: indices (into `events`) of each aggregate's k-th event.
        let rounds = rounds::of(events.iter().map(NewEvent::aggregate));

        let mut out: Vec<Option<Appended>> = vec![None; events.len()];
        for round in rounds {
            let batch: Vec<&NewEvent> = round.iter().map(|&i| &events[i]).collect();
            let prev: Vec<Option<i64>> = batch
                .iter()
                .map(|e| {
                    head.get(&(e.aggregate_type.clone(), e.aggregate_id))
                        .copied()
                        .flatten()
                })
                .collect();
            let rows: Vec<InsertedRow> = sqlx::query_as(AssertSqlSafe(self.insert.as_str()))
                .bind(
                    batch
                        .iter()
                        .map(|e| e.aggregate_type.as_str())
                        .collect::<Vec<_>>(),
                )
                .bind(batch.iter().map(|e| e.aggregate_id).collect::<Vec<_>>())
                .bind(
                    batch
                        .iter()
                        .map(|e| e.event_type.as_str())
                        .collect::<Vec<_>>(),
                )
                .bind(&prev)
                .bind(
                    batch
                        .iter()
                        .map(|e| e.routing_key.as_str())
                        .collect::<Vec<_>>(),
                )
                .bind(
                    batch
                        .iter()
                        .map(|e| e.content_type.as_str())
                        .collect::<Vec<_>>(),
                )
                .bind(
                    batch
                        .iter()
                        .map(|e| e.headers_json(trace_of(e).as_ref()))
                        .collect::<Vec<_>>(),
                )
                .bind(
                    batch
                        .iter()
                        .map(|e| e.payload.as_slice())
                        .collect::<Vec<_>>(),
                )
                .bind(
                    batch
                        .iter()
                        .map(|e| trace_of(e).map(|t| t.traceparent().to_owned()))
                        .collect::<Vec<_>>(),
                )
                .fetch_all(&mut *conn)
                .await?;
            // `returning` gives no row order: match the rows to the round by aggregate.
            let mut by_key: HashMap<(String, i64), Appended> = rows
                .into_iter()
                .map(|(seq, t, id, prev_seq, created_at)| {
                    let appended = Appended {
                        seq,
                        prev_seq,
                        created_at,
                    };
                    ((t, id), appended)
                })
                .collect();
            for &i in &round {
                let key = (events[i].aggregate_type.clone(), events[i].aggregate_id);
                let appended = by_key
                    .remove(&key)
                    .expect("the insert returns one row per event of the round");
                head.insert(key, Some(appended.seq));
                out[i] = Some(appended);
            }
        }
        Ok(out
            .into_iter()
            .map(|a| a.expect("every event is in a round"))
            .collect())
    }

    /// Wakes the relays listening on this outbox's channel ([`TableName::notify_channel`]).
    ///
    /// Call it after commit, outside the writing transaction: a `NOTIFY` inside it would
    /// serialise every committing writer on PostgreSQL's notification queue lock. A lost
    /// notification only costs latency (relays also poll).
    pub async fn notify<'c>(&self, executor: impl PgExecutor<'c>) -> Result<(), sqlx::Error> {
        sqlx::query("select pg_notify($1, '')")
            .bind(self.table.notify_channel())
            .execute(executor)
            .await?;
        Ok(())
    }
}

/// A pool on a fresh database of the test server (`TEST_PG_URL`, default the local trust-auth
/// server), for the crate's doctests.
#[doc(hidden)]
#[cfg(feature = "unstable-internals")]
pub async fn doctest_pool() -> Result<sqlx::PgPool, sqlx::Error> {
    use sqlx::Connection;
    let server = std::env::var("TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into());
    let name = format!(
        "outbox_doc_{}_{}_0",
        std::process::id(),
        Utc::now().timestamp_nanos_opt().unwrap_or(0) % 1_000_000_000_000
    );
    let mut admin = sqlx::PgConnection::connect(&format!("{server}/postgres")).await?;
    sqlx::query(AssertSqlSafe(format!("create database {name}")))
        .execute(&mut admin)
        .await?;
    sqlx::PgPool::connect(&format!("{server}/{name}")).await
}
