//! Two instances race over thousands of shuffled and duplicated events for many orders: per
//! order, exactly one mail per event, in chain order; the counts add up exactly.

use std::collections::HashMap;

use outbox_proto::{
    mail::v1::MailState,
    orders::{events::v1::OrderEvent, v1::OrderStatus},
};
use rand::{Rng, SeedableRng, seq::SliceRandom};

use crate::common::{Names, Publisher, changed, config, created, eventually, start};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_instances_over_shuffled_duplicated_events() {
    let seed: u64 = rand::random();
    println!("seed {seed}");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let names = Names::new();
    let a = start(config(&names)).await;
    let b = start(config(&names)).await;
    let publisher = Publisher::connect(&names.exchange).await;

    // 400 orders with chains of 1..=6 events; seqs are global and interleave across orders,
    // as an outbox hands them out.
    const ORDERS: i64 = 400;
    let statuses = [
        OrderStatus::Paid,
        OrderStatus::Shipped,
        OrderStatus::Delivered,
        OrderStatus::Cancelled,
        OrderStatus::Paid,
    ];
    let mut lengths: HashMap<i64, usize> =
        (1..=ORDERS).map(|o| (o, rng.random_range(1..=6))).collect();
    let mut chains: HashMap<i64, Vec<u64>> = HashMap::new();
    let mut events: Vec<OrderEvent> = Vec::new();
    let mut seq = 0u64;
    while !lengths.is_empty() {
        let open: Vec<i64> = lengths.keys().copied().collect();
        let order = open[rng.random_range(0..open.len())];
        seq += 1;
        let chain = chains.entry(order).or_default();
        let email = format!("customer{order}@example.com");
        let ev = match chain.last() {
            None => created(seq, order, &email),
            Some(&prev) => changed(seq, prev, order, statuses[chain.len() - 1], &email),
        };
        chain.push(seq);
        events.push(ev);
        let left = lengths.get_mut(&order).expect("open order");
        *left -= 1;
        if *left == 0 {
            lengths.remove(&order);
        }
    }
    let total = events.len();
    // Half of the events are delivered twice, some three times.
    let mut deliveries = events.clone();
    for ev in &events {
        if rng.random_bool(0.5) {
            deliveries.push(ev.clone());
        }
        if rng.random_bool(0.1) {
            deliveries.push(ev.clone());
        }
    }
    deliveries.shuffle(&mut rng);
    let duplicates = deliveries.len() - total;
    println!("{total} events, {} deliveries", deliveries.len());
    publisher.pipelined(&deliveries).await;

    a.handled_all(total, duplicates).await;
    let instances: i64 =
        sqlx::query_scalar("select count(distinct instance) from counters where name = 'skipped'")
            .fetch_one(&a.pool)
            .await
            .expect("query");
    assert_eq!(
        instances, 2,
        "both instances consumed (and skipped duplicates)"
    );

    for (order, chain) in &chains {
        let mails = a.mails(*order).await;
        let seqs: Vec<u64> = mails.iter().map(|m| m.seq).collect();
        assert_eq!(
            &seqs, chain,
            "order {order}: one mail per event, in chain order"
        );
        assert!(mails[0].subject.contains("ご注文を受け付けました"));
        assert!(
            mails
                .iter()
                .all(|m| m.recipient == format!("customer{order}@example.com"))
        );
    }
    // Both instances answer from the same truth.
    assert_eq!(b.status().await.processed as usize, total);
    eventually("every mail delivered", 240, || async {
        (a.status().await.unsent_mails == 0).then_some(())
    })
    .await;
    for order in 1..=ORDERS.min(20) {
        assert!(
            a.mails(order)
                .await
                .iter()
                .all(|m| m.state == MailState::Sent as i32)
        );
    }
    // Per-order delivery order: sent_at never decreases along a chain.
    let out_of_order: i64 = sqlx::query_scalar(
        "select count(*) from mails m join mails n
            on n.order_id = m.order_id and n.seq > m.seq and n.sent_at < m.sent_at",
    )
    .fetch_one(&a.pool)
    .await
    .expect("query");
    assert_eq!(out_of_order, 0, "mails of an order were sent out of order");
    a.stop().await;
    b.stop().await;
    names.cleanup().await;
}
