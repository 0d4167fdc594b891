//! Consume an outbox's events exactly once, in each aggregate's chain order, inside your own
//! sqlx transaction.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let pool = outbox_inbox::doctest_pool().await?;
//! use outbox_inbox::{Envelope, Handler, Inbox, Outcome};
//! use sqlx::PgConnection;
//!
//! /// Your processing of one event: your own writes, in the same transaction as the watermark.
//! struct Ledger;
//!
//! impl Handler for Ledger {
//!     type Error = sqlx::Error;
//!     async fn handle(&mut self, tx: &mut PgConnection, event: &Envelope) -> Result<(), sqlx::Error> {
//!         sqlx::query("insert into billing.ledger values ($1, $2)")
//!             .bind(event.seq)
//!             .bind(String::from_utf8_lossy(&event.payload).into_owned())
//!             .execute(tx)
//!             .await
//!             .map(drop)
//!     }
//! }
//!
//! let inbox = Inbox::new("billing.inbox")?;
//! inbox.tables().migrator()?.run(&pool).await?; // or paste tables().migration_sql() into yours
//! sqlx::query("create table billing.ledger (seq bigint primary key, note text)").execute(&pool).await?;
//!
//! // Invoice 7's second event arrives first, then its first, then the first again.
//! let deliveries = [
//!     Envelope::new(7, 11, Some(10), b"paid".to_vec()),
//!     Envelope::new(7, 10, None, b"issued".to_vec()),
//!     Envelope::new(7, 10, None, b"issued".to_vec()),
//! ];
//! let mut outcomes = Vec::new();
//! for envelope in &deliveries {
//!     let mut tx = pool.begin().await?;
//!     let outcome = inbox.apply(&mut tx, envelope, &mut Ledger).await?;
//!     tx.commit().await?; // and only then ack the broker message
//!     outcomes.push(outcome);
//! }
//! assert_eq!(outcomes[0], Outcome::Held { waiting_for: 10 });
//! assert_eq!(outcomes[1], Outcome::Processed { seqs: vec![10, 11] }); // 11 released after 10
//! assert_eq!(outcomes[2], Outcome::Skipped { held: false });          // a duplicate
//! let notes: Vec<String> = sqlx::query_scalar("select note from billing.ledger order by seq")
//!     .fetch_all(&pool).await?;
//! assert_eq!(notes, ["issued", "paid"]);
//! # Ok(()) }
//! ```
//!
//! **The watermark.** Each aggregate's events form a chain: every event names its predecessor
//! (`prev_seq`, none for the first), as the `outbox` crate writes them. The inbox processes an
//! aggregate's events strictly in that order, so one number per aggregate, the seq of its last
//! processed event, says what was processed: a duplicate is any seq at or below it, forever. An
//! event whose predecessor has not been processed is held (stored durably) and released in the
//! transaction that processes its predecessor, with the successors it unblocks in turn. The rule
//! is one pure function, [`decide()`].
//!
//! **Transactions.** [`Inbox::apply`] runs in the caller's transaction (any `&mut PgConnection`:
//! a `Transaction`, a pooled connection, `Acquire`) and calls the handler inside it, so the
//! handler's writes, the hold or release and the watermark move commit or roll back together.
//! It first takes the aggregate's transaction-scoped advisory lock (key: the aggregate id), so
//! consumers of one aggregate on several processes apply its deliveries one at a time. The
//! caller commits, and acks the broker message only after the commit; see the README for the
//! failure windows. [`Inbox::batch`] does the same for many deliveries in a fixed number of
//! statements, with exactly the result of applying them one by one.
//!
//! Layout: `schema` ([`Tables`]: table names, migration), `decide` (the rule, [`decide()`]),
//! `plan` (the rule over a batch, [`plan_aggregate`]), [`failure`] (what a failed transaction
//! means for its delivery), `envelope` ([`Envelope`]), the one-event transactions here, `batch` (many deliveries: [`Inbox::batch`], [`Batch`] and its one
//! statement, [`Inbox::apply_batch`]), `db` (the other statements), and with the `amqp` feature, `amqp` (lapin
//! dispositions, dead-lettering, acks, and the `Consumer` loop: batches, reconnects, counts).
//!
//! ## Stable API
//!
//! What this version promises, changed only with a new version and a CHANGELOG line with the
//! signature before → after (`docs/public-api/outbox-inbox.txt` lists every item; CI holds the
//! crate to it, see `.ci/public-api.sh`): [`Inbox`], [`Handler`], [`Envelope`], [`Chain`],
//! [`Held`], [`Conflict`], [`Outcome`], [`Released`], [`Error`], [`ApplyError`], [`Batch`],
//! [`Processed`], [`Tables`], [`decide()`] and its [`Decision`], [`plan_aggregate`] and its
//! [`AggregatePlan`] and [`Step`], the module [`failure`] and, with the feature `amqp`, `amqp`
//! (the consumer loop, its topology and the re-exported connect), and the re-exports `sqlx` and
//! (feature `amqp`) `lapin`. Each item has one path. Nothing else is public, except
//! `doctest_pool`, the doctests' and tests' fresh database, behind the feature `unstable-internals`
//! (no promise: it changes in any version).

