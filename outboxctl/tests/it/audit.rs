//! The completeness audit and the trace, end to end through the real `outboxctl` binary against
//! the real stack: events removed from mail-svc's queue by hand (a purge) are named — exactly
//! those orders, and only after the grace period — as "published, never applied"; so is an
//! order whose consumer database was restored from an older backup; `outboxctl replay` brings
//! them back (each mail once, in chain order) and the audit clears. Quarantined and
//! dead-lettered events are named as such.

use std::time::Duration;

use lapin::{Connection, ConnectionProperties};
use outbox_proto::orders::v1::OrderStatus;
use serde_json::Value;

use crate::common::{Ctl, Stack, StackCtl as _, purge, wait_until};

/// What `outboxctl --json audit --grace <grace>` reports, after checking its exit code: 0 when
/// no order lags, `LAGGING` (6) when some do; any other code fails the test.
async fn audit_report(ctl: &Ctl, grace: &str) -> Value {
    let run = ctl.run(None, &["--json", "audit", "--grace", grace]).await;
    let report = run.json();
    let lagging = report["lagging"].as_array().expect("a list").len();
    let expected = if lagging == 0 { 0 } else { LAGGING };
    assert_eq!(run.code, expected, "{lagging} lagging: {run:?}");
    report
}

/// The exit code of an audit that found orders lagging past the grace period.
const LAGGING: i32 = outboxctl::Failure::LAGGING as i32;

