//! The operator's story, end to end, through the real `outboxctl` binary against the real stack
//! (orders-svc, relay-svc, mail-svc in-process on port 0; the machine's PostgreSQL and RabbitMQ):
//!
//! 1. a bad deploy of mail-svc (TRUSTED_PUBLISHERS names the wrong user) dead-letters two
//!    orders' events; once it is fixed, their next events are held behind them;
//! 2. `outboxctl status` shows the held chains, the dead letters, and what to do;
//! 3. one predecessor is redriven and its order's mails go out in chain order; the other order's
//!    chain is released with a reason (its missing event skipped);
//! 4. a row the relay cannot encode is quarantined, repaired, requeued and published;
//! 5. a FAILED mail is retried and sent;
//!
//! with the audit rows of every change asserted, and every repeated call changing nothing. And
//! a message lost from mail-svc's queue (a purge) is replayed from the published rows: the held
//! chain flows, and a replay of what mail-svc already handled sends no mail twice.

use outbox_proto::orders::v1::OrderStatus;
use outbox_testkit::orders::payload;

use crate::common::{Stack, StackCtl as _, audit, wait_until};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_stuck_state_is_found_and_resolved_with_outboxctl() {
    let mut stack = Stack::start().await;
    let (x, y) = (4301_i64, 4302_i64);

    // Both orders are created while all is well.
    let x1 = stack.upsert(x, OrderStatus::Pending).await;
    let y1 = stack.upsert(y, OrderStatus::Pending).await;
    wait_until("the first mails", || async {
        stack.mails(x).await == [(x1, true)] && stack.mails(y).await == [(y1, true)]
    })
    .await;

    // A bad deploy: mail-svc trusts the wrong publisher, so the next events are dead-lettered.
    stack.redeploy_mail("relay-svc-typo").await;
    let x2 = stack.upsert(x, OrderStatus::Paid).await;
    let y2 = stack.upsert(y, OrderStatus::Paid).await;
    let ctl = stack.ctl();
    wait_until("two dead letters", || async {
        ctl.try_json(&["dead-letters", "list"])
            .await
            .is_some_and(|j| j["count"] == 2)
    })
    .await;

    // A redrive now would only dead-letter them again: refused, saying why.
    let early = ctl
        .change(&["dead-letters", "redrive", "--all"], "too early")
        .await;
    assert_eq!(early.code, 1, "{early:?}");
    assert!(
        early
            .stderr
            .contains("Add \"guest\" to TRUSTED_PUBLISHERS (nothing changed)"),
        "{early:?}"
    );

    // The fix is deployed; the orders' next events wait for the dead-lettered ones.
    stack.redeploy_mail("guest").await;
    let ctl = stack.ctl();
    let x3 = stack.upsert(x, OrderStatus::Shipped).await;
    let y3 = stack.upsert(y, OrderStatus::Shipped).await;
    wait_until("two held events", || async {
        ctl.try_json(&["status"])
            .await
            .is_some_and(|j| j["figures"]["held_events"] == 2)
    })
    .await;

    // `status` finds it: held chains, dead letters, and the way out.
    let status = ctl.run(None, &["status"]).await.ok();
    assert!(status.stdout.contains("LEADER"), "{}", status.stdout);
    assert!(
        status.stdout.contains("2 in 2 order(s)"),
        "{}",
        status.stdout
    );
    assert!(
        status.stdout.contains(&format!(
            "order {x} waits for seq {x2}, which is in the dead-letter queue"
        )),
        "{}",
        status.stdout
    );
    assert!(
        status
            .stdout
            .contains(&format!("outboxctl dead-letters redrive --seq {x2}")),
        "{}",
        status.stdout
    );
    let json = ctl.json(&["status"]).await;
    assert_eq!(json["figures"]["dead_letters"], 2);
    assert_eq!(json["figures"]["held_events"], 2);

    let held = ctl.json(&["held", "list"]).await;
    let orders = held["orders"].as_array().expect("orders");
    assert_eq!(orders.len(), 2, "{held}");
    for (order, missing, next) in [(x, x2, x3), (y, y2, y3)] {
        let o = orders
            .iter()
            .find(|o| o["order_id"] == order)
            .expect("held order");
        assert_eq!(o["waiting_for"], missing);
        assert_eq!(o["waiting_for_dead_lettered"], true);
        assert_eq!(o["held_seqs"], serde_json::json!([next]));
    }
    let table = ctl.run(None, &["held", "list"]).await.ok();
    assert!(table.stdout.contains("DEAD-LETTERED"), "{table:?}");
    let table = ctl.run(None, &["dead-letters", "list"]).await.ok();
    assert!(
        table.stdout.contains("2 dead letter(s) in the queue"),
        "{table:?}"
    );
    let dead = ctl
        .json(&["dead-letters", "list", "--order", &x.to_string()])
        .await;
    assert_eq!(dead["messages"][0]["seq"], x2);
    assert!(
        dead["messages"][0]["reason"]
            .as_str()
            .expect("reason")
            .contains("TRUSTED_PUBLISHERS"),
        "{dead}"
    );

    // Redrive x's predecessor (its cause is fixed): x's mails go out in chain order.
    ctl.change_says(
        &["dead-letters", "redrive", "--seq", &x2.to_string()],
        "TRUSTED_PUBLISHERS fixed",
        &format!("redriven 1 message(s) to the main queue: {x2}"),
    )
    .await;
    stack
        .wait_until_sent("x's chain sent in order", x, &[x1, x2, x3])
        .await;
    // Again: the dead letter is gone, the filter matches nothing, nothing changes.
    let again = ctl
        .change(
            &["dead-letters", "redrive", "--seq", &x2.to_string()],
            "again",
        )
        .await;
    assert_eq!(again.code, 4, "{again:?}");
    assert!(again.stderr.contains(&format!(
        "no dead letter matches seq {x2} (nothing changed)"
    )));

    // Release y's chain instead: its missing event is skipped, the held one is mailed.
    ctl.change_says(
        &["held", "release", "--order", &y.to_string()],
        "paid mail not wanted, INC-1",
        &format!("order {y}: skipped seq {y2}, released {y3}"),
    )
    .await;
    stack
        .wait_until_sent("y's released chain sent", y, &[y1, y3])
        .await;
    let again = ctl
        .change_json(&["held", "release", "--order", &y.to_string()], "again")
        .await;
    assert_eq!(again["already_released"], true);
    // y's dead letter is still there; a late copy of it would be skipped as a duplicate.
    let dead = ctl.json(&["dead-letters", "list"]).await;
    assert_eq!(dead["count"], 1);
    assert_eq!(dead["messages"][0]["seq"], y2);

    // A row the relay cannot encode (hand-written the first orders outbox's way, without a
    // routing key, and with a misspelt type) is quarantined and holds back its order's next
    // event.
    let z = 4303_i64;
    let z1 = stack.insert_unencodable(z).await;
    wait_until("the row quarantined", || async {
        ctl.try_json(&["quarantine", "list"])
            .await
            .is_some_and(|j| j["count"] == 1)
    })
    .await;
    let z2: i64 = sqlx::query_scalar(
        "insert into outbox (aggregate_id, event_type, routing_key, prev_seq, payload)
         values ($1, 'OrderStatusChanged', 'order.status_changed', $2, $3) returning seq",
    )
    .bind(z)
    .bind(z1)
    .bind(payload(z, OrderStatus::Paid, OrderStatus::Pending))
    .fetch_one(&stack.orders_pool)
    .await
    .expect("insert");
    let list = ctl.run(None, &["quarantine", "list"]).await.ok();
    assert!(
        list.stdout
            .contains("no routing key (not written by the outbox crate)"),
        "{list:?}"
    );
    let backlog = ctl.run(None, &["backlog"]).await.ok();
    assert!(
        backlog
            .stdout
            .contains("quarantined 1 (holding back 1 row(s))"),
        "{backlog:?}"
    );
    let status = ctl.json(&["status"]).await;
    assert_eq!(status["figures"]["quarantined"], 1);
    assert_eq!(status["figures"]["held_back_by_quarantine"], 1);
    // The operator repairs the row, then requeues it: both events are published and mailed.
    sqlx::query(
        "update outbox_quarantine set event_type = 'OrderCreated', routing_key = 'order.created'
          where seq = $1",
    )
    .bind(z1)
    .execute(&stack.orders_pool)
    .await
    .expect("repair");
    ctl.change_says(
        &["quarantine", "requeue", "--seq", &z1.to_string()],
        "type repaired by hand",
        &format!("requeued: {z1}\n"),
    )
    .await;
    stack
        .wait_until_sent("z's chain published and mailed", z, &[z1, z2])
        .await;
    let again = ctl
        .change_json(
            &["quarantine", "requeue", "--seq", &z1.to_string()],
            "again",
        )
        .await;
    assert_eq!(again["requeued"], serde_json::json!([]));
    assert_eq!(again["already_requeued"], serde_json::json!([z1]));

    // A mail the server refused for good (as the mailer records a permanent 5xx) is retried.
    sqlx::query(
        "update mails set sent_at = null, failed_at = now(),
                          last_error = '550 5.1.1 mailbox unavailable'
          where seq = $1",
    )
    .bind(x3)
    .execute(&stack.mail_pool)
    .await
    .expect("fail the mail");
    let failed = ctl.run(None, &["mails", "failed"]).await.ok();
    assert!(
        failed.stdout.contains("550 5.1.1 mailbox unavailable"),
        "{failed:?}"
    );
    let status = ctl.json(&["status"]).await;
    assert_eq!(status["figures"]["failed_mails"], 1);
    ctl.change_says(
        &["mails", "retry", "--seq", &x3.to_string()],
        "mailbox restored",
        &format!("retried: {x3}\n"),
    )
    .await;
    stack
        .wait_until_sent("the retried mail sent", x, &[x1, x2, x3])
        .await;
    let again = ctl
        .change_json(&["mails", "retry", "--seq", &x3.to_string()], "again")
        .await;
    assert_eq!(again["not_failed"], serde_json::json!([x3]));

    // Nothing is stuck any more but y's skipped dead letter.
    ctl.run(None, &["status"]).await.ok();
    let status = ctl.json(&["status"]).await;
    assert_eq!(status["figures"]["held_events"], 0);
    assert_eq!(status["figures"]["quarantined"], 0);
    assert_eq!(status["figures"]["failed_mails"], 0);
    assert_eq!(status["figures"]["dead_letters"], 1);

    // The audit trail: one row per change, none for the repeats.
    let mail_audit = audit(&stack.mail_pool).await;
    let actions: Vec<(&str, &[i64], &str, Option<&str>)> = mail_audit
        .iter()
        .map(|(a, ids, r, op, _)| (a.as_str(), ids.as_slice(), r.as_str(), op.as_deref()))
        .collect();
    assert_eq!(
        actions,
        [
            (
                "RedriveDeadLetters",
                &[x2][..],
                "TRUSTED_PUBLISHERS fixed",
                Some("test-operator")
            ),
            (
                "ReleaseHeld",
                &[y3][..],
                "paid mail not wanted, INC-1",
                Some("test-operator")
            ),
            (
                "RetryMails",
                &[x3][..],
                "mailbox restored",
                Some("test-operator")
            ),
        ]
    );
    assert_eq!(mail_audit[1].4["skipped"], serde_json::json!([y2]));
    let relay_audit = audit(&stack.orders_pool).await;
    assert_eq!(relay_audit.len(), 1, "{relay_audit:?}");
    assert_eq!(relay_audit[0].0, "RequeueQuarantined");
    assert_eq!(relay_audit[0].1, [z1]);
    assert_eq!(relay_audit[0].2, "type repaired by hand");
    assert_eq!(relay_audit[0].3.as_deref(), Some("test-operator"));

    stack.cleanup().await;
}

