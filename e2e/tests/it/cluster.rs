//! The real binaries on the 3-node RabbitMQ cluster of `deploy/rabbit-cluster.sh` (brought up by
//! the test, down at its end; the machine's broker is not touched): mail-svc's queues are
//! replicated on all three nodes, a list whose first node is down connects to the second, and
//! killing the node that leads mail-svc's queue under load loses and doubles no mail.
//! The tests here and the cluster chaos run take turns on the cluster (`Cluster::acquire`).

use std::{collections::BTreeMap, time::Duration};

use e2e::{
    cluster::{self, Cluster},
    stack::{Stack, StackConfig},
};
use outbox_proto::orders::v1::OrderStatus;

const PATH: [OrderStatus; 4] = [
    OrderStatus::Pending,
    OrderStatus::Paid,
    OrderStatus::Shipped,
    OrderStatus::Delivered,
];

/// Each order's mails, compared with the seqs its upserts reported: every one, once, in order.
async fn assert_exact_mails(stack: &Stack, expected: &BTreeMap<i64, Vec<u64>>) {
    for (&order, seqs) in expected {
        let mails = stack
            .mails_for(order, seqs.len())
            .await
            .expect("list mails");
        let got: Vec<u64> = mails.iter().map(|m| m.seq).collect();
        assert_eq!(
            &got, seqs,
            "order {order}: mails (lost, doubled or reordered)"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_whose_first_node_is_down_connects_to_the_second() {
    let cluster = Cluster::acquire().await.expect("cluster up");
    cluster.kill_node(1).await.expect("kill node 1");

    let mut cfg = StackConfig::new("cluster_first_down");
    cfg.relay_amqp_urls = vec![cluster::urls_from(1)];
    cfg.mail_amqp_urls = vec![cluster::urls_from(1)];
    let mut stack = Stack::start(cfg).await.expect("stack starts");
    let mut expected = BTreeMap::new();
    for order in 1..=5 {
        let mut seqs = Vec::new();
        for status in PATH {
            seqs.push(stack.upsert(order, status).await.expect("upsert"));
        }
        expected.insert(order, seqs);
    }
    assert_exact_mails(&stack, &expected).await;
    let logs = stack.logs();
    for line in [
        "cannot connect to broker 1 of 3; trying the next",
        "connected to broker 2 of 3",
    ] {
        assert!(
            logs.matches(line).count() >= 2,
            "relay-svc and mail-svc log `{line}`: {logs}"
        );
    }
    assert!(!logs.contains("guest:guest"), "no password in the logs");
    stack.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_queue_leader_under_load_loses_and_doubles_nothing() {
    let cluster = Cluster::acquire().await.expect("cluster up");
    let mut cfg = StackConfig::new("cluster_leader_kill");
    cfg.relays = 1;
    cfg.mails = 2;
    cfg.relay_amqp_urls = vec![cluster::urls_from(1)];
    // The mail instances start on different nodes.
    cfg.mail_amqp_urls = vec![cluster::urls_from(2), cluster::urls_from(3)];
    let stack = Stack::start(cfg).await.expect("stack starts");

    // Declared while all three nodes ran: both queues are replicated on all of them.
    for queue in [stack.queue.clone(), format!("{}.dead-letter", stack.queue)] {
        let (_, mut members) = cluster.queue_placement(&queue).await.expect("placement");
        members.sort();
        assert_eq!(members, [1, 2, 3], "{queue} has a replica on every node");
    }
    let (leader, _) = cluster
        .queue_placement(&stack.queue)
        .await
        .expect("placement");

    // Load: 40 orders walked along their path by 4 writers, while the leader's node is killed
    // and restarted.
    let stack = std::sync::Arc::new(stack);
    let mut writers = Vec::new();
    for w in 0..4i64 {
        let stack = stack.clone();
        writers.push(tokio::spawn(async move {
            let mut expected = BTreeMap::new();
            for order in (1..=10).map(|i| 100 + w * 10 + i) {
                let mut seqs = Vec::new();
                for status in PATH {
                    seqs.push(stack.upsert(order, status).await.expect("upsert"));
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                expected.insert(order, seqs);
            }
            expected
        }));
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    cluster.kill_node(leader).await.expect("kill the leader");
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (new_leader, _) = cluster
        .queue_placement(&stack.queue)
        .await
        .expect("placement");
    assert_ne!(new_leader, leader, "another node leads the queue");
    cluster.restart_node(leader).await.expect("restart");

    let mut expected = BTreeMap::new();
    for w in writers {
        expected.extend(w.await.expect("writer"));
    }
    assert_eq!(expected.len(), 40);
    assert_exact_mails(&stack, &expected).await;
    let mut stack = std::sync::Arc::try_unwrap(stack).expect("writers done");
    stack.stop().await;
}
