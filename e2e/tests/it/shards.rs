//! Sharded writes end to end with the three real binaries: orders-svc on two order databases
//! (`SHARDS`), two relay-svc instances relaying both (`RELAY_SHARDS`, one leader per shard), two
//! mail-svc instances on one queue. Each shard numbers its events from 1, so the same seqs reach
//! mail-svc from both shards; every event must still be mailed exactly once, in its order's
//! chain order, under a key of its own, also after the leading relay is killed.

use std::collections::{BTreeMap, HashSet};

use e2e::stack::{Stack, StackConfig};
use orders_svc::shard;
use outbox_proto::{mail::v1::Mail, orders::v1::OrderStatus};

const ORDERS: i64 = 24;
const SHARDS: usize = 2;

/// Upserts every order to `status` and returns each order's event seq, by order.
async fn wave(stack: &Stack, status: OrderStatus, seqs: &mut BTreeMap<i64, Vec<u64>>) {
    for id in 1..=ORDERS {
        let seq = stack.upsert(id, status).await.expect("upsert");
        seqs.entry(id).or_default().push(seq);
    }
}

/// Every order has one mail per event, in chain order, from its own shard, and no two mails
/// share an idempotency key.
async fn check_mails(stack: &Stack, seqs: &BTreeMap<i64, Vec<u64>>) -> Vec<Mail> {
    let mut all = Vec::new();
    for (&id, chain) in seqs {
        let mails = stack.mails_for(id, chain.len()).await.expect("mails");
        let got: Vec<u64> = mails.iter().map(|m| m.seq).collect();
        assert_eq!(
            &got, chain,
            "order {id}: one mail per event, in chain order"
        );
        let home = shard::of(id, SHARDS) as u32;
        assert!(
            mails.iter().all(|m| m.shard == home),
            "order {id} lives in shard {home}: {mails:?}"
        );
        all.extend(mails);
    }
    let keys: HashSet<&str> = all.iter().map(|m| m.idempotency_key.as_str()).collect();
    assert_eq!(keys.len(), all.len(), "every mail has a key of its own");
    all
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_shards_two_relays_two_mailers_mail_every_event_once_in_order() {
    let mut cfg = StackConfig::new("e2e_shards");
    cfg.shards = SHARDS;
    cfg.relays = 2;
    cfg.mails = 2;
    let mut stack = Stack::start(cfg).await.expect("stack starts");

    let mut seqs = BTreeMap::new();
    wave(&stack, OrderStatus::Pending, &mut seqs).await;
    wave(&stack, OrderStatus::Paid, &mut seqs).await;
    let first = check_mails(&stack, &seqs).await;
    // The point of the test: the shards hand out the same seqs.
    let by_shard = |shard: u32| -> HashSet<u64> {
        first
            .iter()
            .filter(|m| m.shard == shard)
            .map(|m| m.seq)
            .collect()
    };
    assert!(
        by_shard(0).intersection(&by_shard(1)).count() > 0,
        "both shards used seqs in common: {:?} / {:?}",
        by_shard(0),
        by_shard(1)
    );
    // The seqs repeat, so a sharded event's log lines name its shard; shard 0's read as before.
    let sends = |shard: u32| {
        let logs = stack.logs();
        let shard_field = format!("shard={shard}");
        logs.lines()
            .filter(|l| l.contains("[mail] send seq="))
            .filter(|l| l.contains(&shard_field))
            .count()
    };
    assert_eq!(
        sends(1),
        by_shard(1).len(),
        "shard 1's mails name their shard"
    );
    assert_eq!(sends(0), 0, "shard 0's lines are unchanged");

    // Kill a leading relay: the other takes over its shards once their leases expire, and
    // nothing is lost or mailed twice.
    let mut leader = None;
    for i in 0..stack.relays.len() {
        let s = stack
            .relay_client(i)
            .await
            .expect("relay client")
            .get_status(outbox_proto::relay::v1::GetStatusRequest {})
            .await
            .expect("relay status")
            .into_inner();
        if s.active {
            leader = Some(i);
            break;
        }
    }
    let leader = leader.expect("a relay leads");
    stack.relays[leader].kill9().await;
    wave(&stack, OrderStatus::Shipped, &mut seqs).await;
    let all = check_mails(&stack, &seqs).await;
    assert_eq!(all.len() as i64, ORDERS * 3);
    let mut status = stack.mail_client(1).await.expect("client");
    let s = status
        .get_status(outbox_proto::mail::v1::GetStatusRequest {})
        .await
        .expect("GetStatus")
        .into_inner();
    assert_eq!(
        (s.processed, s.held, s.dead_lettered),
        (ORDERS as u64 * 3, 0, 0)
    );
    stack.stop().await;
}