#![warn(missing_docs)]

// The foreign crates this API takes and returns, re-exported so a user's versions always match.
#[cfg(feature = "amqp")]
pub use lapin;
pub use sqlx;

#[cfg(feature = "amqp")]
pub mod amqp;
mod batch;
mod db;
mod decide;
mod envelope;
pub mod failure;
mod plan;
mod schema;

use std::{fmt, ops::ControlFlow};

use sqlx::{PgConnection, Postgres, QueryBuilder};

use crate::failure::Failure;

pub use batch::{Batch, Processed};
pub use decide::{Decision, decide};
pub use envelope::Envelope;
pub use plan::{AggregatePlan, Step, plan_aggregate};
pub use schema::Tables;

// The README's snippets are doctests too: they compile (the getting-started) or run against the
// test database, as the examples above do.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
mod readme_doctests {}

/// What can go wrong configuring an inbox.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A table or column name cannot be used.
    #[error("inbox table name {name:?}: {reason}")]
    InvalidTableName {
        /// The name given.
        name: String,
        /// What is wrong with it.
        reason: String,
    },
    /// [`Tables::migrator`] of tables named with [`Tables::existing`]: their owner migrates them.
    #[error("inbox tables {progress:?} were named as existing tables: they have no migrator")]
    NoMigrator {
        /// The watermark table's name.
        progress: String,
    },
    /// The database failed.
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

/// What can go wrong applying events: the caller's transaction must be rolled back (nothing of
/// it may commit: the handler may have written half of its work). Either the handler failed or
/// the database did; there is no third party, so the enum is exhaustive.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError<E> {
    /// The handler failed on the event of this seq.
    #[error("handling seq {seq}: {source}")]
    Handler {
        /// The event the handler failed on (the delivered one, or a released successor).
        seq: i64,
        /// The handler's error.
        source: E,
    },
    /// The database failed.
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

/// Your processing of one event, called by [`Inbox::apply`] (and [`Inbox::release_held`]) inside
/// your transaction for the delivered event and each held successor it releases, in chain order.
///
/// Implement it with an `async fn` (a trait rather than a closure so that the future is `Send`
/// and the consumer can run on a multi-threaded runtime):
///
/// ```
/// use outbox_inbox::{Envelope, Handler};
/// use sqlx::PgConnection;
///
/// struct Ledger;
///
/// impl Handler for Ledger {
///     type Error = sqlx::Error;
///     async fn handle(&mut self, conn: &mut PgConnection, event: &Envelope) -> Result<(), sqlx::Error> {
///         sqlx::query("insert into ledger (seq, note) values ($1, $2)")
///             .bind(event.seq)
///             .bind(&event.payload)
///             .execute(conn)
///             .await
///             .map(drop)
///     }
/// }
/// ```
pub trait Handler {
    /// What the handler fails with (returned in [`ApplyError::Handler`]).
    type Error;

