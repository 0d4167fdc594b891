//! The inbox against the real PostgreSQL: duplicates, reordering (reversed, shuffled), two
//! concurrent consumers of one aggregate, conflicts, handler errors, batches, releases.

use outbox_inbox::{ApplyError, Chain, Envelope, Handler, Inbox, Outcome, Tables};
use sqlx::{PgConnection, PgPool};

use crate::support::fresh_inbox;

/// One row per handled event: a second row for one event would fail the unique constraint.
const HANDLED_TABLE: &str = "create table handled (n bigint generated always as identity,
    shard integer not null default 0, aggregate_id bigint, seq bigint, payload bytea,
    traceparent text, unique (shard, seq))";

/// A fresh database with an inbox and a `handled` table the handlers write to.
async fn setup(prefix: &str) -> (PgPool, Inbox, outbox_testkit::Made) {
    fresh_inbox(prefix, HANDLED_TABLE).await
}

/// The handler of these tests: one row per handled event, in handling order (a second row for
/// one seq would fail the unique constraint, so exactly-once is checked by the database too).
struct Record;

impl Handler for Record {
    type Error = sqlx::Error;
    async fn handle(&mut self, conn: &mut PgConnection, e: &Envelope) -> Result<(), sqlx::Error> {
        record(conn, e).await
    }
}

/// Records, but refuses the event of seq `.0`.
struct RefuseSeq(i64);

impl Handler for RefuseSeq {
    type Error = String;
    async fn handle(&mut self, conn: &mut PgConnection, e: &Envelope) -> Result<(), String> {
        if e.seq == self.0 {
            return Err(format!("seq {} is refused", e.seq));
        }
        record(conn, e).await.map_err(|e| e.to_string())
    }
}

async fn record(conn: &mut PgConnection, e: &Envelope) -> Result<(), sqlx::Error> {
    sqlx::query(
        "insert into handled (shard, aggregate_id, seq, payload, traceparent)
         values ($1, $2, $3, $4, $5)",
    )
    .bind(e.shard)
    .bind(e.aggregate_id)
    .bind(e.seq)
    .bind(&e.payload)
    .bind(e.traceparent.as_deref())
    .execute(conn)
    .await
    .map(drop)
}

/// Aggregate `id`'s chain of `len` events, seqs `base+1..=base+len`.
fn chain(id: i64, base: i64, len: i64) -> Vec<Envelope> {
    (1..=len)
        .map(|i| {
            let prev = (i > 1).then_some(base + i - 1);
            Envelope::new(
                id,
                base + i,
                prev,
                format!("{id}:{}", base + i).into_bytes(),
            )
        })
        .collect()
}

/// A deterministic shuffle (no randomness a failure could not replay).
fn shuffled(mut v: Vec<Envelope>, seed: u64) -> Vec<Envelope> {
    let mut x = seed;
    for i in (1..v.len()).rev() {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        v.swap(i, (x >> 33) as usize % (i + 1));
    }
    v
}

async fn apply_one(pool: &PgPool, inbox: &Inbox, e: &Envelope) -> Outcome {
    let mut tx = pool.begin().await.expect("begin");
    let outcome = inbox.apply(&mut tx, e, &mut Record).await.expect("apply");
    tx.commit().await.expect("commit");
    outcome
}

/// (aggregate, seq) of the handled events in handling order.
async fn handled(pool: &PgPool) -> Vec<(i64, i64)> {
    sqlx::query_as("select aggregate_id, seq from handled order by n")
        .fetch_all(pool)
        .await
        .expect("handled")
}

/// The seqs handled of `chain`, in handling order.
async fn handled_of(pool: &PgPool, chain: Chain) -> Vec<i64> {
    sqlx::query_scalar("select seq from handled where shard = $1 and aggregate_id = $2 order by n")
        .bind(chain.shard)
        .bind(chain.aggregate_id)
        .fetch_all(pool)
        .await
        .expect("handled")
}

