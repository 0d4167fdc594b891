//! The operator's statements on an outbox of any name: listings from the floor, quarantine
//! counts, and the two ways out of quarantine. Real PostgreSQL; no relay runs, so what is in the
//! tables is what the test put there.

use outbox::{NewEvent, Outbox};
use outbox_relay::operator::Operator;
use sqlx::PgPool;

use crate::support::db::Db;

/// Moves outbox row `seq` into quarantine, as the relay does with a row its encoder refuses.
async fn quarantine(pool: &PgPool, outbox: &Outbox, seq: i64) {
    let (events, quarantine) = (outbox.table().events(), outbox.table().quarantine());
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "with q as (delete from {events} where seq = $1 returning *)
         insert into {quarantine} (seq, aggregate_type, aggregate_id, event_type, prev_seq,
                                   routing_key, content_type, headers, payload, traceparent,
                                   created_at, reason)
         select seq, aggregate_type, aggregate_id, event_type, prev_seq, routing_key,
                content_type, headers, payload, traceparent, created_at, 'unreadable'
           from q"
    )))
    .bind(seq)
    .execute(pool)
    .await
    .expect("quarantine");
}

async fn present(pool: &PgPool, table: &str, seq: i64) -> bool {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "select exists (select 1 from {table} where seq = $1)"
    )))
    .bind(seq)
    .fetch_one(pool)
    .await
    .expect("lookup")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listings_and_moves_work_on_a_named_outbox() {
    let db = Db::at(
        outbox_testkit::fresh_database_url("outbox_operator"),
        "billing.events",
    )
    .await;
    let (pool, outbox) = (db.pool.clone(), db.outbox.clone());
    let op = Operator::new(outbox.table());

    // Invoice 7: three events; invoice 8: one.
    let events: Vec<NewEvent> = ["issued", "sent", "paid"]
        .into_iter()
        .map(|step| NewEvent::new("invoice", 7, step, "invoice.step", step.as_bytes().to_vec()))
        .chain([NewEvent::new(
            "invoice",
            8,
            "issued",
            "invoice.step",
            b"x".to_vec(),
        )])
        .collect();
    let mut tx = pool.begin().await.expect("begin");
    let appended = outbox.append_all(&mut tx, &events).await.expect("append");
    tx.commit().await.expect("commit");
    // In slice order: invoice 7's three, then invoice 8's (seqs go by rounds: 7's first and
    // 8's first, then 7's second, …).
    let seqs: Vec<i64> = appended.iter().map(|a| a.seq).collect();
    let mut in_seq_order = seqs.clone();
    in_seq_order.sort_unstable();

    let oldest = op.oldest_unsent(&pool, 10).await.expect("list");
    assert_eq!(
        oldest.iter().map(|r| r.seq).collect::<Vec<_>>(),
        in_seq_order
    );
    let second = oldest.iter().find(|r| r.seq == seqs[1]).expect("listed");
    assert_eq!(second.prev_seq, Some(seqs[0]), "the chain is listed");
    assert_eq!(op.oldest_unsent(&pool, 2).await.expect("list").len(), 2);
    assert_eq!(op.quarantine_counts(&pool).await.expect("counts"), (0, 0));

    // Invoice 7's first event is quarantined: its two later events wait behind it.
    quarantine(&pool, &outbox, seqs[0]).await;
    assert_eq!(op.quarantine_counts(&pool).await.expect("counts"), (1, 2));
    let listed = op.quarantined(&pool, 10, Some(7)).await.expect("list");
    assert_eq!(listed.len(), 1);
    assert_eq!(
        (
            listed[0].seq,
            listed[0].reason.as_str(),
            listed[0].held_back
        ),
        (seqs[0], "unreadable", 2)
    );
    assert!(
        op.quarantined(&pool, 10, Some(8))
            .await
            .expect("list")
            .is_empty()
    );
    let mut conn = pool.acquire().await.expect("connection");
    assert_eq!(
        op.quarantined_seqs(&mut conn, &[seqs[0], seqs[3], 999])
            .await
            .expect("seqs"),
        vec![seqs[0]]
    );
    assert_eq!(
        op.quarantined_seqs_of(&mut conn, 7).await.expect("seqs"),
        vec![seqs[0]]
    );
    drop(conn);

    // Back with its seq, in the caller's transaction.
    let mut tx = pool.begin().await.expect("begin");
    assert_eq!(
        op.requeue(&mut tx, &[seqs[0]]).await.expect("requeue"),
        vec![seqs[0]]
    );
    tx.commit().await.expect("commit");
    assert!(present(&pool, &outbox.table().events(), seqs[0]).await);
    assert_eq!(op.quarantine_counts(&pool).await.expect("counts"), (0, 0));

    // Quarantined again, then dropped for good: its content comes back as the record.
    quarantine(&pool, &outbox, seqs[0]).await;
    let mut tx = pool.begin().await.expect("begin");
    let (dropped, rows) = op.drop(&mut tx, &[seqs[0]]).await.expect("drop");
    tx.commit().await.expect("commit");
    assert_eq!(dropped, vec![seqs[0]]);
    assert_eq!(rows[0]["seq"], seqs[0]);
    assert_eq!(
        rows[0]["payload_hex"], "697373756564",
        "\"issued\" hex-encoded"
    );
    assert_eq!(rows[0]["quarantine_reason"], "unreadable");
    assert!(!present(&pool, &outbox.table().events(), seqs[0]).await);
    assert!(!present(&pool, &outbox.table().quarantine(), seqs[0]).await);
    // Nothing of the others moved.
    let left = op.oldest_unsent(&pool, 10).await.expect("list");
    in_seq_order.retain(|&s| s != seqs[0]);
    assert_eq!(left.iter().map(|r| r.seq).collect::<Vec<_>>(), in_seq_order);
}