/// The lagging orders `outboxctl --json audit --grace <grace>` names: (order, stage, waiting for).
async fn lagging(ctl: &Ctl, grace: &str) -> Vec<(i64, String, Option<i64>)> {
    let report = audit_report(ctl, grace).await;
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

async fn queued(queue: &str) -> u32 {
    let conn = Connection::connect(&outbox_testkit::amqp_url(), ConnectionProperties::default())
        .await
        .expect("broker");
    let ch = conn.create_channel().await.expect("channel");
    let ready = outbox_testkit::ready_messages(&ch, queue).await;
    let _ = conn.close(200, "counted".into()).await;
    ready
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
        stack.wait_until_sent("the first mails", id, &[seq]).await;
    }
    assert_eq!(lagging(&ctl, "1ms").await, [], "all applied: nothing lags");

    // mail-svc is down while two orders change; an operator purges its queue by hand.
    stack.stop_mail().await;
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
        .wait_until_sent("later traffic", orders[0], &[first[0], c2])
        .await;
    stack
        .wait_until_sent("later traffic", orders[2], &[first[2], d2])
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
    // The continuous audit finds them too, on its first pass, and exports them.
    let watch = Watch::start(&ctl).await;
    watch
        .wait_for(r#"outbox_audit_lagging_aggregates{consumer="mail",stage="not_applied"} 2"#)
        .await;
    watch
        .wait_for(r#"outbox_audit_lagging_aggregates{consumer="mail",stage="quarantined"} 0"#)
        .await;
    let human = ctl.run(None, &["audit", "--grace", "2s"]).await;
    assert_eq!(
        human.code, LAGGING,
        "the lagging orders' exit code: {human:?}"
    );
    assert!(
        human.stdout.contains("2 order(s) lagging") && human.stdout.contains("outboxctl trace"),
        "{human:?}"
    );
    let human = ctl
        .run(None, &["trace", "--order", &lost_a.to_string()])
        .await
        .ok();
    assert!(
        human.stdout.contains("published, never applied"),
        "{human:?}"
    );

    // A restore of mail-svc's database from a backup taken before order 5104's second event:
    // its watermark goes back and the mail is gone, though nothing changed in the orders since.
    let restored = orders[3];
    let e2 = stack.upsert(restored, OrderStatus::Paid).await;
    stack
        .wait_until_sent("before the restore", restored, &[first[3], e2])
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
    // The watching audit finds the restored order too: by its slice of heads (nothing was
    // published for it since its last pass).
    watch
        .wait_for(r#"outbox_audit_lagging_aggregates{consumer="mail",stage="not_applied"} 3"#)
        .await;

    // Each order's kept events, replayed to mail-svc's queue only: the inbox skips what it
    // applied, so each missing mail goes out once, in chain order, and the audit clears.
    for order in [lost_a, lost_b, restored] {
        let replayed = ctl
            .change_json(
                &[
                    "replay",
                    "--order",
                    &order.to_string(),
                    "--queue",
                    &stack.names.queue,
                ],
                "lost from mail-svc's queue, found by the audit",
            )
            .await;
        assert_eq!(
            replayed["seqs"].as_array().map(Vec::len),
            Some(2),
            "{replayed}"
        );
    }
    stack
        .wait_until_sent("a's replayed mail", lost_a, &[first[1], a2])
        .await;
    stack
        .wait_until_sent("b's replayed mail", lost_b, &[first[4], b2])
        .await;
    stack
        .wait_until_sent("the restored order's mail", restored, &[first[3], e2])
        .await;
    assert_eq!(lagging(&ctl, "2s").await, []);
    watch
        .wait_for(r#"outbox_audit_lagging_aggregates{consumer="mail",stage="not_applied"} 0"#)
        .await;
    assert_eq!(
        stopped_at(&ctl, lost_a).await,
        [
            (first[1], "done (mail sent)".to_owned()),
            (a2, "done (mail sent)".to_owned())
        ]
    );
    watch.stop();
    stack.cleanup().await;
}

/// Events that are not lost are named for where they are: a quarantined row, a dead-lettered
/// event (with its reason), an event the relay has not published (the relay is down); each
/// with the seq its order waits for.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn quarantined_dead_lettered_and_unpublished_events_are_named_as_such() {
    let mut stack = Stack::start().await;
    let (q, d, u) = (5201_i64, 5202_i64, 5203_i64);
    let d1 = stack.upsert(d, OrderStatus::Pending).await;
    stack.wait_until_sent("d's first mail", d, &[d1]).await;

    // A row the relay cannot encode (no routing key, a misspelt type): quarantined.
    let q1 = stack.insert_unencodable(q).await;
    // A bad deploy of mail-svc dead-letters d's next event.
    stack.redeploy_mail("relay-svc-typo").await;
    let d2 = stack.upsert(d, OrderStatus::Paid).await;
    wait_until("d2 dead-lettered", || async {
        sqlx::query_scalar::<_, i64>("select count(*) from dead_letters where seq = $1")
            .bind(d2)
            .fetch_one(&stack.mail_pool)
            .await
            .is_ok_and(|n| n == 1)
    })
    .await;
    // The relay stops: u's event stays in the outbox.
    stack.stop_relay().await;
    let u1 = stack.upsert(u, OrderStatus::Pending).await;
    let ctl = stack.ctl();
    wait_until("q1 quarantined", || async {
        sqlx::query_scalar::<_, i64>("select count(*) from outbox_quarantine where seq = $1")
            .bind(q1)
            .fetch_one(&stack.orders_pool)
            .await
            .is_ok_and(|n| n == 1)
    })
    .await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(
        lagging(&ctl, "1s").await,
        [
            (q, "quarantined".to_owned(), Some(q1)),
            (d, "dead_lettered".to_owned(), Some(d2)),
            (u, "unpublished".to_owned(), Some(u1)),
        ]
    );
    let report = audit_report(&ctl, "1s").await;
    let details: Vec<&str> = report["lagging"]
        .as_array()
        .expect("a list")
        .iter()
        .map(|l| l["detail"].as_str().expect("detail"))
        .collect();
    assert!(details[0].contains("routing key"), "{details:?}");
    assert!(
        details[1].contains("relay-svc-typo") || details[1].contains("publisher"),
        "{details:?}"
    );
    assert_eq!(
        stopped_at(&ctl, d).await,
        [
            (d1, "done (mail sent)".to_owned()),
            (d2, "dead-lettered".to_owned())
        ]
    );
    assert_eq!(
        stopped_at(&ctl, u).await,
        [(u1, "not published yet".to_owned())]
    );
    assert_eq!(stopped_at(&ctl, q).await, [(q1, "quarantined".to_owned())]);
    let missing = ctl.run(None, &["trace", "--order", "5299"]).await;
    assert_eq!(missing.code, 4, "{missing:?}");
    stack.cleanup().await;
}

/// `outboxctl audit --watch` against the stack's databases, its metrics on a port of its own.
struct Watch {
    child: tokio::process::Child,
    addr: std::net::SocketAddr,
}

impl Watch {
    async fn start(ctl: &Ctl) -> Self {
        let addr = outbox_testkit::free_local_addr().expect("a free port");
        let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_outboxctl"))
            .env("OUTBOXCTL_ORDERS_DB", &ctl.orders_db)
            .env("OUTBOXCTL_MAIL_DB", &ctl.mail_db)
            // Two heads per slice: the restored order is found by the rolling slices.
            .args([
                "audit",
                "--watch",
                "--interval",
                "200ms",
                "--grace",
                "2s",
                "--slice",
                "2",
            ])
            .arg(format!("--metrics-addr={addr}"))
            .kill_on_drop(true)
            .spawn()
            .expect("outboxctl audit --watch starts");
        Self { child, addr }
    }

    /// Waits until its /metrics has the line `line`.
    async fn wait_for(&self, line: &str) {
        wait_until(line, || async {
            outbox_testkit::scrape(self.addr)
                .await
                .is_ok_and(|text| text.lines().any(|l| l == line))
        })
        .await;
    }

    fn stop(mut self) {
        let _ = self.child.start_kill();
    }
}