async fn watermark(pool: &PgPool, table: &str, id: i64) -> Option<i64> {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "select last_seq from {table} where aggregate_id = $1"
    )))
    .bind(id)
    .fetch_optional(pool)
    .await
    .expect("watermark")
}

async fn held_count(pool: &PgPool, table: &str) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!("select count(*) from {table}")))
        .fetch_one(pool)
        .await
        .expect("held")
}

/// Handled seqs of one aggregate, in handling order.
fn of(h: &[(i64, i64)], id: i64) -> Vec<i64> {
    h.iter()
        .filter(|(a, _)| *a == id)
        .map(|(_, s)| *s)
        .collect()
}

#[tokio::test]
async fn duplicates_are_handled_once() {
    let (pool, inbox, _made) = setup("inbox").await;
    let c = chain(1, 0, 3);
    let mut outcomes = Vec::new();
    for e in [&c[0], &c[0], &c[2], &c[2], &c[1], &c[1], &c[2], &c[0]] {
        outcomes.push(apply_one(&pool, &inbox, e).await);
    }
    assert_eq!(
        outcomes,
        [
            Outcome::Processed { seqs: vec![1] },
            Outcome::Skipped { held: false },
            Outcome::Held { waiting_for: 2 },
            Outcome::Skipped { held: true },
            Outcome::Processed { seqs: vec![2, 3] },
            Outcome::Skipped { held: false },
            Outcome::Skipped { held: false },
            Outcome::Skipped { held: false },
        ]
    );
    assert_eq!(of(&handled(&pool).await, 1), [1, 2, 3]);
    assert_eq!(watermark(&pool, "inbox_progress", 1).await, Some(3));
    assert_eq!(held_count(&pool, "inbox_held").await, 0);
}