    /// Processes `event` with `conn`, the caller's transaction. An error aborts the apply: roll
    /// the transaction back.
    fn handle(
        &mut self,
        conn: &mut PgConnection,
        event: &Envelope,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;

    // What follows is for the `amqp` feature's `Consumer`; every method has a default, and a
    // handler that only handles needs none of them.

    /// What a failure of this handler means for the delivery: by default
    /// [`Failure::Transient`] (the delivery is tried again after a backoff); return
    /// [`Failure::Poison`] for an error the event's own data causes every time (it is
    /// dead-lettered), [`Failure::Reconnect`] for one that leaves the connection unusable (it is
    /// closed, not handed back to the pool). The crate's own database errors are classified by
    /// [`failure::classify`].
    fn classify(error: &Self::Error) -> Failure {
        let _ = error;
        Failure::Transient
    }

    /// In a batch: takes one chain's events (in chain order: the batch's own and the held events
    /// they release) into the batch's writes without touching the database, for
    /// [`Handler::push_writes`] to write them in the batch's one statement (one insert for the
    /// whole batch rather than one per event). `None`, the default: [`Handler::handle`] is called
    /// for each instead. `Some(Err)` (e.g. a stored payload that cannot be decoded): keep nothing
    /// of the chain; it is left out of the batch and its deliveries are applied on their own,
    /// where [`Handler::handle`] reports the error, while the rest of the batch commits.
    fn stage(&mut self, chain: &[&Envelope]) -> Option<Result<(), Self::Error>> {
        let _ = chain;
        None
    }

    /// Pushes the writes of what [`Handler::stage`] took onto the batch's one statement, as
    /// complete CTEs each followed by a comma (see [`Batch::write`]); `duplicates` is the number
    /// of the batch's deliveries planned as duplicates (e.g. to count them in the same
    /// statement). The default pushes nothing.
    fn push_writes(&mut self, q: &mut QueryBuilder<Postgres>, duplicates: i64) {
        let _ = (q, duplicates);
    }

    /// Called in the transaction, just before its commit, with the outcome of each delivery it
    /// applied (a chain conflict never reaches it: nothing is committed for one), e.g. to count
    /// the duplicates that [`Handler::push_writes`] did not count. An error rolls the
    /// transaction back. The default does nothing.
    fn before_commit(
        &mut self,
        conn: &mut PgConnection,
        outcomes: &[&Outcome],
    ) -> impl Future<Output = Result<(), Self::Error>> + Send {
        let _ = (conn, outcomes);
        async { Ok(()) }
    }

    /// Called once the transaction that applied `event` has committed, before the delivery is
    /// acked, with its outcome (each delivery of a batch in delivery order): the place for log
    /// lines, metrics, and waking whatever works on the handler's writes.
    /// [`ControlFlow::Break`] stops the consumer at once, with this and every later delivery of
    /// the batch left unacked (the broker redelivers them), as a crash would. The default
    /// continues.
    fn committed(&mut self, event: &Envelope, outcome: &Outcome) -> ControlFlow<()> {
        let _ = (event, outcome);
        ControlFlow::Continue(())
    }

    /// The dead-letter reason of an event in conflict with its chain (`x-death-reason`), in
    /// the handler's words; by default the conflict's [`Display`](fmt::Display).
    fn conflict_reason(&self, conflict: &Conflict) -> String {
        conflict.to_string()
    }
}

/// The chain an event belongs to: its aggregate (type and id) in its producer's shard, as the
/// outbox chains events per `(aggregate_type, aggregate_id)`. Everything the inbox keeps is per
/// chain: the watermark, the held events, the order.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Chain {
    /// The producer's shard (0 for a producer with one outbox).
    pub shard: i32,
    /// The aggregate's type.
    pub aggregate_type: String,
    /// The aggregate.
    pub aggregate_id: i64,
}

impl Chain {
    /// Aggregate `aggregate_id` of type `aggregate_type` in shard `shard`.
    pub fn new(shard: i32, aggregate_type: impl Into<String>, aggregate_id: i64) -> Self {
        Self {
            shard,
            aggregate_type: aggregate_type.into(),
            aggregate_id,
        }
    }
}

