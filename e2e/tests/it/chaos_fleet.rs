//! The crash-consistency checker on a relay fleet: orders-svc on 20 order databases, 3 relay-svc
//! instances in fleet mode publishing them (each registered in the run's fleet database under
//! its index as source id, 5 of them only during the run), 2 mail-svc instances. In turn a
//! relay is killed (SIGKILL) and started again, a database added, a relay frozen (SIGSTOP)
//! past its lease and woken, a database drained, removed and added back, and every fifth fault
//! is a mail-svc kill or terminated database connections. Nothing may be lost, doubled,
//! reordered, invented or mailed under another shard, and the fleet must settle after every
//! change (the summary prints how long each took). No broker restarts: it runs on the machine's
//! broker beside the other tests. (Longer: `cargo run --release -p e2e --bin chaos -- --fleet
//! --shards 20 --relays 3`.)

use e2e::{
    chaos::{self, ChaosOptions},
    stack::StackConfig,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fleet_chaos_run_loses_doubles_and_reorders_nothing() {
    let options = ChaosOptions {
        duration_secs: 45,
        shards: 20,
        relays: 3,
        fleet: true,
        broker_restarts: false,
        ..ChaosOptions::short()
    };
    let report = chaos::assert_clean_run(&options, StackConfig::new("chaos_fleet"), 5).await;
    // Every kind of change happened, and each one's rebalance time was measured.
    for kind in ["kill", "join", "add", "freeze", "wake", "drain", "add back"] {
        assert!(
            report.rebalances.iter().any(|(k, _)| *k == kind),
            "no {kind} in {report}"
        );
    }
}