#[tokio::test]
async fn reversed_and_shuffled_chains_are_handled_in_chain_order() {
    let (pool, inbox, _made) = setup("billing.inbox").await;
    // Aggregate 1 fully reversed; aggregates 2..=5 shuffled together, with duplicates.
    let mut reversed = chain(1, 0, 20);
    reversed.reverse();
    for e in &reversed {
        apply_one(&pool, &inbox, e).await;
    }
    let mut mixed = Vec::new();
    for id in 2..=5 {
        mixed.extend(chain(id, id * 100, 15));
        mixed.extend(chain(id, id * 100, 15).into_iter().step_by(4));
    }
    for e in &shuffled(mixed, 7) {
        apply_one(&pool, &inbox, e).await;
    }
    let h = handled(&pool).await;
    assert_eq!(of(&h, 1), (1..=20).collect::<Vec<_>>());
    for id in 2..=5 {
        assert_eq!(
            of(&h, id),
            (id * 100 + 1..=id * 100 + 15).collect::<Vec<_>>()
        );
        assert_eq!(
            watermark(&pool, "billing.inbox_progress", id).await,
            Some(id * 100 + 15)
        );
    }
    assert_eq!(held_count(&pool, "billing.inbox_held").await, 0);
    // The released events carry their own payload and trace context.
    let (payload,): (Vec<u8>,) = sqlx::query_as("select payload from handled where seq = 20")
        .fetch_one(&pool)
        .await
        .expect("row");
    assert_eq!(payload, b"1:20");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_concurrent_consumers_of_one_aggregate_handle_each_event_once_in_order() {
    let (pool, inbox, _made) = setup("inbox").await;
    let events = chain(9, 0, 60);
    // Both consumers get every event (as after a redelivery storm), in different orders.
    let a = shuffled(events.clone(), 1);
    let b = shuffled(events, 2);
    let mut tasks = Vec::new();
    for deliveries in [a, b] {
        let (pool, inbox) = (pool.clone(), inbox.clone());
        tasks.push(tokio::spawn(async move {
            for e in &deliveries {
                apply_one(&pool, &inbox, e).await;
            }
        }));
    }
    for t in tasks {
        t.await.expect("consumer");
    }
    assert_eq!(of(&handled(&pool).await, 9), (1..=60).collect::<Vec<_>>());
    assert_eq!(watermark(&pool, "inbox_progress", 9).await, Some(60));
    assert_eq!(held_count(&pool, "inbox_held").await, 0);
}

/// Transactions of this test's database waiting for an advisory lock.
async fn waiting_for_locks(pool: &PgPool) -> i64 {
    sqlx::query_scalar(
        "select count(*) from pg_locks
          where locktype = 'advisory' and not granted
            and database = (select oid from pg_database where datname = current_database())",
    )
    .fetch_one(pool)
    .await
    .expect("pg_locks")
}

/// A writer of the caller's own state takes the aggregates' locks with `lock_aggregates`: a
/// delivery of one of them waits for its commit and then sees what it wrote; other aggregates
/// go on meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn lock_aggregates_serialises_with_the_processing_of_those_aggregates() {
    let (pool, inbox, _made) = setup("inbox").await;
    let mut writer = pool.begin().await.expect("begin");
    // Any order, repeats allowed.
    inbox
        .lock_aggregates(&mut writer, &[12, 5, 12])
        .await
        .expect("lock");
    sqlx::query("insert into handled (aggregate_id, seq, payload) values (5, 1000, 'writer')")
        .execute(&mut *writer)
        .await
        .expect("the writer's row");

    // Another aggregate is not held up.
    assert!(matches!(
        apply_one(&pool, &inbox, &Envelope::new(6, 1, None, b"6".to_vec())).await,
        Outcome::Processed { .. }
    ));
    let delivery = {
        let (pool, inbox) = (pool.clone(), inbox.clone());
        tokio::spawn(async move {
            let mut tx = pool.begin().await.expect("begin");
            let outcome = inbox
                .apply(
                    &mut tx,
                    &Envelope::new(5, 2, None, b"5".to_vec()),
                    &mut Record,
                )
                .await
                .expect("apply");
            // What the handler's transaction sees of the writer's row, after the lock.
            let seen: i64 = sqlx::query_scalar("select count(*) from handled where seq = 1000")
                .fetch_one(&mut *tx)
                .await
                .expect("read");
            tx.commit().await.expect("commit");
            (outcome, seen)
        })
    };
    let mut waits = 0;
    while waiting_for_locks(&pool).await == 0 {
        assert!(
            !delivery.is_finished(),
            "the delivery did not wait for the lock"
        );
        waits += 1;
        assert!(waits < 600, "the delivery never waited for the lock");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    writer.commit().await.expect("commit");
    let (outcome, seen) = delivery.await.expect("delivery");
    assert!(matches!(outcome, Outcome::Processed { .. }), "{outcome:?}");
    assert_eq!(seen, 1, "the delivery ran after the writer's commit");
    // No ids: nothing to lock, no statement.
    let mut tx = pool.begin().await.expect("begin");
    inbox.lock_aggregates(&mut tx, &[]).await.expect("no ids");
    tx.rollback().await.expect("rollback");
}

#[tokio::test]
async fn a_conflict_writes_nothing_and_says_why() {
    let (pool, inbox, _made) = setup("inbox").await;
    for e in &chain(3, 0, 2) {
        apply_one(&pool, &inbox, e).await;
    }
    // Two events claiming the same predecessor: the second contradicts the chain.
    let fork = Envelope::new(3, 7, Some(1), b"fork".to_vec());
    let second_first = Envelope::new(3, 8, None, b"again".to_vec());
    for e in [&fork, &second_first] {
        let Outcome::Conflict(c) = apply_one(&pool, &inbox, e).await else {
            panic!("not a conflict: {e:?}");
        };
        assert_eq!((c.aggregate_id, c.watermark, c.seq), (3, Some(2), e.seq));
        assert!(c.to_string().contains("chain conflict"), "{c}");
    }
    assert_eq!(of(&handled(&pool).await, 3), [1, 2]);
    assert_eq!(watermark(&pool, "inbox_progress", 3).await, Some(2));
    assert_eq!(held_count(&pool, "inbox_held").await, 0);
}

#[tokio::test]
async fn a_handler_error_rolls_everything_back() {
    let (pool, inbox, _made) = setup("inbox").await;
    let c = chain(4, 0, 4);
    for e in [&c[3], &c[2], &c[1]] {
        apply_one(&pool, &inbox, e).await;
    }
    // Seq 1 releases 2, 3, 4; the handler fails on 3.
    let mut tx = pool.begin().await.expect("begin");
    let err = inbox
        .apply(&mut tx, &c[0], &mut RefuseSeq(3))
        .await
        .expect_err("the handler fails");
    assert!(matches!(&err, ApplyError::Handler { seq: 3, source } if source == "seq 3 is refused"));
    assert!(err.to_string().contains("handling seq 3"), "{err}");
    drop(tx);
    // Nothing moved: no rows, no watermark, the held chain still held.
    assert!(handled(&pool).await.is_empty());
    assert_eq!(watermark(&pool, "inbox_progress", 4).await, None);
    assert_eq!(held_count(&pool, "inbox_held").await, 3);
    // And the redelivery goes through.
    assert_eq!(
        apply_one(&pool, &inbox, &c[0]).await,
        Outcome::Processed {
            seqs: vec![1, 2, 3, 4]
        }
    );
}

/// Applies `batch` in one transaction with the `handled` rows written by the batch statement.
async fn apply_batch(pool: &PgPool, inbox: &Inbox, batch: &[Envelope]) -> Vec<Option<Outcome>> {
    let mut tx = pool.begin().await.expect("begin");
    let planned = inbox.batch(&mut tx, batch).await.expect("plan");
    let (mut shards, mut ids, mut seqs, mut payloads) = (vec![], vec![], vec![], vec![]);
    for p in planned.processed() {
        shards.push(p.envelope.shard);
        ids.push(p.envelope.aggregate_id);
        seqs.push(p.envelope.seq);
        payloads.push(p.envelope.payload.clone());
    }
    let outcomes = planned
        .write(&mut tx, |q| {
            q.push(
                "mine as (insert into handled (shard, aggregate_id, seq, payload) \
                 select sh, a, s, p from unnest(",
            );
            q.push_bind(&shards);
            q.push("::integer[], ");
            q.push_bind(&ids);
            q.push("::bigint[], ");
            q.push_bind(&seqs);
            q.push("::bigint[], ");
            q.push_bind(&payloads);
            q.push("::bytea[]) with ordinality as t(sh, a, s, p, n) order by n),");
        })
        .await
        .expect("write");
    tx.commit().await.expect("commit");
    outcomes
}

#[tokio::test]
async fn batches_give_the_result_of_one_transaction_per_event() {
    let (pool, inbox, _made) = setup("inbox").await;
    let mut all = Vec::new();
    for id in 1..=6 {
        all.extend(chain(id, id * 1000, 12));
    }
    let mut deliveries = shuffled(all.clone(), 11);
    deliveries.extend(shuffled(all, 12)); // every event twice
    let mut outcomes = Vec::new();
    for batch in deliveries.chunks(17) {
        outcomes.extend(apply_batch(&pool, &inbox, batch).await);
    }
    let h = handled(&pool).await;
    for id in 1..=6 {
        assert_eq!(
            of(&h, id),
            (id * 1000 + 1..=id * 1000 + 12).collect::<Vec<_>>()
        );
    }
    assert_eq!(held_count(&pool, "inbox_held").await, 0);
    let skipped = outcomes
        .iter()
        .filter(|o| matches!(o, Some(Outcome::Skipped { .. })))
        .count();
    assert_eq!(skipped, 72, "every second copy is a duplicate");

    // An excluded aggregate is left alone; a conflict writes nothing.
    let mut tx = pool.begin().await.expect("begin");
    let tail = [
        Envelope::new(1, 1013, Some(1012), vec![]),
        Envelope::new(2, 2013, None, vec![]),
    ];
    let mut planned = inbox.batch(&mut tx, &tail).await.expect("plan");
    planned.exclude(&Chain::new(0, "", 1));
    assert_eq!(planned.processed().count(), 0);
    let outcomes = planned.write(&mut tx, |_| {}).await.expect("write");
    tx.commit().await.expect("commit");
    assert_eq!(outcomes[0], None);
    assert!(matches!(outcomes[1], Some(Outcome::Conflict(_))));
    assert_eq!(watermark(&pool, "inbox_progress", 1).await, Some(1012));
}

#[tokio::test]
async fn a_release_skips_the_gap_and_handles_the_held_chain() {
    let (pool, inbox, _made) = setup("inbox").await;
    let c = chain(5, 0, 6);
    apply_one(&pool, &inbox, &c[0]).await;
    // Seq 2 is lost; 3, 4 wait; seq 5 is lost too; 6 waits.
    for e in [&c[3], &c[2], &c[5]] {
        apply_one(&pool, &inbox, e).await;
    }
    let mut tx = pool.begin().await.expect("begin");
    let r = inbox
        .release_held(&mut tx, Chain::new(0, "", 5), &mut Record)
        .await
        .expect("release");
    tx.commit().await.expect("commit");
    assert_eq!((r.skipped, r.released), (vec![2, 5], vec![3, 4, 6]));
    assert_eq!(of(&handled(&pool).await, 5), [1, 3, 4, 6]);
    assert_eq!(watermark(&pool, "inbox_progress", 5).await, Some(6));
    // The lost event arriving later is a duplicate; nothing held: nothing released.
    assert_eq!(
        apply_one(&pool, &inbox, &c[1]).await,
        Outcome::Skipped { held: false }
    );
    let mut tx = pool.begin().await.expect("begin");
    let r = inbox
        .release_held(&mut tx, Chain::new(0, "", 5), &mut Record)
        .await
        .expect("release");
    assert!(r.released.is_empty() && r.skipped.is_empty() && r.stranded.is_empty());
}

#[tokio::test]
async fn a_forked_chains_other_branch_is_reported_stranded_not_released() {
    let (pool, inbox, _made) = setup("inbox").await;
    apply_one(&pool, &inbox, &Envelope::new(6, 1, None, vec![])).await;
    // Seqs 4 and 3 both claim seq 2; seq 2 arrives last and continues with seq 3.
    for e in [
        Envelope::new(6, 4, Some(2), vec![]),
        Envelope::new(6, 3, Some(2), vec![]),
        Envelope::new(6, 2, Some(1), vec![]),
    ] {
        apply_one(&pool, &inbox, &e).await;
    }
    assert_eq!(of(&handled(&pool).await, 6), [1, 2, 3]);
    let mut tx = pool.begin().await.expect("begin");
    let r = inbox
        .release_held(&mut tx, Chain::new(0, "", 6), &mut Record)
        .await
        .expect("release");
    assert_eq!((r.released, r.stranded), (vec![], vec![4]));
    assert_eq!(held_count(&pool, "inbox_held").await, 1, "it stays held");
}

#[tokio::test]
async fn existing_tables_under_other_names_work_the_same() {
    let (pool, _made) = crate::support::fresh_pool().await;
    sqlx::raw_sql(
        "create table order_progress (shard integer not null default 0,
             aggregate_type text not null, order_id bigint,
             last_seq bigint not null, primary key (shard, aggregate_type, order_id));
         create table held_events (shard integer not null default 0, seq bigint,
             aggregate_type text not null,
             order_id bigint not null, prev_seq bigint not null, event bytea not null,
             traceparent text, held_at timestamptz not null default now(),
             primary key (shard, seq));",
    )
    .execute(&pool)
    .await
    .expect("tables");
    sqlx::query(HANDLED_TABLE)
        .execute(&pool)
        .await
        .expect("handled table");
    let inbox = Inbox::with_tables(
        Tables::existing("order_progress", "held_events", "order_id").expect("names"),
    );
    let mut c = chain(8, 0, 3);
    c.reverse();
    for e in &c {
        apply_one(&pool, &inbox, e).await;
    }
    assert_eq!(of(&handled(&pool).await, 8), [1, 2, 3]);
    let w: i64 = sqlx::query_scalar("select last_seq from order_progress where order_id = 8")
        .fetch_one(&pool)
        .await
        .expect("watermark");
    assert_eq!(w, 3);
}