/// A held event as stored (its shard and aggregate are the ones it is stored under).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Held {
    /// Its seq.
    pub seq: i64,
    /// The seq it waits for.
    pub prev_seq: i64,
    /// Its payload.
    pub payload: Vec<u8>,
    /// Its trace context.
    pub traceparent: Option<String>,
}

impl Held {
    /// A held event (for [`plan_aggregate`]'s callers and tests).
    pub fn new(seq: i64, prev_seq: i64, payload: Vec<u8>, traceparent: Option<String>) -> Self {
        Self {
            seq,
            prev_seq,
            payload,
            traceparent,
        }
    }

    fn into_envelope(self, chain: &Chain) -> Envelope {
        Envelope::new(
            chain.aggregate_id,
            self.seq,
            Some(self.prev_seq),
            self.payload,
        )
        .with_shard(chain.shard)
        .with_aggregate_type(chain.aggregate_type.clone())
        .with_traceparent(self.traceparent)
    }
}

/// An event that contradicts its aggregate's chain: its seq is above the watermark but its
/// predecessor is below it, or it claims to be the first of an aggregate that has events. No
/// correct producer sends one; nothing is written for it (dead-letter it).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Conflict {
    /// The aggregate's shard.
    pub shard: i32,
    /// The aggregate's type.
    pub aggregate_type: String,
    /// The aggregate.
    pub aggregate_id: i64,
    /// Its watermark when the event was judged.
    pub watermark: Option<i64>,
    /// The event's seq.
    pub seq: i64,
    /// The predecessor the event claims.
    pub prev_seq: Option<i64>,
}

impl Conflict {
    /// A conflict of event `seq` (claiming `prev_seq`) with `aggregate_id`'s `watermark`.
    pub fn new(aggregate_id: i64, watermark: Option<i64>, seq: i64, prev_seq: Option<i64>) -> Self {
        Self {
            shard: 0,
            aggregate_type: String::new(),
            aggregate_id,
            watermark,
            seq,
            prev_seq,
        }
    }

    /// The same conflict for aggregate type `aggregate_type`.
    pub fn of_type(mut self, aggregate_type: impl Into<String>) -> Self {
        self.aggregate_type = aggregate_type.into();
        self
    }

    /// The same conflict in shard `shard`.
    pub fn in_shard(mut self, shard: i32) -> Self {
        self.shard = shard;
        self
    }

    fn of(ev: &Envelope, watermark: Option<i64>) -> Self {
        Self {
            shard: ev.shard,
            aggregate_type: ev.aggregate_type.clone(),
            aggregate_id: ev.aggregate_id,
            watermark,
            seq: ev.seq,
            prev_seq: ev.prev_seq,
        }
    }
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("chain conflict: aggregate ")?;
        if self.shard != 0 {
            write!(f, "{} of shard {}", self.aggregate_id, self.shard)?;
        } else {
            write!(f, "{}", self.aggregate_id)?;
        }
        write!(
            f,
            " has processed up to seq {}, but seq {} follows ",
            self.watermark.unwrap_or_default(),
            self.seq
        )?;
        match self.prev_seq {
            Some(p) => write!(f, "seq {p}"),
            None => f.write_str("nothing (a first event)"),
        }
    }
}

/// What applying an event did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Outcome {
    /// Handled: the event, then the held successors it released, in chain order (their seqs).
    Processed {
        /// Seqs handled, the event's first.
        seqs: Vec<i64>,
    },
    /// A duplicate, not handled: already processed, or (`held`) already held.
    Skipped {
        /// It was held already, not processed.
        held: bool,
    },
    /// Stored until the aggregate's event `waiting_for` is processed.
    Held {
        /// The predecessor it waits for.
        waiting_for: i64,
    },
    /// Contradicts the chain; nothing was written for it.
    Conflict(Conflict),
}

