//! The consumer's extension points, against the real RabbitMQ and PostgreSQL: a handler that
//! stages a batch's writes into the batch's one statement, counts duplicates before the commit,
//! reports every committed delivery, words its conflicts and classifies its errors; a chain it
//! cannot stage; a data error and a database outage; a handler that stops the consumer; the
//! consuming flag, the retry and dead-letter callbacks and the durable dead-letter record.

use std::{
    num::{NonZeroU16, NonZeroUsize},
    ops::ControlFlow,
    sync::{Arc, Mutex, atomic::Ordering},
    time::Duration,
};

use outbox_inbox::{
    Conflict, Envelope, Handler, Inbox, Outcome,
    amqp::{Consumer, DEATH_REASON_HEADER},
    failure::Failure,
};
use sqlx::{PgConnection, PgPool, Postgres, QueryBuilder};

use crate::{
    amqp::{Broker, header, relayed},
    consumer::{GATE, Log, handled, handled_count, protobuf, setup, ten_behind_the_gate, until},
    support::{accept_all, consume_while},
};

/// What the test's handlers and callbacks saw, shared by every transaction's handler.
#[derive(Clone, Default)]
struct Seen {
    /// (seq, outcome) of each committed delivery, in the order reported.
    committed: Arc<Mutex<Vec<(i64, Outcome)>>>,
    consuming: Arc<Mutex<Vec<bool>>>,
    dead_letters: Arc<Mutex<Vec<String>>>,
    retries: Arc<Mutex<Vec<Failure>>>,
}

/// A handler that stages each chain's events into the batch's statement (the gate's chain and a
/// refused aggregate's go through `handle`, which [`Log`] implements).
struct Staging {
    log: Log,
    seen: Seen,
    /// The aggregate whose chain `stage` refuses.
    refuse: Option<i64>,
    /// The seq whose `committed` stops the consumer.
    stop_at: Option<i64>,
    staged: (Vec<i64>, Vec<i64>),
    counted: i64,
}

impl Staging {
    fn new(log: &Log, seen: &Seen) -> Self {
        Self {
            log: log.clone(),
            seen: seen.clone(),
            refuse: None,
            stop_at: None,
            staged: Default::default(),
            counted: 0,
        }
    }
}

impl Handler for Staging {
    type Error = String;

    async fn handle(&mut self, conn: &mut PgConnection, e: &Envelope) -> Result<(), String> {
        self.log.handle(conn, e).await
    }

    fn classify(error: &String) -> Failure {
        if error.contains("bad value") {
            Failure::Poison
        } else {
            Failure::Transient
        }
    }

    fn stage(&mut self, chain: &[&Envelope]) -> Option<Result<(), String>> {
        let aggregate = chain[0].aggregate_id;
        if aggregate == GATE {
            return None;
        }
        if self.refuse == Some(aggregate) {
            return Some(Err(format!("aggregate {aggregate} cannot be staged")));
        }
        for e in chain {
            self.staged.0.push(e.aggregate_id);
            self.staged.1.push(e.seq);
        }
        Some(Ok(()))
    }

