//! The completeness audit and the trace, end to end through the real `outboxctl` binary against
//! the real stack: events removed from mail-svc's queue by hand (a purge) are named — exactly
//! those orders, and only after the grace period — as "published, never applied"; so is an
//! order whose consumer database was restored from an older backup; quarantined and
//! dead-lettered events are named as such.

use std::time::Duration;

use lapin::{Connection, ConnectionProperties, options::QueuePurgeOptions};
use outbox_kit::testing;
use outbox_proto::orders::v1::OrderStatus;
use serde_json::Value;

use crate::common::{Ctl, Running, Stack, wait_until};

/// The lagging orders `outboxctl --json audit --grace <grace>` names: (order, stage, waiting for).
async fn lagging(ctl: &Ctl, grace: &str) -> Vec<(i64, String, Option<i64>)> {
    let report = ctl.json(&["audit", "--grace", grace]).await;
    report["lagging"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|l| {
            (
                l["order_id"].as_i64().expect("order"),
                l["stage"].as_str().expect("stage").to_owned(),
                l["waiting_for"].as_i64(),
            )
        })
        .collect()
}

/// The trace's verdict for each of the order's events: (seq, stopped at).
async fn stopped_at(ctl: &Ctl, order: i64) -> Vec<(i64, String)> {
    let trace: Value = ctl.json(&["trace", "--order", &order.to_string()]).await;
    trace["events"]
        .as_array()
        .expect("events")
        .iter()
        .map(|e| {
            (
                e["seq"].as_i64().expect("seq"),
                e["stopped_at"].as_str().expect("stage").to_owned(),
            )
        })
        .collect()
}

async fn purge(queue: &str) -> u32 {
    let conn = Connection::connect(&testing::amqp_url(), ConnectionProperties::default())
        .await
        .expect("broker");
    let ch = conn.create_channel().await.expect("channel");
    let purged = ch
        .queue_purge(queue.into(), QueuePurgeOptions::default())
        .await
        .expect("purge");
    let _ = conn.close(200, "purged".into()).await;
    purged
}

async fn queued(queue: &str) -> u32 {
    let conn = Connection::connect(&testing::amqp_url(), ConnectionProperties::default())
        .await
        .expect("broker");
    let ch = conn.create_channel().await.expect("channel");
    let q = ch
        .queue_declare(
            queue.into(),
            lapin::options::QueueDeclareOptions {
                passive: true,
                ..Default::default()
            },
            Default::default(),
        )
        .await
        .expect("the queue exists");
    let _ = conn.close(200, "counted".into()).await;
    q.message_count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_audit_names_exactly_the_purged_orders_after_the_grace_and_a_restored_inbox() {
    let mut stack = Stack::start().await;
    let ctl = stack.ctl();
    let orders: Vec<i64> = (5101..=5106).collect();
    let mut first = Vec::new();
    for &id in &orders {
        first.push(stack.upsert(id, OrderStatus::Pending).await);
    }
    for (&id, &seq) in orders.iter().zip(&first) {
        stack
            .wait_for_mails("the first mails", id, &[(seq, true)])
            .await;
    }
    assert_eq!(lagging(&ctl, "1ms").await, [], "all applied: nothing lags");

    // mail-svc is down while two orders change; an operator purges its queue by hand.
    Running::stop_in_place(&mut stack.mail).await;
    let (lost_a, lost_b) = (orders[1], orders[4]);
    let a2 = stack.upsert(lost_a, OrderStatus::Paid).await;
    let b2 = stack.upsert(lost_b, OrderStatus::Paid).await;
    let queue = stack.names.queue.clone();
    wait_until("both events in the queue", || async {
        queued(&queue).await == 2
    })
    .await;
    assert_eq!(purge(&queue).await, 2);
    stack.start_mail_again().await;
    let ctl = stack.ctl();

    // Traffic goes on for the other orders.
    let c2 = stack.upsert(orders[0], OrderStatus::Paid).await;
    let d2 = stack.upsert(orders[2], OrderStatus::Paid).await;
    stack
        .wait_for_mails("later traffic", orders[0], &[(first[0], true), (c2, true)])
        .await;
    stack
        .wait_for_mails("later traffic", orders[2], &[(first[2], true), (d2, true)])
        .await;

    // Within the grace period nothing is an alarm; past it, exactly the purged orders are.
    assert_eq!(lagging(&ctl, "60m").await, []);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let not_applied = |id, seq| (id, "not_applied".to_owned(), Some(seq));
    assert_eq!(
        lagging(&ctl, "2s").await,
        [not_applied(lost_a, a2), not_applied(lost_b, b2)]
    );
    assert_eq!(
        stopped_at(&ctl, lost_a).await,
        [
            (first[1], "done (mail sent)".to_owned()),
            (a2, "published, never applied".to_owned())
        ]
    );
    let human = ctl.run(None, &["audit", "--grace", "2s"]).await.ok();
    assert!(
        human.stdout.contains("2 order(s) lagging") && human.stdout.contains("outboxctl trace"),
        "{human:?}"
    );

    // A restore of mail-svc's database from a backup taken before order 5104's second event:
    // its watermark goes back and the mail is gone, though nothing changed in the orders since.
    let restored = orders[3];
    let e2 = stack.upsert(restored, OrderStatus::Paid).await;
    stack
        .wait_for_mails(
            "before the restore",
            restored,
            &[(first[3], true), (e2, true)],
        )
        .await;
    sqlx::query("update order_progress set last_seq = $2 where order_id = $1")
        .bind(restored)
        .bind(first[3])
        .execute(&stack.mail_pool)
        .await
        .expect("restore the watermark");
    sqlx::query("delete from mails where order_id = $1 and seq = $2")
        .bind(restored)
        .bind(e2)
        .execute(&stack.mail_pool)
        .await
        .expect("restore the mails");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        lagging(&ctl, "2s").await,
        [
            not_applied(lost_a, a2),
            not_applied(restored, e2),
            not_applied(lost_b, b2)
        ]
    );
    stack.names.cleanup().await;
}