/// Aggregate `id`'s chain in shard `shard`: seqs `base+1..=base+len`.
fn sharded_chain(shard: i32, id: i64, base: i64, len: i64) -> Vec<Envelope> {
    chain(id, base, len)
        .into_iter()
        .map(|e| e.with_shard(shard))
        .collect()
}

/// A sharded producer numbers each shard's outbox from 1: the same seqs (and here even the same
/// aggregate id) in two shards are different events of different chains. Keyed by seq alone,
/// shard 1's events would be skipped as duplicates of shard 0's, or wait on its watermark.
#[tokio::test]
async fn shards_reuse_seqs_without_mixing_their_chains() {
    let (pool, inbox, _made) = setup("inbox").await;
    let mut all = Vec::new();
    for shard in 0..3 {
        all.extend(sharded_chain(shard, 7, 0, 6)); // one aggregate id in every shard
        all.extend(sharded_chain(shard, 10 + i64::from(shard), 6, 6));
    }
    let deliveries = shuffled(all.clone(), 5);
    // Half one by one, half in batches, then everything again (all duplicates).
    let (singles, batched) = deliveries.split_at(deliveries.len() / 2);
    for e in singles {
        apply_one(&pool, &inbox, e).await;
    }
    for batch in batched.chunks(7) {
        apply_batch(&pool, &inbox, batch).await;
    }
    let again = apply_batch(&pool, &inbox, &shuffled(all, 6)).await;
    assert!(
        again
            .iter()
            .all(|o| matches!(o, Some(Outcome::Skipped { held: false }))),
        "{again:?}"
    );
    for shard in 0..3 {
        assert_eq!(
            handled_of(&pool, Chain::new(shard, "", 7)).await,
            [1, 2, 3, 4, 5, 6]
        );
        let other = Chain::new(shard, "", 10 + i64::from(shard));
        assert_eq!(handled_of(&pool, other).await, [7, 8, 9, 10, 11, 12]);
    }
    assert_eq!(held_count(&pool, "inbox_held").await, 0);

    // A gap in one shard's chain holds that chain only; the release names the shard.
    let late = sharded_chain(2, 30, 20, 3);
    apply_one(&pool, &inbox, &sharded_chain(1, 30, 20, 3)[0]).await;
    apply_one(&pool, &inbox, &late[2]).await;
    apply_one(&pool, &inbox, &late[0]).await;
    let mut tx = pool.begin().await.expect("begin");
    let chains = inbox.held_chains(&mut tx, 30).await.expect("held chains");
    assert_eq!(chains, [Chain::new(2, "", 30)]);
    let r = inbox
        .release_held(&mut tx, chains[0].clone(), &mut Record)
        .await
        .expect("release");
    tx.commit().await.expect("commit");
    assert_eq!((r.skipped, r.released), (vec![22], vec![23]));
    assert_eq!(handled_of(&pool, Chain::new(2, "", 30)).await, [21, 23]);
    assert_eq!(handled_of(&pool, Chain::new(1, "", 30)).await, [21]);
}

