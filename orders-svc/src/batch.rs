//! The one write path of orders-svc: [`apply`] writes a batch of `Upsert` calls (one call or
//! many, the same code) in ONE transaction, and the group commit ([`GroupCommit`]) feeds it the
//! calls that arrive while a transaction is in flight, so one WAL flush and one sequence of round
//! trips serve many calls.
//!
//! [`WRITERS`] writer tasks share one queue. A writer that becomes free takes whatever is queued
//! (up to [`MAX_BATCH`]) and applies it with [`apply`]; there is no timer, so a call on a quiet
//! service starts its transaction at once, as a batch of one through the same lock, plan and
//! write statements as a batch of many ([`apply_one`] runs that transaction straight on a pool,
//! for the benchmark's ceiling and for tests). Each call keeps its own outcome:
//!
//! - validation happens before a call is queued (`UpsertCommand::parse`), so bad input never
//!   reaches a batch;
//! - `plan` decides every call in arrival order against the locked rows and the batch's own
//!   earlier calls, with the one transition table (`Status::can_change_to`): a forbidden change or a
//!   creation without email fails that call only; several calls on one order are applied in order,
//!   each with its own event and seq, chained by `prev_seq`;
//! - a database error fails every call of the batch: nothing of it committed (or, for an error on
//!   COMMIT itself, nobody knows — reported as UNAVAILABLE when the database is unreachable,
//!   INTERNAL otherwise), and no call is ever answered with success before its change committed.
//!
//! Two writers let one batch build while the other waits for its commit (WAL flush). Their
//! batches may touch the same orders (so may another replica's): [`db::lock_orders`] locks in id
//! order and new orders are inserted in id order, so they wait for each other and never deadlock;
//! of two batches creating the same order, the loser rolls back (its outbox rows with it) and
//! goes again, the order then existing, as an update. Calls in different batches are concurrent
//! calls: whichever batch locks the order first is applied first.
//!
//! Every committed batch that appended events wakes the relay ([`crate::wake`]): the first after
//! a quiet gap carries the `NOTIFY` in its own transaction.
//!
//! With several shards (`SHARDS`) each shard has its own [`GroupCommit`] (queue, writers, pool,
//! relay waker): a batch never spans two databases, and [`ShardedWrites`] routes each call to
//! its order's shard.

use std::{collections::HashMap, sync::Arc};

use outbox::{NewEvent, trace::TraceHeaders};
use outbox_proto::orders::events::v1::{ORDER_CREATED, ORDER_STATUS_CHANGED, OrderPayload};
use sqlx::PgPool;
use tokio::sync::{Mutex, mpsc, oneshot};

use crate::{
    db::{self, EventWrite, OrderRow, UpsertOutcome},
    error::Error,
    order::{Status, UpsertCommand},
    shard::{self, Shard},
    wake::RelayWaker,
};

/// The most calls one transaction applies. Bounds the statement size and the work lost by one
/// database error; at 32 concurrent clients batches stay far below it.
pub const MAX_BATCH: usize = 512;

/// Writer tasks, each with at most one transaction in flight.
pub const WRITERS: usize = 2;

/// Calls waiting for the writer. Beyond it, callers wait to enqueue (backpressure).
const QUEUE: usize = 4096;

/// One queued call.
struct Job {
    cmd: UpsertCommand,
    trace: Option<TraceHeaders>,
    reply: oneshot::Sender<Result<UpsertOutcome, Error>>,
}

/// The handle the gRPC service queues its calls on. Cloning shares the writer; the writer stops
/// when the last handle is dropped, after finishing the batch in flight.
#[derive(Debug, Clone)]
pub struct GroupCommit {
    queue: mpsc::Sender<Job>,
}

impl GroupCommit {
    /// Spawns the writers of `shard` (its database `pool`) on the current runtime.
    pub fn start(pool: PgPool, shard: Shard, relay_waker: Arc<RelayWaker>) -> Self {
        let (queue, rx) = mpsc::channel(QUEUE);
        let rx = Arc::new(Mutex::new(rx));
        for _ in 0..WRITERS {
            tokio::spawn(writer(pool.clone(), shard, relay_waker.clone(), rx.clone()));
        }
        Self { queue }
    }

