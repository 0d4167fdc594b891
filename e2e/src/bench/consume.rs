//! Section 3, the consume path: mail-svc on a pre-loaded queue vs a plain lapin consume+ack loop.

use std::time::Instant;

use anyhow::Context;
use futures::StreamExt;
use lapin::{
    options::{
        BasicAckOptions, BasicConsumeOptions, BasicQosOptions, QueueDeclareOptions,
        QueueDeleteOptions,
    },
    types::{AMQPValue, FieldTable},
};
use prost::Message;

use crate::{
    cpu::{CpuMeter, CpuUse},
    load::{
        events::{persistent, preload, sample_event},
        mail::{Done, MailRun, mail_consume_until},
        stack::amqp,
    },
    scaling::ScalingRun,
    stats::Summary,
};

fn quorum() -> FieldTable {
    let mut args = FieldTable::default();
    args.insert(
        "x-queue-type".into(),
        AMQPValue::LongString("quorum".into()),
    );
    args
}

/// A plain consumer on a pre-loaded quorum queue: ack each message, `prefetch` unacked.
pub(super) async fn consume_ceiling(
    events: u64,
    prefetch: u16,
) -> anyhow::Result<(Summary, CpuUse)> {
    let conn = amqp().await?;
    let ch = conn.create_channel().await?;
    let queue = outbox_testkit::unique("bench.consume");
    ch.queue_declare(
        queue.as_str().into(),
        QueueDeclareOptions {
            durable: true,
            ..Default::default()
        },
        quorum(),
    )
    .await?;
    let body = sample_event(1, 1, Some(1)).encode_to_vec();
    let q = queue.clone();
    preload(
        &ch,
        "",
        move |_| (q.clone(), body.clone(), persistent()),
        events,
    )
    .await?;
    let consumer_ch = conn.create_channel().await?;
    consumer_ch
        .basic_qos(prefetch, BasicQosOptions::default())
        .await?;
    let mut consumer = consumer_ch
        .basic_consume(
            queue.as_str().into(),
            "bench".into(),
            BasicConsumeOptions::default(),
            FieldTable::default(),
        )
        .await?;
    let meter = CpuMeter::default();
    let before = meter.sample();
    let started = Instant::now();
    let mut got = 0;
    while got < events {
        let delivery = consumer.next().await.context("consumer ended")??;
        delivery.ack(BasicAckOptions::default()).await?;
        got += 1;
    }
    let summary = Summary::new(events, started.elapsed(), Vec::new());
    let cpu = meter.sample().since(&before);
    ch.queue_delete(queue.as_str().into(), QueueDeleteOptions::default())
        .await?;
    Ok((summary, cpu))
}

/// `instances` mail-svc (sharing one queue and one mail database) working through `events`
/// pre-loaded events for `orders` orders, each order's chain in order, orders interleaved.
pub(super) async fn mail_consume(
    events: u64,
    orders: u64,
    prefetch: u16,
    instances: usize,
) -> anyhow::Result<ScalingRun> {
    let run = mail_consume_until(events, orders, prefetch, instances, Done::Processed).await?;
    let MailRun {
        through,
        cpu,
        machine_busy_secs,
    } = run;
    Ok(ScalingRun {
        through,
        upserts: None,
        cpu,
        machine_busy_secs,
    })
}