/// A relay fleet publishes many outbox databases, each under its source id as the shard: two
/// tenants' databases number their events from 1 and may share aggregate ids and types. One
/// consumer of both needs no change: chains are keyed by (shard, type, id), so each source's
/// chain is deduplicated, ordered and held on its own, and one source stopping mid-chain (its
/// database down, its relay moving to another instance) holds nothing of the other's.
#[tokio::test]
async fn two_sources_with_the_same_seqs_and_ids_are_independent_chains() {
    let (pool, inbox, _made) = setup("inbox").await;
    let (acme, globex) = (7, 41); // source ids, not indexes: any two distinct ones
    let source = |shard: i32, id: i64, base: i64, len: i64| -> Vec<Envelope> {
        sharded_chain(shard, id, base, len)
            .into_iter()
            .map(|e| e.with_aggregate_type("invoice"))
            .collect()
    };
    // Both sources: invoice 1, seqs 1..=4, byte for byte the same but for the shard.
    let (a, g) = (source(acme, 1, 0, 4), source(globex, 1, 0, 4));
    let of = |shard| Chain::new(shard, "invoice", 1);

    // acme's 1 and 2 arrive, then its 4: acme stops mid-chain (its 3 not delivered yet: its
    // database down, or its relay moving to another instance), and its 4 waits.
    apply_one(&pool, &inbox, &a[0]).await;
    apply_one(&pool, &inbox, &a[1]).await;
    assert_eq!(
        apply_one(&pool, &inbox, &a[3]).await,
        Outcome::Held { waiting_for: 3 }
    );
    // globex's chain in reverse: its 4 is held beside acme's 4, its 1 is not taken for a
    // duplicate of acme's, and its chain completes while acme's still waits.
    for e in g.iter().rev() {
        apply_one(&pool, &inbox, e).await;
    }
    // globex's 5 and 6, continuing its chain.
    let more: Vec<Envelope> = [(5, 4), (6, 5)]
        .into_iter()
        .map(|(seq, prev)| {
            Envelope::new(1, seq, Some(prev), format!("1:{seq}").into_bytes())
                .with_shard(globex)
                .with_aggregate_type("invoice")
        })
        .collect();
    for e in &more {
        apply_one(&pool, &inbox, e).await;
    }
    assert_eq!(handled_of(&pool, of(globex)).await, [1, 2, 3, 4, 5, 6]);
    assert_eq!(handled_of(&pool, of(acme)).await, [1, 2]);
    assert_eq!(held_count(&pool, "inbox_held").await, 1);

    // acme's 3 comes (after its database is back): acme's chain completes, in order, and every
    // event of both, delivered again, is a duplicate of its own source only.
    apply_one(&pool, &inbox, &a[2]).await;
    assert_eq!(handled_of(&pool, of(acme)).await, [1, 2, 3, 4]);
    let again: Vec<Envelope> = a.iter().chain(&g).chain(&more).cloned().collect();
    let outcomes = apply_batch(&pool, &inbox, &shuffled(again, 9)).await;
    assert!(
        outcomes
            .iter()
            .all(|o| matches!(o, Some(Outcome::Skipped { held: false }))),
        "{outcomes:?}"
    );
    assert_eq!(held_count(&pool, "inbox_held").await, 0);
}

