//! The stacks and broker topology the sections measure: a quiet stack, its databases dropped
//! after, a broker connection, a topic exchange bound to a durable queue.

use anyhow::Context;
use lapin::{
    Channel, Connection, ConnectionProperties, ExchangeKind,
    options::{ExchangeDeclareOptions, QueueBindOptions, QueueDeclareOptions},
    types::FieldTable,
};

use crate::stack::{Stack, StackConfig};

/// A fresh stack with `relays` relay-svc and `mails` mail-svc, logging warnings only (a benchmark
/// measures the services, not their log output).
pub async fn bench_stack(relays: usize, mails: usize) -> anyhow::Result<Stack> {
    let mut cfg = StackConfig::new("bench");
    cfg.relays = relays;
    cfg.mails = mails;
    cfg.rust_log = "warn".into();
    Stack::start(cfg).await
}

/// Drops a stage's database (best effort: a leftover is swept by the next test run).
pub async fn drop_database(url: &str) {
    let _ = outbox_testkit::drop_database(outbox_testkit::database_name(url)).await;
}

/// A connection to the tests' broker.
pub async fn amqp() -> anyhow::Result<Connection> {
    Connection::connect(&outbox_testkit::amqp_url(), ConnectionProperties::default())
        .await
        .context("connecting to RabbitMQ")
}

/// A durable topic exchange with a durable classic queue bound to every key: what the relay
/// drain publishes into.
pub async fn topic_to_queue(ch: &Channel, exchange: &str, queue: &str) -> anyhow::Result<()> {
    ch.exchange_declare(
        exchange.into(),
        ExchangeKind::Topic,
        ExchangeDeclareOptions {
            durable: true,
            ..Default::default()
        },
        FieldTable::default(),
    )
    .await?;
    ch.queue_declare(
        queue.into(),
        QueueDeclareOptions {
            durable: true,
            ..Default::default()
        },
        FieldTable::default(),
    )
    .await?;
    ch.queue_bind(
        queue.into(),
        exchange.into(),
        "#".into(),
        QueueBindOptions::default(),
        FieldTable::default(),
    )
    .await?;
    Ok(())
}
