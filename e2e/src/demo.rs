//! The demo, told on a live stack from the services' own log lines: a mail sent, a
//! re-send skipped, an out-of-order event held then released, and a broker outage with the
//! unsent count rising and then draining.

use std::{collections::HashMap, io::Write, time::Duration};

use futures::StreamExt;
use lapin::{
    BasicProperties, Connection, ConnectionProperties, options::BasicPublishOptions,
    types::FieldTable,
};
use outbox_proto::orders::v1::OrderStatus;

use crate::stack::{Broker, Stack, StackConfig};

/// A copy of one message as it crossed the exchange (for re-sending it "from the network").
#[derive(Debug, Clone)]
struct Captured {
    routing_key: String,
    body: Vec<u8>,
    properties: BasicProperties,
}

/// Prints the log lines the services wrote since the last call that tell the story.
struct LogTail {
    offsets: HashMap<std::path::PathBuf, usize>,
}

impl LogTail {
    fn print_new(&mut self, stack: &Stack) {
        let procs = std::iter::once(&stack.orders)
            .chain(&stack.relays)
            .chain(&stack.mails);
        for p in procs {
            let text = std::fs::read_to_string(&p.log_path).unwrap_or_default();
            let seen = self.offsets.entry(p.log_path.clone()).or_insert(0);
            for line in text[(*seen).min(text.len())..].lines() {
                if let Some(story) = story_part(line) {
                    println!("    {:<12} {story}", p.name);
                }
            }
            *seen = text.len();
        }
        let _ = std::io::stdout().flush();
    }
}

/// The part of a log line that belongs to the story (the `[mail]` and `relay:` lines),
/// without timestamps and span fields; `None` for the other lines.
fn story_part(line: &str) -> Option<&str> {
    const TOLD: &[&str] = &[
        "[mail] send ",
        "[mail] skip ",
        "[mail] hold ",
        "relay: published ",
        "relay: cannot publish ",
        "relay: recovered",
    ];
    TOLD.iter()
        .filter_map(|marker| line.find(marker))
        .min()
        .map(|at| &line[at..])
}

async fn upsert(stack: &Stack, id: i64, status: OrderStatus) -> anyhow::Result<u64> {
    let seq = stack.upsert(id, status).await?;
    println!(
        "  Upsert order {id} -> {} (seq={seq})",
        status.as_str_name()
    );
    Ok(seq)
}

async fn settle(stack: &Stack, tail: &mut LogTail) {
    tokio::time::sleep(Duration::from_millis(1500)).await;
    tail.print_new(stack);
}

