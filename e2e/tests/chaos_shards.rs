//! The crash-consistency checker on sharded writes: orders-svc on two order databases, two
//! relay-svc instances relaying both (one leader per shard), two mail-svc instances, under
//! SIGKILLs, broker restarts and terminated database connections. Both shards hand out the same
//! seqs; nothing may be lost, doubled, reordered, invented or mailed under another shard.
//! (Longer: `cargo run --release -p e2e --bin chaos -- --shards 2`.)

use e2e::{
    chaos::{self, ChaosOptions},
    stack::StackConfig,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sharded_chaos_run_loses_doubles_and_reorders_nothing() {
    let options = ChaosOptions {
        duration_secs: 60,
        concurrency: 6,
        orders: 100,
        fault_every_secs: 3.0,
        broker_restarts: true,
        cluster: false,
        relays: 2,
        mails: 2,
        shards: 2,
        drain_timeout_secs: 180,
        seed: None,
    };
    let report = chaos::run(&options, StackConfig::new("chaos_shards"))
        .await
        .expect("chaos run completes");
    println!("{report}");
    assert!(report.events > 100, "the run produced load: {report}");
    assert!(
        report.relay_kills + report.mail_kills + report.broker_restarts + report.db_terminations
            >= 6,
        "the run injected faults: {report}"
    );
    assert!(report.is_clean(), "{report}");
}
