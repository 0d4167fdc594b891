//! The crash-consistency checker's short run: 2 relay-svc and 2 mail-svc under concurrent
//! upserts, SIGKILLs, broker restarts and terminated database connections. Nothing may be lost,
//! doubled, reordered or invented. (The long run: `cargo run --release -p e2e --bin chaos`.)
//! It runs alone (`serial::alone`), so the broker restarts never disturb other tests.

use e2e::chaos::{self, ChaosOptions};

use crate::serial;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_chaos_run_loses_doubles_and_reorders_nothing() {
    // Alone: the run restarts the machine's broker.
    let _serial = serial::alone().await;
    chaos::assert_clean_run(&ChaosOptions::short(), "chaos", 10).await;
}