/// The other way out of quarantine: the row is dropped (kept in the audit row), its order's next
/// event flows and is held by mail-svc behind the dropped seq, which is no dead letter; releasing
/// the chain skips it. A chain with two gaps is released past both, in chain order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dropped_row_and_a_chain_with_two_gaps_are_released() {
    let stack = Stack::start().await;
    let ctl = stack.ctl();
    let w = 4401_i64;
    let insert = |seq: Option<i64>, event_type: &'static str, prev: Option<i64>, p: Vec<u8>| {
        let pool = stack.orders_pool.clone();
        async move {
            // An explicit seq leaves a gap before it (the chain's missing events).
            sqlx::query_scalar::<_, i64>(
                "insert into outbox (seq, aggregate_id, event_type, routing_key, prev_seq,
                                     payload)
                 overriding system value
                 values (coalesce($1, nextval(pg_get_serial_sequence('outbox', 'seq'))),
                         $2, $3, $6, $4, $5)
                 returning seq",
            )
            .bind(seq)
            .bind(w)
            .bind(event_type)
            .bind(prev)
            .bind(p)
            // A misspelt type has none: the row is quarantined.
            .bind(outbox_proto::orders::events::v1::routing_key(event_type))
            .fetch_one(&pool)
            .await
            .expect("insert")
        }
    };
    let q1 = insert(
        None,
        "OrderCreatd",
        None,
        payload(w, OrderStatus::Pending, OrderStatus::Unspecified),
    )
    .await;
    wait_until("the row quarantined", || async {
        ctl.try_json(&["quarantine", "list"])
            .await
            .is_some_and(|j| j["count"] == 1)
    })
    .await;
    let q2 = insert(
        None,
        "OrderStatusChanged",
        Some(q1),
        payload(w, OrderStatus::Paid, OrderStatus::Pending),
    )
    .await;
    // Two more events behind two gaps that will never be filled.
    let (q4, q6) = (q2 + 200, q2 + 400);
    insert(
        Some(q4),
        "OrderStatusChanged",
        Some(q2 + 100),
        payload(w, OrderStatus::Shipped, OrderStatus::Paid),
    )
    .await;
    insert(
        Some(q6),
        "OrderStatusChanged",
        Some(q2 + 300),
        payload(w, OrderStatus::Delivered, OrderStatus::Shipped),
    )
    .await;

    ctl.change_says(
        &["quarantine", "drop", "--order", &w.to_string()],
        "a test event, never sent",
        &format!("dropped: {q1}\n"),
    )
    .await;
    let again = ctl
        .change_json(&["quarantine", "drop", "--order", &w.to_string()], "again")
        .await;
    assert_eq!(again["already_dropped"], serde_json::json!([q1]));

    wait_until("three events held", || async {
        ctl.try_json(&["held", "list"])
            .await
            .is_some_and(|j| j["held_events"] == 3)
    })
    .await;
    let held = ctl.json(&["held", "list"]).await;
    let o = &held["orders"][0];
    assert_eq!(o["order_id"], w);
    assert_eq!(o["waiting_for"], q1);
    assert_eq!(o["waiting_for_dead_lettered"], false);
    assert_eq!(o["held_seqs"], serde_json::json!([q2, q4, q6]));
    let table = ctl.run(None, &["held", "list"]).await.ok();
    assert!(
        table.stdout.contains("which is not a dead letter"),
        "{table:?}"
    );

    let release = ctl
        .change_json(
            &["held", "release", "--order", &w.to_string()],
            "skip the dropped row",
        )
        .await;
    assert_eq!(
        release["skipped"],
        serde_json::json!([q1, q2 + 100, q2 + 300])
    );
    assert_eq!(release["released"], serde_json::json!([q2, q4, q6]));
    stack
        .wait_until_sent("the released chain sent in order", w, &[q2, q4, q6])
        .await;

    let relay_audit = audit(&stack.orders_pool).await;
    assert_eq!(relay_audit.len(), 1, "{relay_audit:?}");
    let (action, ids, reason, operator, detail) = &relay_audit[0];
    assert_eq!(
        (action.as_str(), ids.as_slice(), reason.as_str()),
        ("DropQuarantined", &[q1][..], "a test event, never sent")
    );
    assert_eq!(operator.as_deref(), Some("test-operator"));
    assert_eq!(detail["order_id"], w);
    assert_eq!(detail["rows"][0]["type"], "OrderCreatd");
    assert_eq!(
        detail["rows"][0]["quarantine_reason"],
        "no routing key (not written by the outbox crate)"
    );
    assert!(
        detail["rows"][0]["payload_hex"]
            .as_str()
            .is_some_and(|h| !h.is_empty())
    );
    let mail_audit = audit(&stack.mail_pool).await;
    assert_eq!(mail_audit.len(), 1, "{mail_audit:?}");
    assert_eq!(mail_audit[0].0, "ReleaseHeld");
    assert_eq!(mail_audit[0].1, [q2, q4, q6]);

    stack.cleanup().await;
}