    /// Applies one validated call with the next batch and returns its own outcome.
    pub async fn upsert(
        &self,
        cmd: UpsertCommand,
        trace: Option<TraceHeaders>,
    ) -> Result<UpsertOutcome, Error> {
        let (reply, answer) = oneshot::channel();
        let job = Job { cmd, trace, reply };
        // The writer only goes away with the service (or by a panic, which is a bug): either way
        // the call did not happen.
        let gone = || Error::Db(sqlx::Error::WorkerCrashed);
        self.queue.send(job).await.map_err(|_| gone())?;
        answer.await.map_err(|_| gone())?
    }
}

/// Every shard's writes: one [`GroupCommit`] per shard, shard 0 first.
#[derive(Debug, Clone)]
pub struct ShardedWrites {
    shards: Vec<GroupCommit>,
}

impl ShardedWrites {
    /// Starts one group commit per shard; `shards` holds each shard's pool and relay waker.
    pub fn start(shards: Vec<(PgPool, Arc<RelayWaker>)>) -> Self {
        let count = shards.len();
        let shards = shards
            .into_iter()
            .enumerate()
            .map(|(index, (pool, waker))| GroupCommit::start(pool, Shard { index, count }, waker))
            .collect();
        Self { shards }
    }

    /// Applies the call in its order's shard (see `crate::shard`).
    pub async fn upsert(
        &self,
        cmd: UpsertCommand,
        trace: Option<TraceHeaders>,
    ) -> Result<UpsertOutcome, Error> {
        self.shards[shard::of(cmd.id, self.shards.len())]
            .upsert(cmd, trace)
            .await
    }
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Job").field("cmd", &self.cmd).finish()
    }
}

async fn writer(
    pool: PgPool,
    shard: Shard,
    relay_waker: Arc<RelayWaker>,
    rx: Arc<Mutex<mpsc::Receiver<Job>>>,
) {
    let mut jobs = Vec::with_capacity(MAX_BATCH);
    // The free writer holds the receiver; `recv_many` waits only while the queue is empty, then
    // takes everything queued (up to the limit): the calls that arrived while the other
    // transactions were in flight.
    loop {
        // The guard is released before the batch is applied, so the other writer can take the
        // calls that arrive meanwhile.
        let taken = rx.lock().await.recv_many(&mut jobs, MAX_BATCH).await;
        if taken == 0 {
            return; // every handle is gone: the service stopped
        }
        metrics::histogram!(crate::metrics::UPSERT_BATCH_SIZE).record(jobs.len() as f64);
        let calls: Vec<Call<'_>> = jobs.iter().map(|j| (&j.cmd, j.trace.as_ref())).collect();
        let results = apply_waking(&pool, shard, &calls, Some(&relay_waker)).await;
        for (job, result) in jobs.drain(..).zip(results) {
            // A caller that went away meanwhile only misses its answer.
            let _ = job.reply.send(result);
        }
    }
}

/// One call of a batch: the validated command and the trace its event is stored with.
pub type Call<'a> = (&'a UpsertCommand, Option<&'a TraceHeaders>);

