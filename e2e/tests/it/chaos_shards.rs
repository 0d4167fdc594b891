//! The crash-consistency checker on sharded writes: orders-svc on two order databases, two
//! relay-svc instances relaying both (one leader per shard), two mail-svc instances, under
//! SIGKILLs, broker restarts and terminated database connections. Both shards hand out the same
//! seqs; nothing may be lost, doubled, reordered, invented or mailed under another shard.
//! (Longer: `cargo run --release -p e2e --bin chaos -- --shards 2`.) The broker it restarts is a
//! node of its own (`chaos-shards-outbox@localhost`, AMQP on 5686), so the restarts never disturb
//! the tests beside it.

use e2e::{
    chaos::{self, ChaosOptions},
    stack::{Broker, StackConfig},
};
use outbox_testkit::rabbit_node::RabbitNode;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sharded_chaos_run_loses_doubles_and_reorders_nothing() {
    let node = tokio::task::spawn_blocking(|| {
        RabbitNode::start("chaos-shards-outbox", 5686, |_| String::new())
    })
    .await
    .expect("the chaos run's node starts");
    let options = ChaosOptions {
        duration_secs: 45,
        shards: 2,
        ..ChaosOptions::short()
    };
    let mut cfg = StackConfig::new("chaos_shards");
    cfg.broker = Broker::node(&node);
    chaos::assert_clean_run(&options, cfg, 6).await;
}
