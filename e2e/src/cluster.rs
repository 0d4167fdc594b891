//! The 3-node RabbitMQ cluster of `deploy/rabbit-cluster.sh` (nodes `outbox-c1@localhost` …
//! on AMQP ports 5691–5693), for the tests and the chaos checker's `--cluster` mode: bring it up,
//! kill, restart and partition nodes, and ask which node leads a queue.
//!
//! [`Cluster::acquire`] brings the cluster up and holds it for one test at a time (a process-wide
//! lock: a test that kills a node must not meet another test's queue declared meanwhile with only
//! two members); the last holder's drop brings it down, so three broker nodes never outlive the
//! tests on a busy machine.

use std::{
    path::PathBuf,
    process::Command,
    sync::{Mutex, OnceLock},
};

use anyhow::{Context, bail};
use tokio::sync::{Mutex as AsyncMutex, OwnedMutexGuard};

/// Node numbers of the cluster.
pub const NODES: [u8; 3] = [1, 2, 3];

/// The cluster's AMQP port of node `n` (1..=3).
pub fn amqp_port(n: u8) -> u16 {
    5690 + u16::from(n)
}

/// The Erlang node name of node `n`.
pub fn node_name(n: u8) -> String {
    format!("outbox-c{n}@localhost")
}

/// The URL of node `n`, with the tests' broker credentials (guest may log in from loopback on
/// these nodes).
pub fn node_url(n: u8) -> String {
    format!("amqp://guest:guest@127.0.0.1:{}/%2f", amqp_port(n))
}

/// The three nodes' URLs as an `AMQP_URL` list starting with node `first` (then the following
/// ones, wrapping around), so that instances can be spread over the nodes.
pub fn urls_from(first: u8) -> String {
    (0..3)
        .map(|i| node_url((first - 1 + i) % 3 + 1))
        .collect::<Vec<_>>()
        .join(",")
}

fn script() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/rabbit-cluster.sh"
    ))
}

/// Runs `deploy/rabbit-cluster.sh <args>` and waits for it; its output on failure.
pub fn run_script(args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("/bin/bash")
        .arg(script())
        .args(args)
        .output()
        .context("running deploy/rabbit-cluster.sh")?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if !out.status.success() {
        bail!("rabbit-cluster.sh {} failed: {text}", args.join(" "));
    }
    Ok(text)
}

/// The script, run off the async runtime's threads.
async fn script_async(args: &[&str]) -> anyhow::Result<String> {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    tokio::task::spawn_blocking(move || {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        run_script(&args)
    })
    .await?
}

/// Holds the cluster for one test (or one chaos run); see the module docs.
#[derive(Debug)]
pub struct Cluster {
    _turn: OwnedMutexGuard<()>,
}

fn turn() -> std::sync::Arc<AsyncMutex<()>> {
    static TURN: OnceLock<std::sync::Arc<AsyncMutex<()>>> = OnceLock::new();
    TURN.get_or_init(Default::default).clone()
}

/// The cluster's turn for a test that runs the script itself on nodes of its own (blocking: not
/// from an async runtime's thread), with the shared cluster down: a holder that left while
/// another still waits leaves it running on the ports the test's nodes take. The waiting holder
/// brings it up again when its turn comes.
pub fn turn_blocking() -> anyhow::Result<OwnedMutexGuard<()>> {
    let turn = turn().blocking_lock_owned();
    run_script(&["down"])?;
    Ok(turn)
}

/// Holders of the cluster in this process (the last one brings it down).
static HOLDERS: Mutex<u32> = Mutex::new(0);

impl Cluster {
    /// Waits for this process's previous holder to finish, then brings the cluster up (starting
    /// any node that is down and waiting until all three run together).
    pub async fn acquire() -> anyhow::Result<Self> {
        // Counted before waiting: a holder that leaves while others wait does not bring the
        // cluster down under them.
        *HOLDERS.lock().expect("holders") += 1;
        let turn = turn().lock_owned().await;
        let cluster = Self { _turn: turn };
        script_async(&["up"]).await?;
        Ok(cluster)
    }

    /// SIGKILL to node `n`'s Erlang VM.
    pub async fn kill_node(&self, n: u8) -> anyhow::Result<()> {
        script_async(&["kill-node", &n.to_string()]).await.map(drop)
    }

    /// Starts node `n` again and waits until it runs (it rejoins by itself).
    pub async fn restart_node(&self, n: u8) -> anyhow::Result<()> {
        script_async(&["restart-node", &n.to_string()])
            .await
            .map(drop)
    }

    /// Cuts node `n` off from the other two for `seconds` (returns at once).
    pub async fn partition_node(&self, n: u8, seconds: u32) -> anyhow::Result<()> {
        script_async(&["partition-node", &n.to_string(), &seconds.to_string()])
            .await
            .map(drop)
    }

    /// Starts every node that is down and waits until the three run together again.
    pub async fn heal(&self) -> anyhow::Result<()> {
        script_async(&["up"]).await.map(drop)
    }

    /// The leader node (1..=3) and the members' node numbers of quorum queue `queue`, asked of a
    /// running node.
    pub async fn queue_placement(&self, queue: &str) -> anyhow::Result<(u8, Vec<u8>)> {
        let mut last_error = None;
        for n in NODES {
            match list_queue(n, queue).await {
                Ok(Some(placement)) => return Ok(placement),
                Ok(None) => bail!("queue {queue} is not in the cluster"),
                Err(e) => last_error = Some(e),
            }
        }
        Err(last_error.unwrap_or_else(|| anyhow::anyhow!("no node answered")))
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let mut holders = HOLDERS.lock().expect("holders");
        *holders -= 1;
        if *holders == 0
            && let Err(e) = run_script(&["down"])
        {
            eprintln!("cannot bring the cluster down: {e:#}");
        }
    }
}

fn node_number(name: &str) -> anyhow::Result<u8> {
    NODES
        .into_iter()
        .find(|&n| node_name(n) == name)
        .with_context(|| format!("{name} is not a cluster node"))
}

/// `rabbitmqctl -n <node n> list_queues name leader members` for `queue`.
async fn list_queue(n: u8, queue: &str) -> anyhow::Result<Option<(u8, Vec<u8>)>> {
    let out = tokio::process::Command::new("rabbitmqctl")
        .args([
            "-q",
            "-n",
            &node_name(n),
            "list_queues",
            "name",
            "leader",
            "members",
            "--formatter",
            "json",
        ])
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .context("running rabbitmqctl list_queues")?;
    if !out.status.success() {
        bail!(
            "rabbitmqctl list_queues on {} failed: {}",
            node_name(n),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let rows: Vec<serde_json::Value> =
        serde_json::from_slice(&out.stdout).context("list_queues output")?;
    let Some(row) = rows.iter().find(|r| r["name"] == queue) else {
        return Ok(None);
    };
    let leader = node_number(row["leader"].as_str().unwrap_or_default())?;
    let members = row["members"]
        .as_array()
        .context("members")?
        .iter()
        .map(|m| node_number(m.as_str().unwrap_or_default()))
        .collect::<anyhow::Result<Vec<u8>>>()?;
    Ok(Some((leader, members)))
}
