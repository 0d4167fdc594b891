//! A frozen relay-svc process (SIGSTOP, as a paused VM or a debugger does it): the standby
//! replaces it, and when it wakes up it finds its lock gone and stands by, having lost nothing.
//! The lease's logic is the library's (crates/outbox-relay/tests/it/lease.rs freezes a leader's
//! paths in-process); only a real process keeps its own timers frozen too, and wakes up
//! believing it still leads.

use std::{
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use outbox_proto::{
    orders::v1::order_service_client::OrderServiceClient,
    relay::v1::{GetStatusRequest, RelayStatus, relay_service_client::RelayServiceClient},
};
use tokio_util::sync::CancellationToken;
use tonic::transport::Channel;

use crate::common::*;

/// A relay-svc process; killed when dropped.
struct Process {
    child: Child,
    log: Arc<Mutex<Vec<String>>>,
    client: RelayServiceClient<Channel>,
}

impl Process {
    async fn spawn(database_url: &str, exchange: &str) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_relay-svc"))
            .env("DATABASE_URL", database_url)
            .env("AMQP_URL", outbox_testkit::amqp_url())
            .env("AMQP_EXCHANGE", exchange)
            .env("GRPC_ADDR", "127.0.0.1:0")
            .env("METRICS_ADDR", "127.0.0.1:0")
            .env("LOG_FORMAT", "json")
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("relay-svc binary starts");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let stderr = child.stderr.take().expect("stderr");
        let lines = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("\"grpc_addr\":\"").nth(1) {
                    let addr = rest.split('"').next().unwrap_or_default().to_owned();
                    let _ = addr_tx.send(addr);
                }
                lines.lock().expect("log").push(line);
            }
        });
        let addr = tokio::task::spawn_blocking(move || addr_rx.recv_timeout(PATIENCE))
            .await
            .expect("join")
            .expect("relay-svc logs its gRPC address");
        let client = RelayServiceClient::connect(format!("http://{addr}"))
            .await
            .expect("relay client connects");
        Self { child, log, client }
    }

    fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([format!("-{sig}"), self.child.id().to_string()])
            .status()
            .expect("kill runs")
            .success();
        assert!(ok, "kill -{sig}");
    }

    async fn status(&self) -> Option<RelayStatus> {
        let mut client = self.client.clone();
        let call = client.get_status(GetStatusRequest {});
        match tokio::time::timeout(Duration::from_secs(2), call).await {
            Ok(Ok(r)) => Some(r.into_inner()),
            _ => None,
        }
    }

    fn logged(&self, needle: &str) -> bool {
        self.log
            .lock()
            .expect("log")
            .iter()
            .any(|l| l.contains(needle))
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // A stopped process must be continued to die of SIGTERM; SIGKILL needs neither.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Writers that walk fresh orders through the lifecycle until `stop`; returns (order, seq).
fn writers_until(
    client: &OrderServiceClient<Channel>,
    writers: i64,
    stop: CancellationToken,
) -> tokio::task::JoinHandle<Vec<(i64, u64)>> {
    outbox_testkit::spawn_gathered((0..writers).map(|w| {
        let (client, stop) = (client.clone(), stop.clone());
        async move {
            let mut events = Vec::new();
            let mut id = w * 100_000;
            while !stop.is_cancelled() {
                id += 1;
                for status in LIFECYCLE {
                    events.push((id, upsert(&client, id, status).await));
                    tokio::time::sleep(Duration::from_millis(40)).await;
                }
            }
            events
        }
    }))
}

async fn max_committed_seq(orders: &Orders) -> i64 {
    sqlx::query_scalar("select coalesce(max(last_event_seq), 0)::bigint from orders")
        .fetch_one(&orders.pool)
        .await
        .expect("max seq")
}

/// SIGSTOP the active relay under load: within LEADER_LEASE (10 s, the default) plus a standby
/// retry, the standby terminates the frozen leader's session and publishes; SIGCONT: the old
/// leader finds its lock gone and stands by; every event arrived, in chain order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_frozen_leader_is_replaced_and_stands_by_when_it_wakes_up() {
    let (orders, exchange, consumer) = orders_and_consumer().await;
    let a = Process::spawn(&orders.database_url, &exchange).await;
    let b = Process::spawn(&orders.database_url, &exchange).await;
    let a_leads = loop {
        let (sa, sb) = (a.status().await, b.status().await);
        if let (Some(sa), Some(sb)) = (sa, sb)
            && sa.active != sb.active
        {
            break sa.active;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let (frozen, standby) = if a_leads { (a, b) } else { (b, a) };

    let stop = CancellationToken::new();
    let writers = writers_until(&orders.client, 4, stop.clone());
    wait_until("the stream is flowing", || async {
        consumer.seqs().len() >= 20
    })
    .await;

    frozen.signal("STOP");
    let stopped_at = Instant::now();
    let committed_before = max_committed_seq(&orders).await as u64;
    // Only the new leader can publish what commits from now on.
    let start = Instant::now();
    loop {
        if consumer.seqs().iter().any(|s| *s > committed_before) {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no event published after the leader froze"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let took = stopped_at.elapsed();
    println!(
        "events flow again {:.1}s after SIGSTOP of the leader",
        took.as_secs_f64()
    );
    assert!(
        took <= Duration::from_secs(15),
        "a frozen leader must be replaced within LEADER_LEASE + a few seconds, took {took:?}"
    );
    assert!(standby.status().await.is_some_and(|s| s.active));
    assert!(standby.logged("terminated it, taking over"));

    frozen.signal("CONT");
    let start = Instant::now();
    loop {
        if frozen.status().await.is_some_and(|s| !s.active) {
            break;
        }
        assert!(
            start.elapsed() < PATIENCE,
            "the old leader must report standby after waking up"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(frozen.logged("lost the leader lock"));
    // Load goes on for a while with the old leader awake next to the new one.
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop.cancel();
    let events = writers.await.expect("writers");
    all_arrive(
        "every committed event consumed",
        &consumer,
        &orders,
        &events,
    )
    .await;
    assert_complete_and_ordered(&consumer.snapshot(), &chains_of(&events));
    assert!(frozen.status().await.is_some_and(|s| !s.active));
    assert!(standby.status().await.is_some_and(|s| s.active));
    consumer.cleanup().await;
}
