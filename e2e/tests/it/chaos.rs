//! The crash-consistency checker's short run: 2 relay-svc and 2 mail-svc under concurrent
//! upserts, SIGKILLs, broker restarts and terminated database connections. Nothing may be lost,
//! doubled, reordered or invented. (The long run: `cargo run --release -p e2e --bin chaos`.)
//! The broker it restarts is a node of its own (`chaos-outbox@localhost`, AMQP on 5685), so the
//! restarts never disturb the tests beside it.

use e2e::{
    chaos::{self, ChaosOptions},
    stack::{Broker, StackConfig},
};
use outbox_testkit::rabbit_node::RabbitNode;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_chaos_run_loses_doubles_and_reorders_nothing() {
    let node =
        tokio::task::spawn_blocking(|| RabbitNode::start("chaos-outbox", 5685, |_| String::new()))
            .await
            .expect("the chaos run's node starts");
    let mut cfg = StackConfig::new("chaos");
    cfg.broker = Broker::node(&node);
    chaos::assert_clean_run(&ChaosOptions::short(), cfg, 10).await;
}
