//! Figures, not assertions (ignored by default; run with
//! `cargo test -p relay-svc --release --test it bench:: -- --ignored --nocapture`):
//! idle database load of one leader + one standby, and commit-to-consume latency; and the
//! relay's drain rate next to the broker ceiling measured in the same run
//! (`RELAY_BENCH_EVENTS`, `RELAY_BENCH_BATCH` and `RELAY_BENCH_ROUNDS` change its sizes).

use std::time::{Duration, Instant};

use lapin::{
    BasicProperties, Connection, ConnectionProperties,
    options::{
        BasicPublishOptions, ConfirmSelectOptions, QueueBindOptions, QueueDeclareOptions,
        QueueDeleteOptions,
    },
    types::FieldTable,
};
use outbox_proto::orders::{
    events::v1::{ORDER_STATUS_CHANGED, OrderEvent, ROUTING_KEY_STATUS_CHANGED},
    v1::OrderStatus,
};
use prost::Message;

use crate::common::*;

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
    let exchange = outbox_testkit::unique("relay_ex");
    let consumer = Consumer::start(&exchange, Some("#")).await;
    let cfg = || {
        let mut c = relay_config(&orders.database_url, &outbox_testkit::amqp_url(), &exchange);
        // The shipped defaults, not the test ones.
        c.poll_interval = outbox_relay::DEFAULT_POLL_INTERVAL;
        c.standby_retry = outbox_relay::DEFAULT_STANDBY_RETRY;
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

/// CPU seconds this process (the relay, and the benchmark's own publisher) has used so far.
fn cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // The fields after the parenthesised command: utime and stime are the 12th and 13th.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A durable queue of its own (nobody consumes it) on a connection of its own, deleted with the
/// connection by [`BenchQueue::delete`].
struct BenchQueue {
    conn: Connection,
    ch: lapin::Channel,
    name: String,
}

impl BenchQueue {
    async fn declare() -> Self {
        let conn =
            Connection::connect(&outbox_testkit::amqp_url(), ConnectionProperties::default())
                .await
                .expect("connect");
        let ch = conn.create_channel().await.expect("channel");
        let name = outbox_testkit::unique("relay_bench_q");
        ch.queue_declare(
            name.as_str().into(),
            QueueDeclareOptions {
                durable: true,
                ..Default::default()
            },
            FieldTable::default(),
        )
        .await
        .expect("queue");
        Self { conn, ch, name }
    }

    /// The queue, bound to `exchange` for every routing key.
    async fn bound_to(exchange: &str) -> Self {
        let queue = Self::declare().await;
        queue
            .ch
            .queue_bind(
                queue.name.as_str().into(),
                exchange.into(),
                "#".into(),
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await
            .expect("bind");
        queue
    }

    async fn delete(self) {
        self.ch
            .queue_delete(self.name.as_str().into(), QueueDeleteOptions::default())
            .await
            .expect("delete queue");
        let _ = self.conn.close(200, "bench done".into()).await;
    }
}

/// The ceiling: a plain lapin publisher, persistent messages of the relay's size to a durable
/// queue, `window` in flight per round of confirms (as the relay's waves). Events/s and CPU
/// seconds of this process per 1,000 events.
async fn publish_ceiling(events: i64, window: usize) -> (f64, f64) {
    let queue = BenchQueue::declare().await;
    let ch = &queue.ch;
    ch.confirm_select(ConfirmSelectOptions::default())
        .await
        .expect("confirms");
    let body = OrderEvent {
        seq: 1,
        r#type: ORDER_STATUS_CHANGED.into(),
        aggregate_id: 1,
        prev_seq: Some(1),
        payload: Some(
            prost::Message::decode(payload(1, OrderStatus::Paid, OrderStatus::Pending).as_slice())
                .expect("payload"),
        ),
        ts_ms: 0,
    }
    .encode_to_vec();
    let started = Instant::now();
    let cpu = cpu_secs();
    let mut sent = 0;
    while sent < events {
        let n = (window as i64).min(events - sent);
        let mut confirms = Vec::with_capacity(n as usize);
        for _ in 0..n {
            confirms.push(
                ch.basic_publish(
                    "".into(),
                    queue.name.as_str().into(),
                    BasicPublishOptions::default(),
                    &body,
                    BasicProperties::default().with_delivery_mode(2),
                )
                .await
                .expect("publish"),
            );
        }
        for c in confirms {
            assert!(c.await.expect("confirm").is_ack());
        }
        sent += n;
    }
    let rate = events as f64 / started.elapsed().as_secs_f64();
    let cpu = (cpu_secs() - cpu) * 1_000.0 / events as f64;
    queue.delete().await;
    (rate, cpu)
}

/// The relay's own publisher and wire format without the database: `events` messages built from
/// outbox rows (1,000 orders) through the topic exchange with `mandatory`, properties and
/// headers, in waves of `window`. Events/s. Tells the broker's cost of the relay's messages
/// apart from the relay's database work.
async fn relay_format_ceiling(events: i64, window: usize) -> f64 {
    let exchange = outbox_testkit::unique("relay_ex");
    let consumer = Consumer::start(&exchange, None).await;
    let queue = BenchQueue::bound_to(&exchange).await;
    let publisher = outbox_relay::Publisher::connect(
        &outbox_testkit::amqp_url(),
        &Default::default(),
        outbox_support::amqp::DEFAULT_HEARTBEAT,
        &exchange,
        Duration::from_secs(30),
        |_| {},
    )
    .await
    .expect("publisher");
    let body = payload(1, OrderStatus::Paid, OrderStatus::Pending);
    let messages: Vec<outbox_relay::Outgoing> = (0..events)
        .map(|i| {
            outbox_relay::Outgoing::from_row(&outbox_relay::OutboxRow {
                seq: i + 1,
                aggregate_type: "order".into(),
                aggregate_id: 1 + i % 1_000,
                event_type: ORDER_STATUS_CHANGED.into(),
                prev_seq: (i >= 1_000).then_some(i + 1 - 1_000),
                routing_key: Some(ROUTING_KEY_STATUS_CHANGED.into()),
                content_type: Some(outbox::wire::CONTENT_TYPE_PROTOBUF.into()),
                headers: None,
                payload: body.clone(),
                traceparent: None,
                created_at: chrono::Utc::now(),
            })
            .expect("encodes")
        })
        .collect();
    let started = Instant::now();
    for wave in messages.chunks(window) {
        let wave: Vec<&outbox_relay::Outgoing> = wave.iter().collect();
        let outcomes = publisher
            .publish(&wave, Duration::from_secs(30), &Default::default())
            .await
            .expect("wave");
        assert!(
            outcomes
                .iter()
                .all(|o| *o == outbox_relay::Outcome::Delivered)
        );
    }
    let rate = events as f64 / started.elapsed().as_secs_f64();
    publisher.close().await;
    queue.delete().await;
    consumer.cleanup().await;
    rate
}

/// relay-svc draining `events` rows committed at once over 1,000 orders into a durable queue
/// (nobody consumes it, as in the ceiling). Events/s and CPU seconds of this process (the
/// relay; orders-svc idles) per 1,000 events.
async fn relay_drain(events: i64, batch: u32) -> (f64, f64) {
    let orders = Orders::start().await;
    let exchange = outbox_testkit::unique("relay_ex");
    let consumer = Consumer::start(&exchange, None).await;
    let queue = BenchQueue::bound_to(&exchange).await;
    let mut cfg = relay_config(&orders.database_url, &outbox_testkit::amqp_url(), &exchange);
    cfg.batch_size = batch;
    let relay = Relay::start(cfg).await;
    wait_until("the relay leads", || async { relay.status().await.active }).await;
    preload(&orders.pool, events, 1_000).await;
    let started = Instant::now();
    let cpu = cpu_secs();
    sqlx::query("select pg_notify($1, '')")
        .bind(outbox_kit::outbox::NOTIFY_CHANNEL)
        .execute(&orders.pool)
        .await
        .expect("notify");
    loop {
        let left: i64 = sqlx::query_scalar("select count(*) from outbox")
            .fetch_one(&orders.pool)
            .await
            .expect("count");
        if left == 0 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "drain stalled"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let rate = events as f64 / started.elapsed().as_secs_f64();
    let cpu = (cpu_secs() - cpu) * 1_000.0 / events as f64;
    queue.delete().await;
    consumer.cleanup().await;
    (rate, cpu)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "prints figures"]
async fn drain_against_the_broker_ceiling() {
    let events: i64 = env_or("RELAY_BENCH_EVENTS", 30_000);
    let batch: u32 = env_or("RELAY_BENCH_BATCH", 256);
    let rounds: usize = env_or("RELAY_BENCH_ROUNDS", 3);
    let mut ratios = Vec::new();
    for round in 1..=rounds {
        let (ceiling, ceiling_cpu) = publish_ceiling(events, batch as usize).await;
        let format = relay_format_ceiling(events, batch as usize).await;
        let (drain, drain_cpu) = relay_drain(events, batch).await;
        let ratio = drain / ceiling;
        ratios.push(ratio);
        println!(
            "round {round}: {events} events, BATCH_SIZE {batch}: broker ceiling {ceiling:.0}/s ({ceiling_cpu:.2} CPU s/1k), relay's messages without the database {format:.0}/s = {:.0}%, relay drain {drain:.0}/s ({drain_cpu:.2} CPU s/1k) = {:.0}%",
            100.0 * format / ceiling,
            100.0 * ratio
        );
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "relay drain / broker ceiling: median {:.0}% (min {:.0}%, max {:.0}%)",
        100.0 * ratios[ratios.len() / 2],
        100.0 * ratios[0],
        100.0 * ratios[ratios.len() - 1]
    );
}
