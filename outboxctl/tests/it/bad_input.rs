//! Bad input through the real `outboxctl` binary against the real stack: unknown ids, a redrive
//! filter that matches nothing, a replay of nothing or to a missing queue, a missing or wrong token, a read-only service, bad fields and an
//! unreachable service each get a clear error and an exit code, and nothing changes (no audit
//! row, no row moved, no message moved). Also: the admin services are listed by reflection.

use outbox_proto::orders::v1::OrderStatus;
use outbox_testkit::orders::payload;

use crate::common::{Ctl, Run, Stack, TOKEN, audit, start_relay, wait_until};

#[track_caller]
fn fails(r: &Run, code: i32, text: &str) {
    assert_eq!(r.code, code, "{r:?}");
    assert!(r.stderr.contains(text), "expected {text:?} in: {r:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn bad_input_gets_a_clear_error_and_changes_nothing() {
    let stack = Stack::start().await;
    let ctl = stack.ctl();
    // Something to act on: a mail, and a held event (its predecessor was never written).
    let o = 5101_i64;
    let first = stack.upsert(o, OrderStatus::Pending).await;
    wait_until("the first mail", || async {
        stack.mails(o).await == [(first, true)]
    })
    .await;
    let payload = payload(o, OrderStatus::Paid, OrderStatus::Pending);
    sqlx::query(
        "insert into outbox (seq, aggregate_id, event_type, routing_key, prev_seq, payload)
         overriding system value
         values ($2 + 100, $1, 'OrderStatusChanged', 'order.status_changed', $2 + 50, $3)",
    )
    .bind(o)
    .bind(first)
    .bind(payload)
    .execute(&stack.orders_pool)
    .await
    .expect("insert");
    let held = || async {
        let r = ctl.run(None, &["--json", "held", "list"]).await.ok();
        r.json()["held_events"].as_u64().expect("held_events")
    };
    wait_until("the event held", || async { held().await == 1 }).await;
    let (order, seq) = (o.to_string(), first.to_string());

    // No token, a wrong token.
    let no_token = ctl
        .run(
            None,
            &["held", "release", "--order", &order, "--reason", "x"],
        )
        .await;
    fails(
        &no_token,
        3,
        "needs the admin token: pass --token or set OUTBOXCTL_ADMIN_TOKEN",
    );
    for args in [
        &["held", "release", "--order", &order, "--reason", "x"][..],
        &["mails", "retry", "--seq", &seq, "--reason", "x"],
        &["dead-letters", "redrive", "--all", "--reason", "x"],
        &["quarantine", "requeue", "--seq", "1", "--reason", "x"],
        &["quarantine", "drop", "--order", &order, "--reason", "x"],
        &["replay", "--order", &order, "--reason", "x"],
    ] {
        let wrong = ctl.run(Some("not-the-token-0000000"), args).await;
        fails(&wrong, 3, "refused the admin token: wrong admin token");
    }

    // Unknown ids and a redrive filter that matches nothing.
    let unknown = ctl
        .run(
            Some(TOKEN),
            &["quarantine", "requeue", "--seq", "999999", "--reason", "x"],
        )
        .await;
    fails(
        &unknown,
        4,
        "not in quarantine (nothing changed): seq 999999",
    );
    let unknown = ctl
        .run(
            Some(TOKEN),
            &["quarantine", "drop", "--order", "424242", "--reason", "x"],
        )
        .await;
    fails(
        &unknown,
        4,
        "order 424242 has no row in quarantine (nothing changed)",
    );
    let unknown = ctl
        .run(
            Some(TOKEN),
            &["held", "release", "--order", "424242", "--reason", "x"],
        )
        .await;
    fails(
        &unknown,
        4,
        "order 424242 has no held events (nothing changed)",
    );
    let unknown = ctl
        .run(
            Some(TOKEN),
            &[
                "mails",
                "retry",
                "--seq",
                &format!("{seq},999999"),
                "--reason",
                "x",
            ],
        )
        .await;
    fails(&unknown, 4, "no mail for seq [999999] (nothing changed)");
    let none = ctl
        .run(
            Some(TOKEN),
            &["mails", "retry", "--all-failed", "--reason", "x"],
        )
        .await;
    fails(&none, 4, "there is no FAILED mail (nothing changed)");
    let none = ctl
        .run(
            Some(TOKEN),
            &[
                "dead-letters",
                "redrive",
                "--order",
                "424242",
                "--reason",
                "x",
            ],
        )
        .await;
    fails(
        &none,
        4,
        "no dead letter matches order 424242 (nothing changed)",
    );
    let none = ctl
        .run(
            Some(TOKEN),
            &["dead-letters", "redrive", "--all", "--reason", "x"],
        )
        .await;
    fails(&none, 4, "the dead-letter queue is empty (nothing changed)");

    // Bad fields, named.
    let bad = ctl
        .run(
            Some(TOKEN),
            &["held", "release", "--order=-5", "--reason", "x"],
        )
        .await;
    fails(&bad, 1, "order_id: -5 is not a positive integer");
    let bad = ctl
        .run(
            Some(TOKEN),
            &["held", "release", "--order", &order, "--reason", "  "],
        )
        .await;
    // Refused by outboxctl itself, before any call (a usage error).
    fails(&bad, 2, "--reason <REASON>': required");
    let bad = ctl
        .run(
            Some(TOKEN),
            &[
                "held",
                "release",
                "--order",
                &order,
                "--reason",
                "INC-1\u{1b}[2K",
            ],
        )
        .await;
    fails(&bad, 2, "--reason <REASON>': control character '\\u{1b}'");
    let bad = ctl
        .run(
            Some(TOKEN),
            &["quarantine", "requeue", "--seq", "0", "--reason", "x"],
        )
        .await;
    fails(&bad, 1, "select.seqs: 0 is not a valid seq");
    let bad = ctl
        .run(
            Some(TOKEN),
            &[
                "quarantine",
                "drop",
                "--shard",
                "1",
                "--seq",
                "1",
                "--reason",
                "x",
            ],
        )
        .await;
    fails(
        &bad,
        1,
        "shard: 1 is out of range: this relay has shard 0 only",
    );
    let bad = ctl.run(None, &["backlog", "--limit", "5000"]).await;
    fails(&bad, 1, "limit: 5000 is more than 1000");
    let usage = ctl
        .run(Some(TOKEN), &["mails", "retry", "--reason", "x"])
        .await;
    assert_eq!(usage.code, 2, "{usage:?}");

    // Replay: a usage error, nothing kept, a missing queue, bad fields named.
    let usage = ctl.run(Some(TOKEN), &["replay", "--order", &order]).await;
    assert_eq!(usage.code, 2, "--reason is required: {usage:?}");
    assert!(usage.stderr.contains("--reason"), "{usage:?}");
    let no_token = ctl
        .run(None, &["replay", "--order", &order, "--reason", "x"])
        .await;
    fails(&no_token, 3, "needs the admin token");
    let none = ctl
        .run(
            Some(TOKEN),
            &["replay", "--order", "424242", "--reason", "x"],
        )
        .await;
    fails(
        &none,
        4,
        "nothing in the retention window: no published event of order 424242",
    );
    let missing = outbox_testkit::unique("mail_ctl_missing_q");
    let r = ctl
        .run(
            Some(TOKEN),
            &[
                "replay", "--order", &order, "--queue", &missing, "--reason", "x",
            ],
        )
        .await;
    fails(&r, 1, &format!("queue \"{missing}\" does not exist"));
    for (args, says) in [
        (
            &["--order=-5"][..],
            "order_id: -5 is not a positive integer",
        ),
        (
            &["--order", &order, "--from-seq", "9", "--to-seq", "3"],
            "from_seq: 9 is after to_seq: 3",
        ),
        (&["--order", &order, "--queue", " "], "queue: required"),
    ] {
        let args: Vec<&str> = ["replay"]
            .iter()
            .chain(args)
            .chain(&["--reason", "x"])
            .copied()
            .collect();
        fails(&ctl.run(Some(TOKEN), &args).await, 1, says);
    }

    // A service that is not there.
    let away = Ctl {
        mail: "127.0.0.1:1".into(),
        ..ctl.clone()
    };
    let r = away.run(None, &["held", "list"]).await;
    fails(&r, 5, "cannot reach mail-svc at 127.0.0.1:1");
    assert!(
        r.stderr.contains("--mail-addr / OUTBOXCTL_MAIL_ADDR"),
        "{r:?}"
    );
    let r = away.run(None, &["status"]).await;
    assert_eq!(r.code, 0, "the others still answer: {r:?}");
    assert!(r.stdout.contains("UNREACHABLE"), "{r:?}");

    // A relay without ADMIN_TOKEN is read-only.
    let read_only = start_relay(&stack.names, None).await;
    let ro = Ctl {
        relay: read_only.grpc_addr.to_string(),
        ..ctl.clone()
    };
    ro.run(None, &["backlog"]).await.ok();
    let r = ro
        .run(
            Some(TOKEN),
            &["quarantine", "requeue", "--seq", "1", "--reason", "x"],
        )
        .await;
    fails(&r, 3, "read-only: ADMIN_TOKEN is not set on the service");
    read_only.stop().await;

    // Nothing changed: no audit row, the mail as it was, nothing held or quarantined.
    assert!(audit(&stack.mail_pool).await.is_empty());
    assert!(audit(&stack.orders_pool).await.is_empty());
    assert_eq!(stack.mails(o).await, [(first, true)]);
    assert_eq!(held().await, 1);

    // grpcurl can find the admin services (reflection v1 and v1alpha).
    for (addr, name) in [
        (stack.relay.grpc_addr, "relay.admin.v1.RelayAdmin"),
        (stack.mail.grpc_addr, "mail.admin.v1.MailAdmin"),
    ] {
        let names = outbox_testkit::reflection::services_v1(addr).await;
        assert!(names.iter().any(|s| s == name), "{names:?}");
        let names = outbox_testkit::reflection::services_v1alpha(addr).await;
        assert!(names.iter().any(|s| s == name), "{names:?}");
    }

    stack.cleanup().await;
}

/// Every subcommand's `--help` shows examples.
#[test]
fn every_subcommand_has_examples() {
    for args in [
        &["status"][..],
        &["backlog"],
        &["quarantine", "list"],
        &["quarantine", "requeue"],
        &["quarantine", "drop"],
        &["held", "list"],
        &["held", "release"],
        &["dead-letters", "list"],
        &["dead-letters", "redrive"],
        &["mails", "failed"],
        &["mails", "retry"],
        &["replay"],
    ] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_outboxctl"))
            .args(args)
            .arg("--help")
            .output()
            .expect("runs");
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{args:?}");
        assert!(
            help.contains("Examples:\n  outboxctl "),
            "{args:?} has no examples:\n{help}"
        );
    }
}
