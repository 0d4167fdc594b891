//! Figures, not assertions (ignored by default; run with
//! `cargo test -p relay-svc --release --test bench -- --ignored --nocapture`):
//! idle database load of one leader + one standby, and commit-to-consume latency.

mod common;

use std::time::{Duration, Instant};

use common::*;
use outbox_kit::testing;
use outbox_proto::orders::v1::OrderStatus;

async fn xact_count(orders: &Orders) -> i64 {
    // Every statement the relays run outside a transaction block is one transaction here.
    sqlx::query_scalar(
        "select (xact_commit + xact_rollback)::bigint from pg_stat_database where datname = $1",
    )
    .bind(&orders.database)
    .fetch_one(&orders.pool)
    .await
    .expect("pg_stat_database")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "prints figures"]
async fn idle_load_and_latency() {
    let orders = Orders::start().await;
    let exchange = testing::unique("relay_ex");
    let consumer = Consumer::start(&exchange, Some("#")).await;
    let cfg = || {
        let mut c = relay_config(&orders.database_url, &testing::amqp_url(), &exchange);
        // The shipped defaults, not the test ones.
        c.poll_interval_ms = 1_000;
        c.standby_retry_ms = 1_000;
        c
    };
    let leader = Relay::start(cfg()).await;
    let _standby = Relay::start(cfg()).await;
    let seq = orders.upsert(999_999, OrderStatus::Pending).await;
    wait_until("warm", || async { consumer.has_all(&[seq]) }).await;
    let _ = leader.status().await;

    tokio::time::sleep(Duration::from_secs(2)).await;
    let window = Duration::from_secs(20);
    let before = xact_count(&orders).await;
    tokio::time::sleep(window).await;
    let after = xact_count(&orders).await;
    // Minus our own two stats queries.
    let per_sec = (after - before - 1) as f64 / window.as_secs_f64();
    println!("idle: {per_sec:.2} transactions/s on the orders database (leader + standby)");

    let mut lat = Vec::new();
    for i in 0..200 {
        let id = 100_000 + i;
        let t0 = Instant::now();
        let seq = orders.upsert(id, OrderStatus::Pending).await;
        let committed = t0.elapsed();
        while !consumer.has_all(&[seq]) {
            tokio::time::sleep(Duration::from_micros(200)).await;
        }
        // Upsert returns after the commit: subtract nothing, report response-to-consume too.
        lat.push(t0.elapsed().saturating_sub(committed));
    }
    lat.sort();
    let p = |q: f64| lat[((lat.len() as f64 - 1.0) * q) as usize];
    println!(
        "commit-to-consume (upsert returned -> consumer has it), 200 sequential events: p50 {:?} p90 {:?} p99 {:?} max {:?}",
        p(0.5),
        p(0.9),
        p(0.99),
        lat[lat.len() - 1]
    );

    let t0 = Instant::now();
    let events = spawn_writers(&orders.client, 16, 25, Duration::ZERO)
        .await
        .expect("writers");
    let all: Vec<u64> = events.iter().map(|(_, s)| *s).collect();
    wait_until("burst consumed", || async { consumer.has_all(&all) }).await;
    println!(
        "burst: {} events from 16 concurrent writers written and consumed in {:?}",
        all.len(),
        t0.elapsed()
    );
    consumer.cleanup().await;
}
