//! The crash-consistency checker on sharded writes: orders-svc on two order databases, two
//! relay-svc instances relaying both (one leader per shard), two mail-svc instances, under
//! SIGKILLs, broker restarts and terminated database connections. Both shards hand out the same
//! seqs; nothing may be lost, doubled, reordered, invented or mailed under another shard.
//! (Longer: `cargo run --release -p e2e --bin chaos -- --shards 2`.) It runs alone
//! (`serial::alone`), so the broker restarts never disturb other tests.

use e2e::chaos::{self, ChaosOptions};

use crate::serial;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sharded_chaos_run_loses_doubles_and_reorders_nothing() {
    // Alone: the run restarts the machine's broker.
    let _serial = serial::alone().await;
    let options = ChaosOptions {
        duration_secs: 45,
        shards: 2,
        ..ChaosOptions::short()
    };
    chaos::assert_clean_run(&options, "chaos_shards", 6).await;
}