    fn push_writes(&mut self, q: &mut QueryBuilder<Postgres>, duplicates: i64) {
        q.push(
            "staged as (insert into handled (aggregate_id, seq, tx)
                        select a, s, txid_current() from unnest(",
        );
        q.push_bind(self.staged.0.clone()).push("::bigint[], ");
        q.push_bind(self.staged.1.clone()).push(
            "::bigint[]) as t(a, s)),\n dups as (insert into skip_counts select n from (values (",
        );
        q.push_bind(duplicates)
            .push("::bigint)) as v(n) where n > 0),\n");
        self.counted = duplicates;
    }

    async fn before_commit(
        &mut self,
        conn: &mut PgConnection,
        outcomes: &[&Outcome],
    ) -> Result<(), String> {
        let skips = outcomes
            .iter()
            .filter(|o| matches!(o, Outcome::Skipped { .. }))
            .count() as i64;
        if skips > self.counted {
            sqlx::query("insert into skip_counts values ($1)")
                .bind(skips - self.counted)
                .execute(conn)
                .await
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    fn committed(&mut self, e: &Envelope, outcome: &Outcome) -> ControlFlow<()> {
        let mut seen = self.seen.committed.lock().expect("lock");
        seen.push((e.seq, outcome.clone()));
        if self.stop_at == Some(e.seq) {
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    fn conflict_reason(&self, c: &Conflict) -> String {
        format!("seq {} breaks invoice {}'s chain", c.seq, c.aggregate_id)
    }
}

/// The consumer with every callback reporting to `seen`, the dead letters recorded in the
/// database.
fn consumer(b: &Broker, seen: &Seen, batch: usize) -> Consumer {
    let (consuming, dead, retries) = (seen.clone(), seen.clone(), seen.clone());
    Consumer::new(b.topology.clone())
        .with_batch(
            NonZeroUsize::new(batch).expect("non-zero"),
            Duration::from_secs(5),
        )
        .with_prefetch(NonZeroU16::new(32).expect("non-zero"))
        .with_retry_backoff(Duration::from_millis(50), Duration::from_millis(200))
        .with_attempt_timeout(Duration::from_secs(20))
        .on_consuming(move |c| consuming.consuming.lock().expect("lock").push(c))
        .on_dead_letter(move |_, reason| {
            dead.dead_letters.lock().expect("lock").push(reason.into())
        })
        .on_retry(move |r| {
            let mut seen = retries.retries.lock().expect("lock");
            seen.push(r.failure);
        })
        .record_dead_letters(|conn, delivery, reason| {
            let tag = delivery.delivery_tag as i64;
            let reason = reason.to_owned();
            Box::pin(async move {
                sqlx::query("insert into dead_letters (tag, reason) values ($1, $2)")
                    .bind(tag)
                    .bind(reason)
                    .execute(conn)
                    .await
                    .map(drop)
            })
        })
}

async fn setup_tables() -> (Broker, PgPool, Inbox) {
    let (b, pool, inbox) = setup().await;
    for sql in [
        "create table skip_counts (n bigint not null)",
        "create table dead_letters (tag bigint, reason text)",
    ] {
        sqlx::query(sql).execute(&pool).await.expect("table");
    }
    (b, pool, inbox)
}

/// Runs a consumer of batches of ten, staging with [`Staging`] (refusing the chain of aggregate
/// `refuse`), over a gate event and the ten deliveries of [`publish_ten`] gathered into one batch
/// behind it (see `consumer::consume_gate_then_ten`), until `handled` events are handled and
/// `dead` dead-lettered. Returns what the callbacks saw and the consumer (for its counts).
async fn gate_then_ten(
    b: &Broker,
    pool: &PgPool,
    inbox: &Inbox,
    refuse: Option<i64>,
    handled: i64,
    dead: u32,
) -> (Seen, Consumer) {
    let (log, seen) = (Log::default(), Seen::default());
    let consumer = consumer(b, &seen, 10);
    let make = || Staging {
        refuse,
        ..Staging::new(&log, &seen)
    };
    let done = async || {
        handled_count(pool).await == handled && b.ready(&b.topology.dead_letter_queue).await == dead
    };
    b.publish_with("invoice.paid", &relayed(GATE, 901, None), protobuf())
        .await;
    consume_while(&consumer, (b, pool, inbox), make, async {
        ten_behind_the_gate(b, &log).await;
        until("the batch is settled", done).await;
    })
    .await;
    (seen, consumer)
}

/// Publishes invoice 1's chain, seqs 1 to `len`, in order.
async fn publish_chain(b: &Broker, len: u64) {
    for seq in 1..=len {
        let prev = (seq > 1).then(|| seq - 1);
        b.publish_with("invoice.paid", &relayed(1, seq, prev), protobuf())
            .await;
    }
}

/// The counts of a [`gate_then_ten`] run that handled seven events: the batch's two duplicates
/// skipped (and counted by the batch's statement, before its commit), two held, two
/// dead-lettered.
async fn assert_gate_then_ten_counts(consumer: &Consumer, pool: &PgPool) {
    let c = consumer.counts();
    assert_eq!(
        (c.processed, c.skipped, c.held, c.dead_lettered),
        (7, 2, 2, 2)
    );
    assert_eq!(
        scalar(pool, "select coalesce(sum(n), 0)::bigint from skip_counts").await,
        2,
        "the duplicates counted in the batch's statement and before its commit"
    );
}

async fn scalar(pool: &PgPool, sql: &'static str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.expect(sql)
}

/// The transactions that handled aggregates 1 to 3's events.
async fn transactions(pool: &PgPool, aggregates: &[i64]) -> Vec<i64> {
    let mut txs = Vec::new();
    for &a in aggregates {
        txs.extend(handled(pool, a).await.1);
    }
    txs.sort_unstable();
    txs.dedup();
    txs
}

async fn dead_letter_reasons(b: &Broker) -> Vec<String> {
    let mut reasons = Vec::new();
    while let Some(dead) = b.dead_letter_get().await {
        reasons.push(header(&dead.delivery.properties, DEATH_REASON_HEADER));
    }
    reasons.sort();
    reasons
}

#[tokio::test]
async fn a_staged_batch_is_written_in_its_one_statement_and_every_outcome_is_reported() {
    let (b, pool, inbox) = setup_tables().await;
    let (seen, consumer) = gate_then_ten(&b, &pool, &inbox, None, 7, 2).await;
    assert_eq!(handled(&pool, 1).await.0, [1, 2, 3], "reversed, duplicated");
    assert_eq!(handled(&pool, 2).await.0, [11, 12]);
    assert_eq!(handled(&pool, 3).await.0, [21]);
    assert_eq!(
        transactions(&pool, &[1, 2, 3]).await.len(),
        1,
        "the batch's six events in one transaction"
    );
    assert_gate_then_ten_counts(&consumer, &pool).await;
    // Every committed delivery reported once, the gate's first, the batch's in delivery order.
    let committed: Vec<i64> = seen
        .committed
        .lock()
        .expect("lock")
        .iter()
        .map(|c| c.0)
        .collect();
    assert_eq!(committed, [901, 3, 11, 2, 1, 11, 21, 2, 12]);
    assert_eq!(
        scalar(&pool, "select count(*) from dead_letters").await,
        2,
        "each dead letter recorded before its ack"
    );
    let reasons = dead_letter_reasons(&b).await;
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert!(reasons[0].contains("not an outbox envelope"), "{reasons:?}");
    assert_eq!(
        reasons[1], "seq 22 breaks invoice 3's chain",
        "in the handler's words"
    );
    let mut called = seen.dead_letters.lock().expect("lock").clone();
    called.sort();
    assert_eq!(called, reasons, "on_dead_letter saw each");
    assert_eq!(*seen.consuming.lock().expect("lock"), [true, false]);
    b.cleanup_settled("everything was settled").await;
}

#[tokio::test]
async fn a_chain_that_cannot_be_staged_is_applied_on_its_own_while_the_batch_commits() {
    let (b, pool, inbox) = setup_tables().await;
    let (_, consumer) = gate_then_ten(&b, &pool, &inbox, Some(2), 7, 2).await;
    assert_eq!(handled(&pool, 1).await.0, [1, 2, 3]);
    assert_eq!(handled(&pool, 2).await.0, [11, 12], "applied on their own");
    assert_eq!(handled(&pool, 3).await.0, [21]);
    let batch = transactions(&pool, &[1, 3]).await;
    assert_eq!(
        batch.len(),
        1,
        "invoices 1 and 3 in the batch's transaction"
    );
    let alone = transactions(&pool, &[2]).await;
    assert!(
        alone.iter().all(|tx| !batch.contains(tx)),
        "invoice 2's events in transactions of their own: {alone:?} vs {batch:?}"
    );
    assert_gate_then_ten_counts(&consumer, &pool).await;
    assert_eq!(
        b.ready(&b.topology.queue).await,
        0,
        "everything was settled"
    );
    let _ = dead_letter_reasons(&b).await;
    b.cleanup().await;
}

#[tokio::test]
async fn a_data_error_dead_letters_only_its_delivery_with_the_reason() {
    let (b, pool, inbox) = setup_tables().await;
    // Seq 12 cannot be stored (22023, a data exception: the event's own data).
    for sql in [
        "create function bad_value() returns trigger language plpgsql as $$
         begin raise exception 'bad value' using errcode = '22023'; end $$",
        "create trigger bad_value before insert on handled
           for each row when (new.seq = 12) execute function bad_value()",
    ] {
        sqlx::query(sql).execute(&pool).await.expect("install");
    }
    let (seen, consumer) = gate_then_ten(&b, &pool, &inbox, None, 6, 3).await;
    assert_eq!(handled(&pool, 1).await.0, [1, 2, 3]);
    assert_eq!(handled(&pool, 2).await.0, [11], "12 dead-lettered");
    assert_eq!(handled(&pool, 3).await.0, [21]);
    let reasons = dead_letter_reasons(&b).await;
    assert!(
        reasons
            .iter()
            .any(|r| r.starts_with("cannot be stored: ") && r.contains("bad value")),
        "{reasons:?}"
    );
    assert_eq!(scalar(&pool, "select count(*) from dead_letters").await, 3);
    assert_eq!(consumer.counts().dead_lettered, 3);
    assert!(
        seen.retries.lock().expect("lock").is_empty(),
        "a data error is not tried again"
    );
    b.cleanup_settled("everything was settled").await;
}

#[tokio::test]
async fn a_database_outage_is_tried_again_until_it_commits() {
    let (b, pool, inbox) = setup_tables().await;
    // Every insert into `handled` fails with 55P03 (lock not available: the database's trouble,
    // not the events') while `fault` says so.
    outbox_testkit::install_fault(
        &mut pool.acquire().await.expect("connection"),
        "insert on handled",
        "55P03",
    )
    .await;
    let (log, seen) = (Log::default(), Seen::default());
    log.gate.store(true, Ordering::SeqCst);
    let consumer = consumer(&b, &seen, 10);
    publish_chain(&b, 6).await;
    consume_while(
        &consumer,
        (&b, &pool, &inbox),
        || Staging::new(&log, &seen),
        async {
            until("tried again a few times", async || {
                consumer.counts().retries >= 3
            })
            .await;
            assert_eq!(
                handled_count(&pool).await,
                0,
                "nothing of a failed attempt stays"
            );
            sqlx::query("update fault set on_ = false")
                .execute(&pool)
                .await
                .expect("heal");
            until("all applied", async || handled_count(&pool).await == 6).await;
        },
    )
    .await;
    assert_eq!(handled(&pool, 1).await.0, [1, 2, 3, 4, 5, 6]);
    let c = consumer.counts();
    assert_eq!(
        (c.processed, c.dead_lettered),
        (6, 0),
        "a database error dead-letters nothing"
    );
    let retries = seen.retries.lock().expect("lock").clone();
    assert_eq!(retries.len() as u64, c.retries, "on_retry saw each");
    assert!(
        retries.iter().all(|f| *f == Failure::Transient),
        "{retries:?}"
    );
    assert_eq!(b.ready(&b.topology.queue).await, 0, "everything was acked");
    b.cleanup().await;
}

#[tokio::test]
async fn a_handler_that_breaks_after_the_commit_stops_the_consumer_leaving_its_delivery_unacked() {
    let (b, pool, inbox) = setup_tables().await;
    let (log, seen) = (Log::default(), Seen::default());
    log.gate.store(true, Ordering::SeqCst);
    let consumer = consumer(&b, &seen, 1);
    publish_chain(&b, 3).await;
    let brokers = outbox_inbox::amqp::Failover::new(outbox_testkit::amqp_url());
    tokio::time::timeout(
        Duration::from_secs(60),
        consumer.run_reconnecting(
            &brokers,
            &pool,
            &inbox,
            accept_all,
            || Staging {
                stop_at: Some(2),
                ..Staging::new(&log, &seen)
            },
            // Never: the handler stops it.
            std::future::pending::<()>(),
        ),
    )
    .await
    .expect("the consumer stops on its own");
    assert_eq!(
        handled(&pool, 1).await.0,
        [1, 2],
        "committed before the stop"
    );
    until("seq 2 and 3 back in the queue", async || {
        b.ready(&b.topology.queue).await == 2
    })
    .await;
    let c = consumer.counts();
    assert_eq!(
        (c.processed, c.reconnects),
        (2, 0),
        "no reconnect after a stop"
    );
    assert_eq!(*seen.consuming.lock().expect("lock"), [true, false]);
    b.cleanup().await;
}
