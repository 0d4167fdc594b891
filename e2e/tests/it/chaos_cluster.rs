//! The crash-consistency checker's short run on the 3-node RabbitMQ cluster of
//! `deploy/rabbit-cluster.sh` (brought up by the run, down after it; the machine's broker is never
//! touched): 2 relay-svc and 2 mail-svc spread over the nodes, under concurrent upserts, while
//! the mail queue's leader and other nodes are killed and restarted, a node is partitioned away,
//! services are SIGKILLed and database connections terminated. Nothing may be lost, doubled,
//! reordered or invented. (Longer: `cargo run --release -p e2e --bin chaos -- --cluster`.)
//! It holds the cluster (`Cluster`'s turn) for the whole run, so its node faults never meet
//! another test of the cluster.

use e2e::{
    chaos::{self, ChaosOptions},
    stack::StackConfig,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_chaos_run_loses_doubles_and_reorders_nothing() {
    let options = ChaosOptions {
        broker_restarts: false,
        cluster: true,
        ..ChaosOptions::short()
    };
    let report = chaos::assert_clean_run(&options, StackConfig::new("chaos_cluster"), 6).await;
    assert!(
        report.leader_kills >= 1 && report.partitions >= 1,
        "the run killed the queue leader and partitioned a node: {report}"
    );
}