/// What [`Inbox::release_held`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Released {
    /// The missing predecessors skipped (the watermark moved past them without a handler call).
    pub skipped: Vec<i64>,
    /// The held events handled, in chain order.
    pub released: Vec<i64>,
    /// Held events no gap leads to: they name a predecessor at or below the watermark (the
    /// other branch of a forked chain). They stay held; look at them.
    pub stranded: Vec<i64>,
}

/// An inbox: its tables and statements. Cheap to clone; build it once.
#[derive(Debug, Clone)]
pub struct Inbox {
    tables: Tables,
    sql: db::Sql,
}

impl Inbox {
    /// The inbox of prefix `prefix` or `schema.prefix` (see [`Tables::new`]).
    pub fn new(prefix: &str) -> Result<Self, Error> {
        Ok(Self::with_tables(Tables::new(prefix)?))
    }

    /// The inbox on these tables (e.g. [`Tables::existing`]).
    pub fn with_tables(tables: Tables) -> Self {
        let sql = db::Sql::new(&tables);
        Self { tables, sql }
    }

    /// Its tables.
    pub fn tables(&self) -> &Tables {
        &self.tables
    }

    /// Takes, in the caller's transaction, the locks [`Inbox::apply`] and [`Inbox::batch`] take
    /// on these aggregates (ascending, in one statement; `aggregate_ids` in any order, repeats
    /// allowed), held until the transaction ends. For a writer of the caller's own state that
    /// the handler reads and that must not interleave with the processing of these aggregates'
    /// events: e.g. mail-svc's mailer, which moves an order's "next mail to send" while a
    /// handler may be queueing the order's next mail. Take them in a statement before the ones
    /// that read that state, so that their snapshot is taken after the locks.
    pub async fn lock_aggregates(
        &self,
        conn: &mut PgConnection,
        aggregate_ids: &[i64],
    ) -> Result<(), sqlx::Error> {
        let mut ids = aggregate_ids.to_vec();
        ids.sort_unstable();
        ids.dedup();
        if ids.is_empty() {
            return Ok(());
        }
        db::lock_all(conn, &ids).await
    }

    /// Applies one delivered event in the caller's transaction: takes the aggregate's lock, then
    /// skips it (a duplicate), holds it (early), reports a conflict (nothing written), or calls
    /// `handler` for it and for every held successor it releases, in chain order, and moves the
    /// watermark. The caller commits (then acks the message); on `Err` it must roll back.
    pub async fn apply<E, H>(
        &self,
        conn: &mut PgConnection,
        envelope: &Envelope,
        handler: &mut H,
    ) -> Result<Outcome, ApplyError<E>>
    where
        H: Handler<Error = E>,
    {
        let id = &envelope.chain();
        db::lock(conn, id.aggregate_id).await?;
        let watermark = self.sql.watermark(conn, id).await?;
        Ok(match decide(watermark, envelope.seq, envelope.prev_seq) {
            Decision::Skip => Outcome::Skipped { held: false },
            Decision::Conflict => Outcome::Conflict(Conflict::of(envelope, watermark)),
            Decision::Hold(prev) => {
                let held = Held::new(
                    envelope.seq,
                    prev,
                    envelope.payload.clone(),
                    envelope.traceparent.clone(),
                );
                if self.sql.hold(conn, id, &held).await? {
                    Outcome::Held { waiting_for: prev }
                } else {
                    Outcome::Skipped { held: true }
                }
            }
            Decision::Process => {
                call(handler, conn, envelope).await?;
                let mut seqs = vec![envelope.seq];
                self.release_from(conn, id, envelope.seq, &mut seqs, handler)
                    .await?;
                let last = *seqs.last().unwrap_or(&envelope.seq);
                self.sql.set_watermark(conn, id, last).await?;
                Outcome::Processed { seqs }
            }
        })
    }

    /// Handles the held chain that follows `last`, in chain order, appending the seqs.
    async fn release_from<E, H>(
        &self,
        conn: &mut PgConnection,
        id: &Chain,
        mut last: i64,
        seqs: &mut Vec<i64>,
        handler: &mut H,
    ) -> Result<(), ApplyError<E>>
    where
        H: Handler<Error = E>,
    {
        while let Some(held) = self.sql.take_successor(conn, id, last).await? {
            let next = held.into_envelope(id);
            call(handler, conn, &next).await?;
            last = next.seq;
            seqs.push(last);
        }
        Ok(())
    }

