//! Section 2, the relay drain: relay-svc draining a pre-filled outbox vs a plain confirmed lapin
//! publisher.

use std::time::{Duration, Instant};

use lapin::{
    options::{
        BasicPublishOptions, ConfirmSelectOptions, ExchangeDeleteOptions, QueueDeclareOptions,
        QueueDeleteOptions,
    },
    types::FieldTable,
};
use outbox_proto::orders::events::v1::ORDER_STATUS_CHANGED;
use prost::Message;
use sqlx::PgPool;

use crate::{
    cpu::{CpuMeter, CpuUse},
    load::{
        events::{event_properties, sample_event},
        outbox::{fill_outbox, notify_relay},
        progress,
        stack::{amqp, bench_stack, drop_database, topic_to_queue},
    },
    stats::Summary,
};

/// A plain publisher doing what relay-svc asks of the broker: persistent, mandatory messages
/// with the relay's properties to a topic exchange bound to a durable queue, with confirms,
/// `window` in flight.
pub(super) async fn publish_ceiling(
    events: u64,
    window: usize,
) -> anyhow::Result<(Summary, CpuUse)> {
    let conn = amqp().await?;
    let ch = conn.create_channel().await?;
    let queue = outbox_testkit::unique("bench.ceiling");
    let exchange = format!("{queue}.events");
    topic_to_queue(&ch, &exchange, &queue).await?;
    ch.confirm_select(ConfirmSelectOptions::default()).await?;
    let body = sample_event(1, 1, Some(1)).encode_to_vec();
    // relay-svc stamps its connection's user on every message and the broker verifies it.
    let user = url::Url::parse(&outbox_testkit::amqp_url())?
        .username()
        .to_owned();
    let meter = CpuMeter::default();
    let before = meter.sample();
    let started = Instant::now();
    let mut sent = 0u64;
    while sent < events {
        let n = (window as u64).min(events - sent);
        let mut confirms = Vec::with_capacity(n as usize);
        for i in sent..sent + n {
            confirms.push(
                ch.basic_publish(
                    exchange.as_str().into(),
                    "order.status_changed".into(),
                    BasicPublishOptions {
                        mandatory: true,
                        ..Default::default()
                    },
                    &body,
                    event_properties(i + 1, 1, Some(i), ORDER_STATUS_CHANGED)
                        .with_user_id(user.as_str().into()),
                )
                .await?,
            );
        }
        for c in confirms {
            anyhow::ensure!(c.await?.is_ack(), "broker nacked");
        }
        sent += n;
    }
    let summary = Summary::new(events, started.elapsed(), Vec::new());
    let cpu = meter.sample().since(&before);
    ch.queue_delete(queue.as_str().into(), QueueDeleteOptions::default())
        .await?;
    ch.exchange_delete(exchange.as_str().into(), ExchangeDeleteOptions::default())
        .await?;
    Ok((summary, cpu))
}

/// relay-svc draining `events` rows committed at once (`orders` chains, in chain order).
pub(super) async fn relay_drain(events: u64, orders: u64) -> anyhow::Result<(Summary, CpuUse)> {
    let mut stack = bench_stack(1, 0).await?;
    let conn = amqp().await?;
    let ch = conn.create_channel().await?;
    let queue = outbox_testkit::unique("bench.drain");
    topic_to_queue(&ch, &stack.exchange, &queue).await?;
    let pool = PgPool::connect(&stack.orders_db_url).await?;
    fill_outbox(&pool, events, orders, 1).await?;
    let meter = stack.cpu_meter();
    let before = meter.sample();
    let started = Instant::now();
    notify_relay(&pool).await?;
    let mut last_report = Instant::now();
    // Progress from the queue's length (a passive declare, nothing on PostgreSQL): a count of
    // the outbox walks its dead rows too (7 ms a call at 100,000 rows), and polled every 20 ms
    // it took a quarter of PostgreSQL's core from the drain it measured.
    let passive = QueueDeclareOptions {
        passive: true,
        ..Default::default()
    };
    loop {
        let arrived = ch
            .queue_declare(queue.as_str().into(), passive, FieldTable::default())
            .await?
            .message_count() as u64;
        if arrived >= events {
            break;
        }
        if last_report.elapsed() > Duration::from_secs(2) {
            last_report = Instant::now();
            progress(format!("   {arrived} of {events} published"));
        }
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(600),
            "relay drain stalled at {arrived} of {events}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let summary = Summary::new(events, started.elapsed(), Vec::new());
    let cpu = meter.sample().since(&before);
    ch.queue_delete(queue.as_str().into(), QueueDeleteOptions::default())
        .await?;
    stack.stop().await;
    drop_database(&stack.orders_db_url).await;
    Ok((summary, cpu))
}
