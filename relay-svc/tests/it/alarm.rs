//! A RabbitMQ resource alarm under load, on a broker node of this test's own: the broker blocks
//! the relay's connection (`connection.blocked`). The relay says so (the gauge, `GetStatus`'s
//! reason), sends nothing more and keeps its connection (a block longer than the confirm
//! time-out replaces nothing), loses nothing, and publishes everything in chain order once the
//! alarm clears.
//!
//! The node is `alarm-outbox@localhost` (AMQP on 5684, distribution on 25684), started with its
//! own config, database and log directories; the machine's broker is not touched. A node left
//! over by an earlier run is stopped first, and the node is stopped when the test ends.

use std::{
    path::PathBuf,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use outbox_kit::testing::{self, Exposition, scrape};

use crate::common::*;

const NODE: &str = "alarm-outbox@localhost";
const AMQP_PORT: u16 = 5684;
const DIST_PORT: u16 = 25684;

/// The RabbitMQ node of this test; stopped (and its directory removed) on drop.
struct Node {
    dir: PathBuf,
}

impl Node {
    fn start() -> Self {
        stop_node();
        let dir = std::env::temp_dir().join("outbox-alarm-rabbitmq");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("mnesia")).expect("mnesia dir");
        std::fs::create_dir_all(dir.join("log")).expect("log dir");
        std::fs::write(
            dir.join("rabbitmq.conf"),
            format!("listeners.tcp.default = 127.0.0.1:{AMQP_PORT}\nloopback_users = none\n"),
        )
        .expect("config");
        std::fs::write(dir.join("enabled_plugins"), "[].\n").expect("plugins");
        run(Command::new("chown")
            .args(["-R", "rabbitmq:rabbitmq"])
            .arg(&dir));
        let node = Self { dir };
        run(node
            .env(&mut Command::new("rabbitmq-server"))
            .arg("-detached"));
        // `await_startup` fails at once while the node is not up yet: ask until it answers.
        let deadline = Instant::now() + Duration::from_secs(90);
        while !ctl(&["--timeout", "10", "await_startup"]) {
            assert!(Instant::now() < deadline, "the alarm node did not start");
            std::thread::sleep(Duration::from_millis(500));
        }
        node
    }

    fn env<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        let d = &self.dir;
        cmd.env("RABBITMQ_NODENAME", NODE)
            .env("RABBITMQ_NODE_PORT", AMQP_PORT.to_string())
            .env("RABBITMQ_DIST_PORT", DIST_PORT.to_string())
            .env("RABBITMQ_CONFIG_FILE", d.join("rabbitmq.conf"))
            .env("RABBITMQ_MNESIA_BASE", d.join("mnesia"))
            .env("RABBITMQ_LOG_BASE", d.join("log"))
            .env("RABBITMQ_ENABLED_PLUGINS_FILE", d.join("enabled_plugins"))
    }

    /// Raises the memory alarm (a high watermark of 0 blocks every publisher at once) or
    /// clears it (the default 0.4).
    fn memory_alarm(&self, on: bool) {
        let watermark = if on { "0" } else { "0.4" };
        assert!(
            ctl(&["set_vm_memory_high_watermark", watermark]),
            "set_vm_memory_high_watermark {watermark}"
        );
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        stop_node();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `rabbitmqctl -n NODE <args>`; true when it succeeded.
fn ctl(args: &[&str]) -> bool {
    Command::new("rabbitmqctl")
        .args(["-n", NODE])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success())
}

fn stop_node() {
    ctl(&["stop"]);
}

fn run(cmd: &mut Command) {
    let out = cmd.stdin(Stdio::null()).output().expect("runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_memory_alarm_is_visible_blocks_sending_and_loses_nothing() {
    // The broker-blocked gauge read below is process-wide: every relay of the process sets it, so
    // only in a process of its own is it this test's relay's.
    if testing::run_in_own_process(concat!(
        module_path!(),
        "::a_memory_alarm_is_visible_blocks_sending_and_loses_nothing"
    )) {
        return;
    }
    let node = tokio::task::spawn_blocking(Node::start)
        .await
        .expect("node");
    let amqp_url = format!("amqp://guest:guest@127.0.0.1:{AMQP_PORT}/%2f");
    let orders = Orders::start().await;
    let exchange = testing::unique("relay_ex");
    let consumer = Consumer::start_at(&amqp_url, &exchange, Some("#")).await;
    let cfg = relay_config(&orders.database_url, &amqp_url, &exchange);
    let confirm_timeout = cfg.confirm_timeout.expect("set by the test config");
    let relay = Relay::start(cfg).await;

    let writers = spawn_writers(&orders.client, 4, 15, Duration::from_millis(30));
    wait_until("the stream is flowing", || async {
        consumer.seqs().len() >= 20
    })
    .await;

    let raised = Instant::now();
    node.memory_alarm(true);
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
    node.memory_alarm(false);
    let events = writers.await.expect("writers");
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
