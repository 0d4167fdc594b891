//! A RabbitMQ resource alarm under load, on a broker node of this test's own: the broker blocks
//! the relay's connection (`connection.blocked`). The relay says so (the gauge, `GetStatus`'s
//! reason), sends nothing more and keeps its connection (a block longer than the confirm
//! time-out replaces nothing), loses nothing, and publishes everything in chain order once the
//! alarm clears.
//!
//! The node is `alarm-outbox@localhost` (AMQP on 5684, distribution on 25684), started with its
//! own config, database and log directories; the machine's broker is not touched. A node left
//! over by an earlier run is stopped first, and the node is stopped when the test ends.

use std::time::{Duration, Instant};

use outbox_testkit::{Exposition, rabbit_node::RabbitNode, scrape};
use tokio_util::sync::CancellationToken;

use crate::common::*;

/// The test's node: its name and AMQP port (distribution on 25684).
const NODE: &str = "alarm-outbox";
const AMQP_PORT: u16 = 5684;

/// Raises the memory alarm on `node` (a high watermark of 0 blocks every publisher at once)
/// or clears it (the default 0.4).
fn memory_alarm(node: &RabbitNode, on: bool) {
    let watermark = if on { "0" } else { "0.4" };
    assert!(
        node.ctl(&["set_vm_memory_high_watermark", watermark])
            .status
            .success(),
        "set_vm_memory_high_watermark {watermark}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_memory_alarm_is_visible_blocks_sending_and_loses_nothing() {
    // The broker-blocked gauge read below is process-wide: every relay of the process sets it, so
    // only in a process of its own is it this test's relay's.
    if outbox_testkit::run_in_own_process(concat!(
        module_path!(),
        "::a_memory_alarm_is_visible_blocks_sending_and_loses_nothing"
    )) {
        return;
    }
    let node =
        tokio::task::spawn_blocking(|| RabbitNode::start(NODE, AMQP_PORT, |_| String::new()))
            .await
            .expect("node");
    let amqp_url = node.url();
    let orders = Orders::start().await;
    let exchange = outbox_testkit::unique("relay_ex");
    let consumer = Consumer::start_at(&amqp_url, &exchange, Some("#")).await;
    let cfg = relay_config(&orders.database_url, &amqp_url, &exchange);
    let confirm_timeout = cfg.confirm_timeout;
    let relay = Relay::start(cfg).await;

    let writers = spawn_writers(&orders.client, 4, 15, Duration::from_millis(30));
    wait_until("the stream is flowing", || async {
        consumer.seqs().len() >= 20
    })
    .await;

    // The broker blocks a connection when it next publishes, and the writers above may be done
    // by the time the alarm is up (rabbitmqctl takes seconds on a busy machine): one more
    // writer keeps events coming until the block is over.
    let stop_writing = CancellationToken::new();
    let writer = keep_writing(&orders.client, 90_000, stop_writing.clone());
    let raised = Instant::now();
    memory_alarm(&node, true);
    wait_until("the relay reports the block", || async {
        relay.live.broker_blocked().is_some()
    })
    .await;
    let noticed = raised.elapsed();
    let status = relay.status().await;
    let metrics = Exposition::parse(&scrape(relay.metrics_addr).await.expect("scrape"));
    println!(
        "memory alarm: the relay reported it after {noticed:.1?}: GetStatus says {:?} for {} ms",
        status.broker_blocked_reason, status.broker_blocked_ms
    );
    assert!(
        !status.broker_blocked_reason.is_empty(),
        "GetStatus names the reason"
    );
    assert_eq!(metrics.value("relay_broker_blocked"), Some(1.0));

    // Blocked longer than a wave may take: nothing more is confirmed, and the connection is
    // kept (replacing it would only meet the same alarm).
    let published = relay.live.snapshot().published_total;
    tokio::time::sleep(confirm_timeout + Duration::from_secs(3)).await;
    let during = relay.live.snapshot();
    // (At most a batch the broker had read before it blocked may still be confirmed.)
    assert!(
        during.published_total <= published + 64,
        "nothing more is sent while blocked: {} then {}",
        published,
        during.published_total
    );
    assert_eq!(during.amqp_reconnects, 0, "the connection was kept");
    assert!(during.backlog > 0, "the events wait in the outbox");

    let cleared = Instant::now();
    memory_alarm(&node, false);
    stop_writing.cancel();
    let mut events = writers.await.expect("writers");
    events.extend(writer.await.expect("writer"));
    let all: Vec<u64> = events.iter().map(|(_, s)| *s).collect();
    wait_until("everything consumed after the alarm cleared", || async {
        consumer.has_all(&all)
    })
    .await;
    println!(
        "publishing resumed: everything consumed {:.1?} after the alarm cleared",
        cleared.elapsed()
    );
    wait_until("the outbox is drained and the block is gone", || async {
        let s = relay.status().await;
        s.backlog == 0 && s.broker_blocked_reason.is_empty() && s.broker_blocked_ms == 0
    })
    .await;
    let metrics = Exposition::parse(&scrape(relay.metrics_addr).await.expect("scrape"));
    assert_eq!(metrics.value("relay_broker_blocked"), Some(0.0));
    assert_complete_and_ordered(&consumer.snapshot(), &chains_of(&events));
    assert_eq!(relay.live.snapshot().amqp_reconnects, 0);
    consumer.cleanup().await;
    drop(node);
}
