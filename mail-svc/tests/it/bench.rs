//! Processing rate next to its ceiling, measured in the same run (prints figures, asserts
//! none): a plain lapin consumer acking each message of a pre-loaded quorum queue, then mail-svc
//! working through the same number of pre-loaded events (batched, then with `BATCH_SIZE=1`, one
//! transaction per event as before batching). Ignored by default: it loads the shared machine.
//!
//! ```text
//! cargo test -p mail-svc --test it bench:: -- --ignored --nocapture
//! MAIL_BENCH_EVENTS=50000 MAIL_BENCH_ORDERS=1000 cargo test --release -p mail-svc --test it bench:: -- --ignored --nocapture
//! ```
//!
//! Knobs: `MAIL_BENCH_EVENTS` (20,000), `MAIL_BENCH_ORDERS` (1,000), `MAIL_BENCH_PREFETCH` (256,
//! the ceiling's and the service's), `MAIL_BENCH_CONCURRENCY` (16), `MAIL_BENCH_WINDOW_MS` (5),
//! `MAIL_BENCH_SINGLE=0` (skip the `BATCH_SIZE=1` run).

use std::time::{Duration, Instant};

use futures::StreamExt;
use lapin::{
    BasicProperties, Connection, ConnectionProperties,
    options::{
        BasicAckOptions, BasicConsumeOptions, BasicQosOptions, QueueDeclareOptions,
        QueueDeleteOptions,
    },
    types::{AMQPValue, FieldTable},
};
use outbox_proto::orders::v1::OrderStatus;
use outbox_testkit::preload;
use prost::Message;

use crate::common::{self, Names, changed, config, created, start};

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Event `i` of the load: `orders` orders, each order's chain in order, orders interleaved (as
/// the e2e bench loads it).
fn event(i: u64, orders: u64) -> (String, Vec<u8>, BasicProperties) {
    let order = (i % orders) as i64 + 1;
    let seq = i + 1;
    let email = format!("customer{order}@example.com");
    let ev = if i >= orders {
        changed(seq, seq - orders, order, OrderStatus::Paid, &email)
    } else {
        created(seq, order, &email)
    };
    let key = common::Publisher::routing_key(&ev.r#type).to_owned();
    let props = common::Publisher::relay_properties(&ev, None);
    (key, ev.encode_to_vec(), props)
}

/// Messages per second of a plain consumer (`prefetch`, one ack per message).
async fn ceiling(n: u64, prefetch: u16) -> f64 {
    let conn = Connection::connect(&outbox_testkit::amqp_url(), ConnectionProperties::default())
        .await
        .expect("connect");
    let ch = conn.create_channel().await.expect("channel");
    let queue = outbox_testkit::unique("mail_bench_ceiling");
    let mut args = FieldTable::default();
    args.insert(
        "x-queue-type".into(),
        AMQPValue::LongString("quorum".into()),
    );
    ch.queue_declare(
        queue.as_str().into(),
        QueueDeclareOptions {
            durable: true,
            ..QueueDeclareOptions::default()
        },
        args,
    )
    .await
    .expect("declare");
    let q = queue.clone();
    preload(
        &ch,
        "",
        move |i| {
            let (_, body, props) = event(i, 1000);
            (q.clone(), body, props)
        },
        n,
    )
    .await
    .expect("preload");
    let consumer_ch = conn.create_channel().await.expect("channel");
    consumer_ch
        .basic_qos(prefetch, BasicQosOptions::default())
        .await
        .expect("qos");
    let mut consumer = consumer_ch
        .basic_consume(
            queue.as_str().into(),
            "".into(),
            BasicConsumeOptions::default(),
            FieldTable::default(),
        )
        .await
        .expect("consume");
    let started = Instant::now();
    for _ in 0..n {
        let d = consumer.next().await.expect("delivery").expect("delivery");
        d.ack(BasicAckOptions::default()).await.expect("ack");
    }
    let rate = n as f64 / started.elapsed().as_secs_f64();
    ch.queue_delete(queue.as_str().into(), QueueDeleteOptions::default())
        .await
        .expect("delete");
    outbox_support::amqp::close(&conn, "bye").await;
    rate
}

/// Events per second mail-svc processes from a pre-loaded queue.
async fn mail_svc(n: u64, orders: u64, batch_size: u16) -> f64 {
    let names = Names::new();
    let (conn, ch) = names.declare().await;
    preload(&ch, &names.exchange, |i| event(i, orders), n)
        .await
        .expect("preload");
    outbox_support::amqp::close(&conn, "bye").await;
    // The database exists and is migrated before the clock starts (as for a restarted service).
    let pool = outbox_kit::db::connect(&names.database_url, 2)
        .await
        .expect("database");
    mail_svc::db::MIGRATOR.run(&pool).await.expect("migrate");
    pool.close().await;

    // The service's defaults, but for the names and the batch size.
    let mut cfg = config(&names);
    cfg.db_max_connections = 20;
    cfg.consumer_concurrency = 16;
    cfg.mailer_concurrency = 4;
    cfg.batch_size = batch_size;
    cfg.prefetch = env_u64("MAIL_BENCH_PREFETCH", 256) as u16;
    cfg.consumer_concurrency = env_u64("MAIL_BENCH_CONCURRENCY", 16) as u16;
    cfg.batch_window = Duration::from_millis(env_u64("MAIL_BENCH_WINDOW_MS", 5));
    let started = Instant::now();
    let svc = start(cfg).await;
    loop {
        let s = svc.status().await;
        if s.processed as u64 >= n {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(900),
            "stalled at {}",
            s.processed
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let rate = n as f64 / started.elapsed().as_secs_f64();
    // Mails queued by one transaction share `queued_at`.
    let transactions: i64 = sqlx::query_scalar("select count(distinct queued_at) from mails")
        .fetch_one(&svc.pool)
        .await
        .expect("query");
    println!(
        "BATCH_SIZE={batch_size}: {n} events in {transactions} transactions ({:.1} per transaction)",
        n as f64 / transactions as f64
    );
    svc.stop().await;
    names.cleanup().await;
    // The tens of thousands of mails are not worth keeping.
    outbox_testkit::drop_database(outbox_testkit::database_name(&names.database_url))
        .await
        .expect("drop the bench database");
    rate
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a benchmark: run it on its own with --ignored --nocapture"]
async fn processing_rate_next_to_the_consume_ceiling() {
    let n = env_u64("MAIL_BENCH_EVENTS", 20_000);
    let orders = env_u64("MAIL_BENCH_ORDERS", 1_000);
    let prefetch = env_u64("MAIL_BENCH_PREFETCH", 256) as u16;
    let ceiling = ceiling(n, prefetch).await;
    let batched = mail_svc(n, orders, 64).await;
    // MAIL_BENCH_SINGLE=0 skips the one-transaction-per-event run.
    let single = if env_u64("MAIL_BENCH_SINGLE", 1) == 1 {
        Some(mail_svc(n, orders, 1).await)
    } else {
        None
    };
    println!("consume ceiling (lapin consume+ack, prefetch {prefetch}): {ceiling:>8.0} msg/s");
    println!(
        "mail-svc, BATCH_SIZE=64:                        {batched:>8.0} events/s = {:.0} % of the ceiling",
        100.0 * batched / ceiling
    );
    if let Some(single) = single {
        println!(
            "mail-svc, BATCH_SIZE=1 (one transaction each):  {single:>8.0} events/s = {:.0} % of the ceiling",
            100.0 * single / ceiling
        );
    }
}