/// An inbox made by the first release of the crate (keyed by seq alone) is upgraded in place:
/// its watermarks and held events become shard 0's, and go on working.
#[tokio::test]
async fn the_shard_migration_keeps_an_existing_inbox() {
    let (pool, _made) = crate::support::fresh_pool().await;
    let inbox = Inbox::new("old.inbox").expect("prefix");
    let full = inbox.tables().migrator().expect("migrator");
    let mut first = inbox.tables().migrator().expect("migrator");
    first.migrations = full.migrations[..1].to_vec().into();
    first.run(&pool).await.expect("migration 1");
    sqlx::raw_sql(
        "insert into old.inbox_progress (aggregate_id, last_seq) values (4, 2);
         insert into old.inbox_held (seq, aggregate_id, prev_seq, event) values (4, 4, 3, 'x')",
    )
    .execute(&pool)
    .await
    .expect("old rows");
    full.run(&pool).await.expect("migration 2");
    sqlx::query(HANDLED_TABLE)
        .execute(&pool)
        .await
        .expect("handled table");
    let c = chain(4, 0, 4);
    assert_eq!(
        apply_one(&pool, &inbox, &c[1]).await,
        Outcome::Skipped { held: false }
    );
    assert_eq!(
        apply_one(&pool, &inbox, &c[2]).await,
        Outcome::Processed { seqs: vec![3, 4] },
        "the old held event is shard 0's"
    );
    assert_eq!(
        apply_one(&pool, &inbox, &c[0].clone().with_shard(1)).await,
        Outcome::Processed { seqs: vec![1] },
        "shard 1 is a chain of its own"
    );
}