/// Waits until the tap has seen event `seq` (at most [`TAP_TIMEOUT`]); its copy.
async fn wait_for_copy(
    captured: &std::sync::Mutex<HashMap<String, Captured>>,
    seq: u64,
) -> anyhow::Result<Captured> {
    let deadline = tokio::time::Instant::now() + TAP_TIMEOUT;
    loop {
        if let Some(copy) = captured.lock().expect("tap").get(&seq.to_string()) {
            return Ok(copy.clone());
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "the tap did not see seq={seq} in {TAP_TIMEOUT:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// How long the relay may take to publish an event the demo re-sends.
const TAP_TIMEOUT: Duration = Duration::from_secs(60);

/// Runs the story on `broker` (which it stops and starts once); returns the stack's log
/// directory.
pub async fn run(broker: Broker) -> anyhow::Result<std::path::PathBuf> {
    let mut cfg = StackConfig::new("demo");
    cfg.broker = broker;
    cfg.relays = 1;
    cfg.mails = 1;
    let mut stack = Stack::start(cfg).await?;
    let mut tail = LogTail {
        offsets: HashMap::new(),
    };
    tail.print_new(&stack);
    println!(
        "stack up (fresh databases, exchange {}); logs in {}",
        stack.exchange,
        stack.log_dir.display()
    );

    // A tap on the exchange keeps a copy of every published message, to re-send one later.
    let conn = Connection::connect(&stack.broker.url, ConnectionProperties::default()).await?;
    let ch = conn.create_channel().await?;
    let mut consumer = stack.tap(&ch, "demo-tap").await?;
    let captured: std::sync::Arc<std::sync::Mutex<HashMap<String, Captured>>> = Default::default();
    let sink = captured.clone();
    tokio::spawn(async move {
        while let Some(Ok(d)) = consumer.next().await {
            let id = d
                .properties
                .message_id()
                .as_ref()
                .map(|m| m.to_string())
                .unwrap_or_default();
            sink.lock().expect("tap").insert(
                id,
                Captured {
                    routing_key: d.routing_key.to_string(),
                    body: d.data.clone(),
                    properties: d.properties.clone(),
                },
            );
        }
    });
    let publish = |c: Captured| {
        let ch = ch.clone();
        let exchange = stack.exchange.clone();
        async move {
            ch.basic_publish(
                exchange.as_str().into(),
                c.routing_key.as_str().into(),
                BasicPublishOptions::default(),
                &c.body,
                c.properties,
            )
            .await?
            .await?;
            anyhow::Ok(())
        }
    };

    println!("\n1. An order's first mail (order 42 goes first, so its seqs are 1 and 2)");
    upsert(&stack, 42, OrderStatus::Pending).await?;
    upsert(&stack, 42, OrderStatus::Shipped).await?;
    let seq43 = upsert(&stack, 43, OrderStatus::Pending).await?;
    settle(&stack, &mut tail).await;

    println!("\n2. The same event arrives again (a relay re-send, or the network doubling it)");
    // On a busy machine the relay may take longer than the pause above.
    let copy = wait_for_copy(&captured, seq43).await?;
    publish(copy).await?;
    println!("  re-published seq={seq43} to the exchange");
    settle(&stack, &mut tail).await;

    println!("\n3. Events of order 44 arrive out of order");
    // Freeze the relay so that the network (this demo) delivers 44's events first, reversed.
    stack.relays[0].signal("STOP").await?;
    let seq4 = upsert(&stack, 44, OrderStatus::Pending).await?;
    let seq5 = upsert(&stack, 44, OrderStatus::Paid).await?;
    let pool = sqlx::PgPool::connect(&stack.orders_db_url).await?;
    let rows: Vec<(i64, Vec<u8>)> =
        sqlx::query_as("select seq, payload from outbox where aggregate_id = 44 order by seq")
            .fetch_all(&pool)
            .await?;
    anyhow::ensure!(rows.len() == 2, "order 44's two events wait in the outbox");
    let event = |seq: u64, prev: Option<u64>, payload: &[u8]| -> anyhow::Result<Captured> {
        use prost::Message;
        let payload = outbox_proto::orders::events::v1::OrderPayload::decode(payload)?;
        let ty = if prev.is_some() {
            "OrderStatusChanged"
        } else {
            "OrderCreated"
        };
        let body = outbox_proto::orders::events::v1::OrderEvent {
            seq,
            r#type: ty.into(),
            aggregate_id: 44,
            prev_seq: prev,
            payload: Some(payload),
            ts_ms: 0,
        }
        .encode_to_vec();
        let mut headers = FieldTable::default();
        headers.insert(
            "aggregate_id".into(),
            lapin::types::AMQPValue::LongLongInt(44),
        );
        if let Some(p) = prev {
            headers.insert(
                "prev_seq".into(),
                lapin::types::AMQPValue::LongLongInt(p as i64),
            );
        }
        Ok(Captured {
            routing_key: if prev.is_some() {
                "order.status_changed"
            } else {
                "order.created"
            }
            .into(),
            body,
            properties: BasicProperties::default()
                .with_content_type("application/x-protobuf".into())
                .with_delivery_mode(2)
                .with_message_id(seq.to_string().into())
                .with_type(ty.into())
                .with_headers(headers),
        })
    };
    publish(event(seq5, Some(seq4), &rows[1].1)?).await?;
    println!("  the network delivers seq={seq5} first");
    settle(&stack, &mut tail).await;
    publish(event(seq4, None, &rows[0].1)?).await?;
    println!("  ... then seq={seq4}");
    settle(&stack, &mut tail).await;
    stack.relays[0].signal("CONT").await?;
    println!("  the relay wakes up and publishes its copies too");
    settle(&stack, &mut tail).await;

    println!("\n4. The broker goes away while orders keep changing");
    stack.broker.ctl("stop_app").await?;
    println!("  rabbitmqctl stop_app");
    upsert(&stack, 43, OrderStatus::Paid).await?;
    upsert(&stack, 43, OrderStatus::Shipped).await?;
    upsert(&stack, 44, OrderStatus::Shipped).await?;
    tokio::time::sleep(Duration::from_secs(4)).await;
    tail.print_new(&stack);
    stack.broker.ctl("start_app").await?;
    println!("  rabbitmqctl start_app (recovered)");
    // The relay retries on its backoff (seconds apart by now): wait for the three events' mails
    // (orders 43 and 44 have three each), then for the log lines to settle.
    stack.mails_for(43, 3).await?;
    stack.mails_for(44, 3).await?;
    settle(&stack, &mut tail).await;

    stack.stop().await;
    Ok(stack.log_dir.clone())
}
