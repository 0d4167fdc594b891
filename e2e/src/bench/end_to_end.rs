//! Section 4, end to end: commit→publish and commit→mail latency at fixed offered loads and at
//! the maximum.

use std::{
    collections::HashMap,
    sync::{
        Arc, Mutex,
        atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering},
    },
    time::{Duration, Instant, SystemTime},
};

use anyhow::Context;
use futures::StreamExt;
use lapin::options::BasicQosOptions;
use outbox_proto::orders::events::v1::OrderEvent;
use prost::Message;
use sqlx::PgPool;

use super::report::EndToEndRun;
use crate::{
    load::{orders::request_for, stack::amqp},
    stack::Stack,
    stats::Summary,
};

/// Drives upserts (open loop at `offered`/s, or closed loop with `writers` when `None`), and
/// measures from each Upsert's response (sent right after COMMIT) to the event's arrival on an
/// independent queue bound to the exchange, and to mail-svc queueing its mail.
pub(super) async fn end_to_end(
    stack: &Stack,
    offered: Option<u64>,
    secs: f64,
    writers: usize,
) -> anyhow::Result<EndToEndRun> {
    static BASE: AtomicI64 = AtomicI64::new(1_000_000);
    let base = BASE.fetch_add(100_000_000, Ordering::Relaxed);
    let conn = amqp().await?;
    let ch = conn.create_channel().await?;
    ch.basic_qos(1000, BasicQosOptions::default()).await?;
    let mut consumer = stack.tap(&ch, &outbox_testkit::unique("bench-e2e")).await?;
    let received: Arc<Mutex<HashMap<u64, SystemTime>>> = Arc::default();
    let rx = received.clone();
    let consuming = tokio::spawn(async move {
        while let Some(Ok(delivery)) = consumer.next().await {
            let now = SystemTime::now();
            if let Ok(event) = OrderEvent::decode(delivery.data.as_slice()) {
                rx.lock().expect("received").entry(event.seq).or_insert(now);
            }
        }
    });

    let committed: Arc<Mutex<HashMap<u64, SystemTime>>> = Arc::default();
    let next = Arc::new(AtomicI64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let errors = Arc::new(AtomicU64::new(0));
    let meter = stack.cpu_meter();
    let before = meter.sample();
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(secs);
    let mut tasks = Vec::new();
    let record = |committed: &Arc<Mutex<HashMap<u64, SystemTime>>>,
                  resp: Result<
        tonic::Response<outbox_proto::orders::v1::UpsertOrderResponse>,
        tonic::Status,
    >,
                  errors: &AtomicU64| {
        let now = SystemTime::now();
        match resp.map(|r| r.into_inner().event_seq) {
            Ok(Some(seq)) => {
                committed.lock().expect("committed").insert(seq, now);
            }
            _ => {
                errors.fetch_add(1, Ordering::Relaxed);
            }
        }
    };
    match offered {
        Some(rate) => {
            let client = stack.orders_client().await?;
            let mut ticker = tokio::time::interval(Duration::from_secs_f64(1.0 / rate as f64));
            ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
            while Instant::now() < deadline {
                ticker.tick().await;
                let i = next.fetch_add(1, Ordering::Relaxed);
                let (mut client, committed, errors) =
                    (client.clone(), committed.clone(), errors.clone());
                tasks.push(tokio::spawn(async move {
                    let resp = client.upsert(request_for(base, i)).await;
                    record(&committed, resp, &errors);
                }));
            }
        }
        None => {
            for _ in 0..writers {
                let mut client = stack.orders_client().await?;
                let (committed, errors, next, stop) = (
                    committed.clone(),
                    errors.clone(),
                    next.clone(),
                    stop.clone(),
                );
                tasks.push(tokio::spawn(async move {
                    while !stop.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let resp = client.upsert(request_for(base, i)).await;
                        record(&committed, resp, &errors);
                    }
                }));
            }
            tokio::time::sleep_until(deadline.into()).await;
            stop.store(true, Ordering::Relaxed);
        }
    }
    for t in tasks {
        t.await?;
    }
    let load_secs = started.elapsed();
    let committed = committed.lock().expect("committed").clone();
    let events = committed.len() as u64;
    anyhow::ensure!(
        errors.load(Ordering::Relaxed) == 0,
        "{} upserts failed",
        errors.load(Ordering::Relaxed)
    );

    // Wait until every event reached the queue and mail-svc.
    let mail_pool = PgPool::connect(&stack.mail_db_url).await?;
    let seqs: Vec<i64> = committed.keys().map(|&s| s as i64).collect();
    let wait_started = Instant::now();
    let mailed: HashMap<u64, SystemTime> = loop {
        let arrived = received.lock().expect("received").len() as u64;
        let rows: Vec<(i64, chrono::DateTime<chrono::Utc>)> = sqlx::query_as(MAIL_QUEUED_AT_SQL)
            .bind(&seqs)
            .fetch_all(&mail_pool)
            .await
            .context("reading mail-svc's mails")?;
        if arrived >= events && rows.len() as u64 >= events {
            break rows
                .into_iter()
                .map(|(s, t)| (s as u64, SystemTime::from(t)))
                .collect();
        }
        anyhow::ensure!(
            wait_started.elapsed() < Duration::from_secs(300),
            "end to end stalled: {arrived} published, {} mailed of {events}",
            rows.len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let all_done = started.elapsed();
    let cpu = meter.sample().since(&before);
    consuming.abort();
    let received = received.lock().expect("received").clone();
    let since = |at: &HashMap<u64, SystemTime>| -> Vec<Duration> {
        committed
            .iter()
            .filter_map(|(seq, c)| {
                at.get(seq)
                    .map(|t| t.duration_since(*c).unwrap_or_default())
            })
            .collect()
    };
    let last_mail = mailed.values().max().copied();
    let first_commit = committed.values().min().copied();
    let span = match (first_commit, last_mail) {
        (Some(a), Some(b)) => b.duration_since(a).unwrap_or(all_done),
        _ => all_done,
    };
    Ok(EndToEndRun {
        cpu,
        achieved_per_sec: events as f64 / span.as_secs_f64().max(1e-9),
        commit_to_publish: Summary::new(events, load_secs, since(&received)),
        commit_to_mail: Summary::new(events, span, since(&mailed)),
    })
}

/// mail-svc's record of when each mail was queued (its `mails` table).
const MAIL_QUEUED_AT_SQL: &str = "select seq, queued_at from mails where seq = any($1)";