/// A redriven message keeps its body, message id and headers and counts its redrives: a poison
/// message redriven twice comes back to the dead-letter queue each time with `x-redrive-count`
/// one higher.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_redriven_message_keeps_its_properties_and_counts_redrives() {
    use lapin::{
        BasicProperties,
        options::BasicPublishOptions,
        types::{AMQPValue, FieldTable},
    };
    let stack = Stack::start().await;
    let ctl = stack.ctl();
    let (conn, ch) = outbox_testkit::confirming_channel().await;
    let mut headers = FieldTable::default();
    headers.insert("x-custom".into(), AMQPValue::LongString("kept".into()));
    ch.basic_publish(
        stack.names.exchange.as_str().into(),
        "order.created".into(),
        BasicPublishOptions::default(),
        br#"{"seq": "not a number"}"#,
        BasicProperties::default()
            .with_content_type("application/json".into())
            .with_message_id("poison-1".into())
            .with_headers(headers),
    )
    .await
    .expect("publish")
    .await
    .expect("confirm");

    for round in 0..3 {
        // One listing both finds the dead letter and is checked: a second listing right after
        // could read the quorum queue before the first one's hand-back is applied. A second
        // copy of the message still fails the wait.
        let seen = std::sync::Mutex::new(serde_json::Value::Null);
        wait_until("the poison message dead-lettered, alone", || async {
            let Some(j) = ctl.try_json(&["dead-letters", "list"]).await else {
                return false;
            };
            let alone = j["count"] == 1 && j["messages"][0]["redrive_count"] == round;
            *seen.lock().expect("listing") = j;
            alone
        })
        .await;
        let dead = seen.into_inner().expect("listing");
        assert_eq!(dead["count"], 1, "{dead}");
        let m = &dead["messages"][0];
        assert_eq!(m["message_id"], "poison-1");
        assert_eq!(m["routing_key"], "order.created");
        assert_eq!(m["body_bytes"], 23);
        if round < 2 {
            ctl.change(&["dead-letters", "redrive", "--all"], "try again")
                .await
                .ok();
        }
    }
    let rows = audit(&stack.mail_pool).await;
    assert_eq!(rows.len(), 2, "{rows:?}");
    let rows_before = rows.len();
    for (action, _, reason, _, detail) in &rows {
        assert_eq!(
            (action.as_str(), reason.as_str()),
            ("RedriveDeadLetters", "try again")
        );
        assert_eq!(detail["message_ids"], serde_json::json!(["poison-1"]));
    }

    // Two more: a redrive in batches of one shows its progress and moves each message once,
    // although each dies again (and matches again) while the command runs.
    for id in ["poison-2", "poison-3"] {
        ch.basic_publish(
            stack.names.exchange.as_str().into(),
            "order.created".into(),
            BasicPublishOptions::default(),
            br#"{"seq": "not a number"}"#,
            BasicProperties::default()
                .with_content_type("application/json".into())
                .with_message_id(id.into()),
        )
        .await
        .expect("publish")
        .await
        .expect("confirm");
    }
    wait_until("three dead letters", || async {
        ctl.try_json(&["dead-letters", "list"])
            .await
            .is_some_and(|j| j["count"] == 3)
    })
    .await;
    let batches = ctl
        .change_says(
            &["dead-letters", "redrive", "--all", "--batch", "1"],
            "in batches",
            "redriven 3 message(s)",
        )
        .await;
    assert!(
        batches.stderr.contains("redriven 1 of 3, 2 left"),
        "{batches:?}"
    );
    assert!(
        batches.stderr.contains("redriven 2 of 3, 1 left"),
        "{batches:?}"
    );
    assert_eq!(audit(&stack.mail_pool).await.len(), rows_before + 3);

    let _ = conn.close(200, "bye".into()).await;
    stack.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_message_lost_from_the_queue_is_replayed_and_its_chain_flows() {
    let mut stack = Stack::start().await;
    let o = 4401_i64;
    let first = stack.upsert(o, OrderStatus::Pending).await;
    stack.wait_until_sent("the first mail", o, &[first]).await;

    // mail-svc away; the next event reaches its queue and is purged from it by mistake.
    stack.stop_mail().await;
    let lost = stack.upsert(o, OrderStatus::Paid).await;
    published(&stack).await;
    crate::common::purge(&stack.names.queue).await;
    let next = stack.upsert(o, OrderStatus::Shipped).await;
    published(&stack).await;
    stack.start_mail_again().await;
    let ctl = stack.ctl();
    wait_until("the next event held behind the lost one", || async {
        ctl.try_json(&["held", "list"])
            .await
            .is_some_and(|j| j["held_events"] == 1)
    })
    .await;
    let advice = ctl.run(None, &["held", "list"]).await.ok();
    assert!(
        advice.stdout.contains(&format!(
            "`outboxctl replay --order {o} --from-seq {lost} --to-seq {lost} --queue"
        )),
        "{advice:?}"
    );

    // The lost event, replayed to mail-svc's queue only: the chain flows.
    let lost_seq = lost.to_string();
    let replayed = ctl
        .change_json(
            &[
                "replay",
                "--order",
                &o.to_string(),
                "--from-seq",
                &lost_seq,
                "--to-seq",
                &lost_seq,
                "--queue",
                &stack.names.queue,
            ],
            "purged by mistake, INC-4401",
        )
        .await;
    assert_eq!(replayed["seqs"], serde_json::json!([lost]), "{replayed}");
    assert_eq!(replayed["queue"], stack.names.queue.as_str());
    stack
        .wait_until_sent("the chain's mails", o, &[first, lost, next])
        .await;

    // Everything again: mail-svc skips what it handled (no mail twice); the human output says
    // what went where.
    let again = ctl
        .change_says(
            &[
                "replay",
                "--order",
                &o.to_string(),
                "--queue",
                &stack.names.queue,
            ],
            "check the dedupe",
            &format!(
                "replayed 3 event(s) of order {o} to queue {}",
                stack.names.queue
            ),
        )
        .await;
    assert!(
        again.stdout.contains(&format!("seq {first},{lost},{next}")),
        "{again:?}"
    );
    // One queue, one consumer: once the order's next mail is out, the copies were consumed.
    let last = stack.upsert(o, OrderStatus::Delivered).await;
    stack
        .wait_until_sent(
            "the next mail, after the copies",
            o,
            &[first, lost, next, last],
        )
        .await;

    let rows = audit(&stack.orders_pool).await;
    let replays: Vec<(&str, &[i64], &str)> = rows
        .iter()
        .map(|(action, ids, reason, _, _)| (action.as_str(), ids.as_slice(), reason.as_str()))
        .collect();
    assert_eq!(
        replays,
        [
            ("Replay", &[lost][..], "purged by mistake, INC-4401"),
            ("Replay", &[first, lost, next][..], "check the dedupe"),
        ]
    );
    assert_eq!(rows[0].3.as_deref(), Some("test-operator"));
    stack.cleanup().await;
}

/// Waits until the relay published everything orders-svc wrote (the outbox is empty).
async fn published(stack: &Stack) {
    wait_until("the outbox drained", || async {
        let left: i64 = sqlx::query_scalar("select count(*) from outbox")
            .fetch_one(&stack.orders_pool)
            .await
            .expect("outbox");
        left == 0
    })
    .await;
}