    /// The operator's way out of a missing event: in the caller's transaction, under the
    /// aggregate's lock, for one chain (an aggregate in its shard; [`Inbox::held_chains`] lists
    /// an aggregate's), moves the watermark past the missing predecessor of the aggregate's
    /// held chain as if it had been processed (without a handler call) and handles the held
    /// chain that waited for it, exactly as the missing event's arrival would have; a chain with
    /// several gaps is released gap by gap, lowest first. Nothing held: an empty [`Released`].
    /// A skipped event that arrives later is a duplicate (that is what releasing means).
    pub async fn release_held<E, H>(
        &self,
        conn: &mut PgConnection,
        chain: Chain,
        handler: &mut H,
    ) -> Result<Released, ApplyError<E>>
    where
        H: Handler<Error = E>,
    {
        let id = &chain;
        db::lock(conn, id.aggregate_id).await?;
        let mut out = Released::default();
        if self.sql.held_count(conn, id).await? == 0 {
            return Ok(out);
        }
        let start = self.sql.watermark(conn, id).await?;
        let (_, mut held) = self.sql.state(conn, std::slice::from_ref(id)).await?;
        let mut held = held.remove(id).unwrap_or_default();
        let mut w = start;
        // The held event the chain waits on: the lowest predecessor above the watermark.
        while let Some(gap) = held
            .iter()
            .filter(|h| w.is_none_or(|w| h.prev_seq > w))
            .map(|h| h.prev_seq)
            .min()
        {
            out.skipped.push(gap);
            let mut seqs = Vec::new();
            self.release_from(conn, id, gap, &mut seqs, handler).await?;
            held.retain(|h| !seqs.contains(&h.seq));
            w = seqs.last().copied().or(Some(gap));
            out.released.extend(seqs);
        }
        if let Some(w) = w.filter(|w| Some(*w) != start) {
            self.sql.set_watermark(conn, id, w).await?;
        }
        out.stranded = held.iter().map(|h| h.seq).collect();
        Ok(out)
    }

    /// The chains of `aggregate_id` that have held events, one per shard and aggregate type
    /// that has (for an operator who knows the aggregate, not its shard; see
    /// [`Inbox::release_held`]).
    pub async fn held_chains(
        &self,
        conn: &mut PgConnection,
        aggregate_id: i64,
    ) -> Result<Vec<Chain>, sqlx::Error> {
        let chains = self.sql.held_chains(conn, aggregate_id).await?;
        Ok(chains
            .into_iter()
            .map(|(shard, aggregate_type)| Chain::new(shard, aggregate_type, aggregate_id))
            .collect())
    }
}

pub(crate) async fn call<E, H>(
    handler: &mut H,
    conn: &mut PgConnection,
    envelope: &Envelope,
) -> Result<(), ApplyError<E>>
where
    H: Handler<Error = E>,
{
    handler
        .handle(conn, envelope)
        .await
        .map_err(|source| ApplyError::Handler {
            seq: envelope.seq,
            source,
        })
}

/// A pool on a fresh database of the test server (`TEST_PG_URL`, default the local trust-auth
/// server), for the crate's doctests and tests.
#[doc(hidden)]
#[cfg(feature = "unstable-internals")]
pub async fn doctest_pool() -> Result<sqlx::PgPool, sqlx::Error> {
    use sqlx::{AssertSqlSafe, Connection};
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let server = std::env::var("TEST_PG_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432".into());
    let name = format!(
        "inbox_doc_{}_{}_{}",
        std::process::id(),
        chrono::Utc::now().timestamp_nanos_opt().unwrap_or(0) % 1_000_000_000_000,
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let mut admin = sqlx::PgConnection::connect(&format!("{server}/postgres")).await?;
    sqlx::query(AssertSqlSafe(format!("create database {name}")))
        .execute(&mut admin)
        .await?;
    sqlx::PgPool::connect(&format!("{server}/{name}")).await
}
