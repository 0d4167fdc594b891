//! Many clients upserting the same and different orders at once: every order's events form a
//! gap-free chain in commit order, and every event a client was told about is in the outbox.

use std::collections::{BTreeMap, BTreeSet};

use outbox_proto::orders::{
    events::v1::OrderPayload,
    v1::{OrderStatus, STATUSES},
};
use prost::Message;
use rand::Rng;
use sqlx::PgPool;

use crate::common::{self, outbox, start};

/// Runs `tasks` x `per_task` random upserts over orders `1..=orders`, returns the seqs the
/// service reported.
async fn hammer(
    t: &common::TestOrders,
    tasks: usize,
    per_task: usize,
    orders: i64,
) -> BTreeSet<u64> {
    let mut handles = Vec::new();
    for _ in 0..tasks {
        let client = t.client.clone();
        handles.push(tokio::spawn(async move {
            let mut seqs = Vec::new();
            for _ in 0..per_task {
                let (id, status) = {
                    let mut rng = rand::rng();
                    (
                        rng.random_range(1..=orders),
                        STATUSES[rng.random_range(0..STATUSES.len())],
                    )
                };
                let request = common::req(id, status, "load@example.com");
                match client.clone().upsert(request).await {
                    Ok(resp) => seqs.extend(resp.into_inner().event_seq),
                    Err(e) => assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e:?}"),
                }
            }
            seqs
        }));
    }
    let mut all = BTreeSet::new();
    for h in handles {
        for seq in h.await.expect("task") {
            assert!(all.insert(seq), "seq {seq} reported twice");
        }
    }
    all
}

/// Checks every order's chain in the outbox against the orders table; returns the event count.
async fn check_chains(pool: &PgPool) -> usize {
    let rows = outbox(pool).await;
    let mut chains: BTreeMap<i64, Vec<&common::OutboxRow>> = BTreeMap::new();
    for row in &rows {
        chains.entry(row.aggregate_id).or_default().push(row);
    }
    for (id, chain) in &chains {
        let mut previous: Option<&common::OutboxRow> = None;
        let mut previous_status = OrderStatus::Unspecified as i32;
        for row in chain {
            let payload = OrderPayload::decode(row.payload.as_slice()).expect("payload");
            match previous {
                None => {
                    assert_eq!(row.event_type, "OrderCreated", "order {id}");
                    assert_eq!(row.prev_seq, None, "order {id}");
                }
                Some(p) => {
                    assert_eq!(row.event_type, "OrderStatusChanged", "order {id}");
                    assert_eq!(row.prev_seq, Some(p.seq), "order {id}: chain broken");
                    assert!(row.seq > p.seq);
                }
            }
            assert_eq!(
                payload.previous_status, previous_status,
                "order {id} seq {}",
                row.seq
            );
            assert_ne!(payload.status, previous_status);
            previous_status = payload.status;
            previous = Some(row);
        }
        let (version, last_event_seq, status): (i64, i64, String) =
            sqlx::query_as("select version, last_event_seq, status from orders where id = $1")
                .bind(id)
                .fetch_one(pool)
                .await
                .expect("order row");
        assert_eq!(
            version as usize,
            chain.len(),
            "order {id}: one event per version"
        );
        assert_eq!(last_event_seq, chain.last().expect("non-empty").seq);
        let expected = OrderStatus::try_from(previous_status)
            .expect("status")
            .as_str_name();
        assert!(
            expected.ends_with(&status.to_uppercase()),
            "order {id}: {status} vs {expected}"
        );
    }
    rows.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_clients_over_five_orders_keep_every_chain() {
    let t = start().await;
    let reported = hammer(&t, 50, 20, 5).await;
    let events = check_chains(&t.pool).await;
    assert_eq!(events, reported.len());
    let stored: BTreeSet<u64> = outbox(&t.pool).await.iter().map(|r| r.seq as u64).collect();
    assert_eq!(
        stored, reported,
        "every reported event is in the outbox, and nothing else"
    );
    let orders = common::count(&t.pool, "orders").await;
    assert_eq!(orders, 5, "every order got created exactly once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_clients_over_many_orders_keep_every_chain() {
    let t = start().await;
    let reported = hammer(&t, 50, 40, 300).await;
    let events = check_chains(&t.pool).await;
    assert_eq!(events, reported.len());
    assert!(events > 300, "load produced events: {events}");
}
