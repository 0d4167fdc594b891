//! The demo, run as a test: the services' own log lines tell the story. The broker it
//! stops and starts is a node of its own (`demo-outbox@localhost`, AMQP on 5687), so the outage
//! never disturbs the tests beside it.

use e2e::stack::Broker;
use outbox_testkit::rabbit_node::RabbitNode;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_demo_tells_the_seed_story_from_real_logs() {
    let node =
        tokio::task::spawn_blocking(|| RabbitNode::start("demo-outbox", 5687, |_| String::new()))
            .await
            .expect("the demo's node starts");
    let log_dir = e2e::demo::run(Broker::node(&node))
        .await
        .expect("demo runs");
    let mut logs = String::new();
    for entry in std::fs::read_dir(&log_dir).expect("log dir") {
        logs.push_str(&std::fs::read_to_string(entry.expect("entry").path()).expect("log"));
    }
    for line in [
        "[mail] send seq=3 order=43",
        "[mail] skip seq=3 order=43 (already sent)",
        "[mail] hold seq=5 order=44 (waiting for seq=4)",
        "[mail] send seq=4 order=44",
        "[mail] send seq=5 order=44",
        "relay: cannot publish (unsent 3) retry=",
        "relay: published seq=6..8",
    ] {
        assert!(logs.contains(line), "the logs tell: {line}");
    }
    let send4 = logs.find("[mail] send seq=4 order=44").expect("send 4");
    let send5 = logs.find("[mail] send seq=5 order=44").expect("send 5");
    let hold5 = logs.find("[mail] hold seq=5 order=44").expect("hold 5");
    assert!(
        hold5 < send4 && send4 < send5,
        "held, then released in chain order"
    );
}
