//! The crash-consistency checker's short run: 2 relay-svc and 2 mail-svc under concurrent
//! upserts, SIGKILLs, broker restarts and terminated database connections. Nothing may be lost,
//! doubled, reordered or invented. (The long run: `cargo run --release -p e2e --bin chaos`.)
//! This file is its own test binary, so the broker restarts never disturb other tests.

use e2e::{
    chaos::{self, ChaosOptions},
    stack::StackConfig,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn short_chaos_run_loses_doubles_and_reorders_nothing() {
    let options = ChaosOptions {
        duration_secs: 90,
        concurrency: 6,
        orders: 100,
        fault_every_secs: 3.0,
        broker_restarts: true,
        cluster: false,
        relays: 2,
        mails: 2,
        shards: 1,
        drain_timeout_secs: 180,
        seed: None,
    };
    let report = chaos::run(&options, StackConfig::new("chaos"))
        .await
        .expect("chaos run completes");
    println!("{report}");
    assert!(report.events > 100, "the run produced load: {report}");
    assert!(
        report.relay_kills + report.mail_kills + report.broker_restarts + report.db_terminations
            >= 10,
        "the run injected faults: {report}"
    );
    assert!(report.is_clean(), "{report}");
}
