//! Aggregate types sharing ids: the outbox chains events per `(aggregate_type, aggregate_id)`,
//! so `invoice 1` and `shipment 1` are two chains. Interleaved, duplicated and reversed, through
//! the one-event path and the batch path, against the real PostgreSQL.

use outbox_inbox::{Envelope, Handler, Inbox, Outcome};
use sqlx::{PgConnection, PgPool};

use crate::support::fresh_inbox;

/// One row per handled event; a second row for one seq fails the unique constraint.
const HANDLED_TABLE: &str = "create table handled (n bigint generated always as identity,
    aggregate_type text, aggregate_id bigint, seq bigint unique)";

async fn setup() -> (PgPool, Inbox, outbox_testkit::Made) {
    fresh_inbox("inbox", HANDLED_TABLE).await
}

struct Record;

impl Handler for Record {
    type Error = sqlx::Error;
    async fn handle(&mut self, conn: &mut PgConnection, e: &Envelope) -> Result<(), sqlx::Error> {
        sqlx::query("insert into handled (aggregate_type, aggregate_id, seq) values ($1, $2, $3)")
            .bind(&e.aggregate_type)
            .bind(e.aggregate_id)
            .bind(e.seq)
            .execute(conn)
            .await
            .map(drop)
    }
}

/// Two types, ids 1..=3 each, three events per aggregate, with seqs from ONE outbox (unique
/// across types, each type's chain linked by prev_seq), in append order.
fn events() -> Vec<Envelope> {
    let mut seq = 0;
    let mut last = std::collections::HashMap::new();
    let mut out = Vec::new();
    for _round in 0..3 {
        for id in 1..=3 {
            for t in ["invoice", "shipment"] {
                seq += 1;
                let prev = last.insert((t, id), seq);
                out.push(
                    Envelope::new(id, seq, prev, format!("{t}:{id}:{seq}").into_bytes())
                        .with_aggregate_type(t),
                );
            }
        }
    }
    out
}

/// Each aggregate's handled seqs, in handling order.
async fn handled(pool: &PgPool, t: &str, id: i64) -> Vec<i64> {
    sqlx::query_scalar(
        "select seq from handled where aggregate_type = $1 and aggregate_id = $2 order by n",
    )
    .bind(t)
    .bind(id)
    .fetch_all(pool)
    .await
    .expect("handled")
}

async fn assert_every_chain_in_order(pool: &PgPool, all: &[Envelope]) {
    for t in ["invoice", "shipment"] {
        for id in 1..=3 {
            let want: Vec<i64> = all
                .iter()
                .filter(|e| e.aggregate_type == t && e.aggregate_id == id)
                .map(|e| e.seq)
                .collect();
            assert_eq!(handled(pool, t, id).await, want, "{t} {id}");
        }
    }
}

#[tokio::test]
async fn two_types_sharing_ids_are_two_chains_one_by_one() {
    let (pool, inbox, _made) = setup().await;
    let all = events();
    // Reversed, with every event delivered twice: no first event is taken for "a second first
    // event" of the other type, nothing is handled twice, each chain in its order.
    let mut deliveries: Vec<&Envelope> = all.iter().rev().collect();
    deliveries.extend(all.iter());
    let mut conflicts = 0;
    for e in deliveries {
        let mut tx = pool.begin().await.expect("begin");
        let outcome = inbox.apply(&mut tx, e, &mut Record).await.expect("apply");
        if matches!(outcome, Outcome::Conflict(_)) {
            conflicts += 1;
        }
        tx.commit().await.expect("commit");
    }
    assert_eq!(conflicts, 0);
    assert_every_chain_in_order(&pool, &all).await;
}

#[tokio::test]
async fn two_types_sharing_ids_are_two_chains_in_batches() {
    let (pool, inbox, _made) = setup().await;
    let all = events();
    // Interleaved in batches of five, the second half first, then all again (duplicates).
    let mut order: Vec<Envelope> = all[all.len() / 2..].to_vec();
    order.extend_from_slice(&all[..all.len() / 2]);
    order.extend_from_slice(&all);
    for batch in order.chunks(5) {
        let mut tx = pool.begin().await.expect("begin");
        let planned = inbox.batch(&mut tx, batch).await.expect("plan");
        let processed: Vec<(String, i64, i64)> = planned
            .processed()
            .map(|p| {
                let e = p.envelope;
                (e.aggregate_type.clone(), e.aggregate_id, e.seq)
            })
            .collect();
        let outcomes = planned.write(&mut tx, |_| {}).await.expect("write");
        assert!(
            !outcomes
                .iter()
                .any(|o| matches!(o, Some(Outcome::Conflict(_)))),
            "{outcomes:?}"
        );
        for (t, id, seq) in processed {
            sqlx::query(
                "insert into handled (aggregate_type, aggregate_id, seq) values ($1, $2, $3)",
            )
            .bind(t)
            .bind(id)
            .bind(seq)
            .execute(&mut *tx)
            .await
            .expect("handled once");
        }
        tx.commit().await.expect("commit");
    }
    assert_every_chain_in_order(&pool, &all).await;
}