/// Applies `calls` in ONE transaction of `shard`'s database `pool` and returns one outcome per
/// call, in call order. THE write path: the group commit's writers call it with whatever is
/// queued, a quiet service's call is a batch of one.
///
/// Each call is decided in arrival order against the locked orders and the batch's own earlier
/// calls (`plan`): a forbidden change or a creation without email fails that call only. An
/// error of the transaction itself fails every call, none of them committed (an error on COMMIT:
/// unknown). A batch of one gets that error as it is (so its gRPC code and log line are those of
/// any failed call); a batch of several gets a copy per call (`sqlx::Error` cannot be cloned),
/// and the original is logged once here.
///
/// The orders' row locks serialise all writers of one order, and the outbox crate chains its
/// events under the order's head lock, so an order's events get increasing seqs, each committed
/// before the next is appended: `prev_seq` chains are gap-free and in commit order.
pub async fn apply(
    pool: &PgPool,
    shard: Shard,
    calls: &[Call<'_>],
) -> Vec<Result<UpsertOutcome, Error>> {
    apply_waking(pool, shard, calls, None).await
}

/// [`apply`], waking the relay through `waker` when the batch appended events.
async fn apply_waking(
    pool: &PgPool,
    shard: Shard,
    calls: &[Call<'_>],
    waker: Option<&RelayWaker>,
) -> Vec<Result<UpsertOutcome, Error>> {
    if calls.is_empty() {
        return Vec::new();
    }
    match transaction(pool, shard, calls, waker).await {
        Ok(results) => results,
        Err(e) if calls.len() == 1 => vec![Err(e)],
        Err(e) => {
            tracing::warn!(error = %e, calls = calls.len(), "group commit failed");
            calls.iter().map(|_| Err(copy_for_call(&e))).collect()
        }
    }
}

/// [`apply`] for one call: the same transaction, straight on a pool (no queue, no gRPC). The
/// benchmark's one-transaction-per-call ceiling; tests that need the write path without the
/// service.
pub async fn apply_one(
    pool: &PgPool,
    shard: Shard,
    cmd: &UpsertCommand,
    trace: Option<&TraceHeaders>,
) -> Result<UpsertOutcome, Error> {
    apply(pool, shard, &[(cmd, trace)])
        .await
        .pop()
        .expect("one outcome per call")
}

/// A batch-wide error, once for each call (`sqlx::Error` cannot be cloned). Keeps the mapping to
/// gRPC codes: an unreachable database stays UNAVAILABLE, anything else INTERNAL.
fn copy_for_call(e: &Error) -> Error {
    match e {
        Error::Db(db) if outbox_kit::db::is_unavailable(db) => {
            Error::Db(sqlx::Error::Io(std::io::Error::other(db.to_string())))
        }
        other => Error::Batch(other.to_string()),
    }
}

/// The transaction of [`apply`]. `Err` when the transaction failed: nothing committed (or, on
/// COMMIT, unknown).
async fn transaction(
    pool: &PgPool,
    shard: Shard,
    calls: &[Call<'_>],
    waker: Option<&RelayWaker>,
) -> Result<Vec<Result<UpsertOutcome, Error>>, Error> {
    let mut ids: Vec<i64> = calls.iter().map(|(c, _)| c.id).collect();
    ids.sort_unstable();
    ids.dedup();
    // Each lost creation race leaves one more of the batch's orders existing for good (orders are
    // never deleted), so after at most one retry per order every creation has settled (a batch of
    // one: at most two attempts, the second an update).
    'attempt: for _ in 0..=ids.len() {
        let mut tx = pool.begin().await?;
        let locked: HashMap<i64, Result<OrderRow, String>> =
            db::lock_orders(&mut tx, &ids).await?.into_iter().collect();
        let plan = plan(&locked, calls);
        // Every event of the batch in one set-based append: the outbox crate chains each order's
        // events in round order (and the first to the order's head).
        let all: Vec<NewEvent> = plan
            .rounds
            .iter()
            .flatten()
            .map(|e| shard.tag(e.event.clone()))
            .collect();
        let appended = db::outbox().append_all(&mut tx, &all).await?;
        // rows[round][id]: the order as written by its event in that round.
        let mut rows: Vec<HashMap<i64, (bool, OrderRow)>> = Vec::with_capacity(plan.rounds.len());
        let mut start = 0;
        for round in &plan.rounds {
            let of_round = &appended[start..start + round.len()];
            start += round.len();
            match db::write_round(&mut tx, round, of_round).await? {
                Some(written) => {
                    rows.push(written.into_iter().map(|(c, r)| (r.id, (c, r))).collect())
                }
                None => {
                    tx.rollback().await?;
                    continue 'attempt;
                }
            }
        }
        if plan.rounds.is_empty() {
            // Nothing was written: release the row locks without a commit record.
            tx.rollback().await?;
        } else if let Some(waker) = waker {
            let notified = waker.take_turn();
            if notified {
                db::notify_relay(&mut *tx).await?;
            }
            tx.commit().await?;
            if !notified {
                waker.wake_later();
            }
        } else {
            tx.commit().await?;
        }
        return Ok(plan
            .steps
            .into_iter()
            .zip(calls)
            .map(|(step, (cmd, _))| match step {
                Step::Fail(e) => Err(e),
                Step::Unchanged { after_round } => {
                    let order = match after_round {
                        Some(r) => rows[r][&cmd.id].1.clone(),
                        None => locked[&cmd.id].clone().expect("planned on a readable row"),
                    };
                    Ok(UpsertOutcome {
                        order,
                        created: false,
                        event_seq: None,
                    })
                }
                Step::Event { round } => {
                    let (created, order) = rows[round][&cmd.id].clone();
                    Ok(UpsertOutcome {
                        event_seq: Some(order.last_event_seq),
                        order,
                        created,
                    })
                }
            })
            .collect());
    }
    Err(Error::Batch(
        "the creation races of the batch did not settle".into(),
    ))
}

/// What one call of a batch does.
#[derive(Debug)]
enum Step {
    /// Fails on its own; the rest of the batch goes on.
    Fail(Error),
    /// The order already has the requested status: no event. Answers with the order as it is
    /// after round `after_round` (`None`: as locked).
    Unchanged { after_round: Option<usize> },
    /// Appends an event in round `round`.
    Event { round: usize },
}

/// A batch's decisions: one step per call (in arrival order) and the events to write, in rounds.
/// Round `r` holds each order's `r`-th event of the batch, so an order appears at most once per
/// round and its next event can chain to this one's seq.
#[derive(Debug)]
struct Plan {
    steps: Vec<Step>,
    rounds: Vec<Vec<EventWrite>>,
}

fn push(rounds: &mut Vec<Vec<EventWrite>>, round: usize, e: EventWrite) {
    if rounds.len() <= round {
        rounds.push(Vec::new());
    }
    rounds[round].push(e);
}

/// An order as the batch has left it so far.
struct Sim {
    status: Status,
    email: String,
    /// The round of the batch's latest event of the order.
    last_round: Option<usize>,
}

/// Decides every call of a batch in arrival order, against the locked rows and the effect of the
/// batch's earlier calls. Pure: the transition rules are `Status::can_change_to` (order.rs).
fn plan(locked: &HashMap<i64, Result<OrderRow, String>>, calls: &[Call<'_>]) -> Plan {
    let mut sims: HashMap<i64, Sim> = HashMap::new();
    let mut steps = Vec::with_capacity(calls.len());
    let mut rounds: Vec<Vec<EventWrite>> = Vec::new();
    for (cmd, trace) in calls {
        let id = cmd.id;
        let trace = trace.cloned();
        let sim = match sims.get_mut(&id) {
            Some(sim) => Some(sim),
            None => match locked.get(&id) {
                Some(Err(reason)) => {
                    steps.push(Step::Fail(Error::Corrupt {
                        id,
                        reason: reason.clone(),
                    }));
                    continue;
                }
                Some(Ok(row)) => Some(sims.entry(id).or_insert(Sim {
                    status: row.status,
                    email: row.customer_email.clone(),
                    last_round: None,
                })),
                None => None,
            },
        };
        let Some(sim) = sim else {
            // A new order: its creation is its first event, so it is in round 0.
            let Some(email) = cmd.customer_email.clone() else {
                steps.push(Step::Fail(Error::EmailRequiredOnCreate { id }));
                continue;
            };
            let payload = OrderPayload {
                id,
                status: cmd.status.to_proto() as i32,
                customer_email: email.clone(),
                previous_status: 0,
            };
            push(
                &mut rounds,
                0,
                EventWrite {
                    id,
                    status: cmd.status,
                    create_email: Some(email.clone()),
                    event: db::order_event(id, ORDER_CREATED, &payload, trace.as_ref()),
                },
            );
            sims.insert(
                id,
                Sim {
                    status: cmd.status,
                    email,
                    last_round: Some(0),
                },
            );
            steps.push(Step::Event { round: 0 });
            continue;
        };
        if sim.status == cmd.status {
            steps.push(Step::Unchanged {
                after_round: sim.last_round,
            });
            continue;
        }
        if !sim.status.can_change_to(cmd.status) {
            steps.push(Step::Fail(Error::ForbiddenTransition {
                id,
                from: sim.status.as_str(),
                to: cmd.status.as_str(),
            }));
            continue;
        }
        let round = sim.last_round.map_or(0, |r| r + 1);
        let payload = OrderPayload {
            id,
            status: cmd.status.to_proto() as i32,
            customer_email: sim.email.clone(),
            previous_status: sim.status.to_proto() as i32,
        };
        push(
            &mut rounds,
            round,
            EventWrite {
                id,
                status: cmd.status,
                create_email: None,
                event: db::order_event(id, ORDER_STATUS_CHANGED, &payload, trace.as_ref()),
            },
        );
        sim.status = cmd.status;
        sim.last_round = Some(round);
        steps.push(Step::Event { round });
    }
    Plan { steps, rounds }
}

#[cfg(test)]
mod tests {
    use chrono::Utc;

    use super::*;
    use Status::*;

    fn cmd(id: i64, status: Status, email: Option<&str>) -> UpsertCommand {
        UpsertCommand {
            id,
            status,
            customer_email: email.map(str::to_owned),
        }
    }

    fn row(id: i64, status: Status) -> OrderRow {
        OrderRow {
            id,
            status,
            customer_email: "a@example.com".into(),
            version: 1,
            last_event_seq: 10 * id,
            created_at: Utc::now(),
            updated_at: Utc::now(),
        }
    }

    fn kinds(plan: &Plan) -> Vec<String> {
        plan.steps
            .iter()
            .map(|s| match s {
                Step::Fail(Error::ForbiddenTransition { .. }) => "forbidden".into(),
                Step::Fail(Error::EmailRequiredOnCreate { .. }) => "email".into(),
                Step::Fail(Error::Corrupt { .. }) => "corrupt".into(),
                Step::Fail(e) => format!("{e}"),
                Step::Unchanged { after_round } => format!("same@{after_round:?}"),
                Step::Event { round } => format!("event@{round}"),
            })
            .collect()
    }

    #[test]
    fn decides_each_call_in_arrival_order() {
        let locked = HashMap::from([
            (1, Ok(row(1, Paid))),
            (2, Ok(row(2, Delivered))),
            (3, Err("unknown status".into())),
        ]);
        let calls = [
            cmd(1, Shipped, None),                  // change, round 0
            cmd(2, Paid, None),                     // forbidden: only this call fails
            cmd(1, Shipped, None),                  // same as after round 0
            cmd(4, Pending, None),                  // new order without email
            cmd(4, Pending, Some("b@example.com")), // creates it
            cmd(1, Delivered, None),                // second event of order 1: round 1
            cmd(1, Paid, None),                     // forbidden after the batch's own change
            cmd(4, Cancelled, None),                // chains to the creation
            cmd(3, Paid, None),                     // unreadable row
            cmd(2, Delivered, None),                // same as locked
        ];
        let with_trace: Vec<Call<'_>> = calls.iter().map(|c| (c, None)).collect();
        let plan = plan(&locked, &with_trace);
        assert_eq!(
            kinds(&plan),
            [
                "event@0",
                "forbidden",
                "same@Some(0)",
                "email",
                "event@0",
                "event@1",
                "forbidden",
                "event@1",
                "corrupt",
                "same@None"
            ]
        );
        let round = |r: usize| -> Vec<(i64, Status, bool)> {
            plan.rounds[r]
                .iter()
                .map(|e| (e.id, e.status, e.create_email.is_some()))
                .collect()
        };
        assert_eq!(plan.rounds.len(), 2);
        assert_eq!(round(0), [(1, Shipped, false), (4, Pending, true)]);
        // Each order's later events are in later rounds: the outbox chains them in that order.
        assert_eq!(round(1), [(1, Delivered, false), (4, Cancelled, false)]);
        let expected = OrderPayload {
            id: 1,
            status: Delivered.to_proto() as i32,
            customer_email: "a@example.com".into(),
            previous_status: Shipped.to_proto() as i32,
        };
        assert_eq!(
            plan.rounds[1][0].event,
            db::order_event(1, ORDER_STATUS_CHANGED, &expected, None)
        );
    }

    #[test]
    fn a_batch_of_no_ops_writes_nothing() {
        let locked = HashMap::from([(1, Ok(row(1, Paid)))]);
        let calls = [cmd(1, Paid, None), cmd(1, Pending, None)];
        let with_trace: Vec<Call<'_>> = calls.iter().map(|c| (c, None)).collect();
        let plan = plan(&locked, &with_trace);
        assert_eq!(kinds(&plan), ["same@None", "forbidden"]);
        assert!(plan.rounds.is_empty());
    }
}
