//! Every action through the console, as an operator would take it: preview (count and seqs),
//! reason, confirm; each writes the admin_actions row outboxctl's action writes, with the
//! signed-in user as the operator, and the stuck events reach their mails once, in chain order.
//!
//! The stack is prepared first (dead letters from a mail-svc with a wrong TRUSTED_PUBLISHERS, an
//! event purged from mail-svc's queue, a row the relay cannot encode), then the console starts
//! against it and resolves each.

use std::time::Duration;

use outbox_proto::orders::v1::OrderStatus;
use reqwest::StatusCode;

use crate::common::{Browser, Console, OPERATOR, Stack, actions, form_token, purge, wait_until};

#[tokio::test]
async fn every_action_resolves_its_case_and_is_recorded_as_outboxctl_records_it() {
    let mut stack = Stack::start().await;
    // Dead letters: mail-svc trusts no publisher of the events.
    stack.redeploy_mail("nobody").await;
    let d1 = stack.upsert(3, OrderStatus::Pending).await;
    let d2 = stack.upsert(3, OrderStatus::Paid).await;
    wait_until("two dead letters", || async {
        sqlx::query_scalar::<_, i64>("select count(*) from dead_letters")
            .fetch_one(&stack.mail_pool)
            .await
            .expect("dead letters")
            == 2
    })
    .await;
    // A lost event: published while mail-svc is away, then purged from its queue.
    stack.stop_mail().await;
    let r1 = stack.upsert(4, OrderStatus::Pending).await;
    wait_until("order 4 published", || async {
        sqlx::query_scalar::<_, i64>("select count(*) from outbox_published where aggregate_id = 4")
            .fetch_one(&stack.orders_pool)
            .await
            .expect("published")
            == 1
    })
    .await;
    assert_eq!(purge(&stack.names.queue).await, 1);
    stack.start_mail_again().await;
    // A row the relay cannot encode, holding back its order's next event.
    let q1 = stack.insert_unencodable(5).await;
    let q2: i64 = sqlx::query_scalar(
        "insert into outbox (aggregate_id, event_type, routing_key, prev_seq, payload)
         values (5, 'OrderStatusChanged', $1, $2, $3) returning seq",
    )
    .bind(outbox_proto::orders::events::v1::routing_key(
        "OrderStatusChanged",
    ))
    .bind(q1)
    .bind(outbox_testkit::orders::payload(
        5,
        OrderStatus::Paid,
        OrderStatus::Pending,
    ))
    .fetch_one(&stack.orders_pool)
    .await
    .expect("order 5's next event, behind the quarantined row");
    let console = Console::start(&stack, "1s", &[]).await;
    let op = console.signed_in(OPERATOR).await;

    // The audit finds the lost event; the timeline says where it stopped.
    wait_until("order 4 lagging, not applied", || async {
        op.page("/audit?stage=not_applied")
            .await
            .contains(r#"href="/where?shard=0&amp;order=4""#)
    })
    .await;
    let timeline = op.page("/where?order=4").await;
    assert!(
        timeline.contains(r#"data-stopped="published, never applied""#),
        "{timeline}"
    );
    // Dry run, then the replay: rate-limited, with its progress.
    let dry = op.page("/replay?shard=0&order=4").await;
    assert!(
        dry.contains(&format!("apply: <strong>1</strong> (seq {r1})")),
        "{dry}"
    );
    let token = form_token(&dry, "/replay");
    let job = op
        .post(
            "/replay",
            &[
                ("csrf", &token),
                ("order", "4"),
                ("shard", "0"),
                ("reason", "queue purged INC-9"),
            ],
        )
        .await;
    wait_job(&op, &job, 1).await;
    stack.wait_until_sent("order 4 mailed once", 4, &[r1]).await;

    // Redrive all: the dead letters, each mailed once, in chain order.
    let list = op.page("/dead-letters").await;
    assert!(
        list.contains(&format!(r#"data-seq="{d1}""#))
            && list.contains(&format!(r#"data-seq="{d2}""#))
    );
    let token = form_token(&list, "/dead-letters/preview");
    let preview = op
        .post(
            "/dead-letters/preview",
            &[("csrf", &token), ("action", "matching")],
        )
        .await;
    assert_eq!(preview.status, StatusCode::OK, "{}", preview.body);
    assert!(
        preview.body.contains(r#"data-count="2""#)
            && preview.body.contains(&format!("0:{d1}, 0:{d2}")),
        "{}",
        preview.body
    );
    let t = form_token(&preview.body, "/dead-letters/redrive");
    let job = op
        .post(
            "/dead-letters/redrive",
            &[
                ("csrf", &t),
                ("mode", "all"),
                ("value", ""),
                ("target", "2"),
                ("reason", "TRUSTED_PUBLISHERS fixed"),
            ],
        )
        .await;
    wait_job(&op, &job, 2).await;
    stack
        .wait_until_sent("order 3 mailed in chain order", 3, &[d1, d2])
        .await;
    assert!(
        !op.page("/dead-letters").await.contains("data-seq="),
        "no dead letter left"
    );

    // Drop the quarantined row; its order's next event is then held by mail-svc; release it.
    let list = op.page("/quarantine?order=5").await;
    let token = form_token(&list, "/quarantine/preview");
    let preview = op
        .post(
            "/quarantine/preview",
            &[
                ("csrf", &token),
                ("action", "drop"),
                ("shard", "0"),
                ("seq", &q1.to_string()),
            ],
        )
        .await;
    assert!(
        preview
            .body
            .contains(&format!("row(s) of shard 0: seq {q1}")),
        "{}",
        preview.body
    );
    let t = form_token(&preview.body, "/quarantine/drop");
    let done = op
        .post(
            "/quarantine/drop",
            &[
                ("csrf", &t),
                ("shard", "0"),
                ("seqs", &q1.to_string()),
                ("reason", "unencodable INC-7"),
            ],
        )
        .await;
    assert_eq!(done.status, StatusCode::OK, "{}", done.body);
    assert!(
        done.body.contains(&format!(r#"data-done="{q1}""#)),
        "{}",
        done.body
    );
    wait_until("order 5 held", || async {
        op.page("/held").await.contains(r#"data-order="5""#)
    })
    .await;
    let list = op.page("/held").await;
    let token = form_token(&list, "/held/preview");
    let preview = op
        .post("/held/preview", &[("csrf", &token), ("order", "5")])
        .await;
    assert!(
        preview.body.contains(&format!("skip seq {q1}"))
            && preview.body.contains(&format!("seq {q2}.")),
        "{}",
        preview.body
    );
    let t = form_token(&preview.body, "/held/release");
    let done = op
        .post(
            "/held/release",
            &[
                ("csrf", &t),
                ("order", "5"),
                ("reason", "row dropped INC-7"),
            ],
        )
        .await;
    assert!(
        done.body.contains(&format!(r#"data-done="{q2}""#)),
        "{}",
        done.body
    );
    stack
        .wait_until_sent("order 5's next event mailed", 5, &[q2])
        .await;

    // The overview goes back to zero.
    wait_until("nothing lagging or stuck", || async {
        let page = op.page("/").await;
        [
            "quarantined",
            "held",
            "dead-letters",
            "lagging-not_applied",
            "lagging-dead_lettered",
        ]
        .iter()
        .all(|f| page.contains(&format!(r#"data-figure="{f}">0<"#)))
    })
    .await;

    // The audit trail: what outboxctl's actions write, with the console's user as operator.
    let alice = Some("alice".to_owned());
    assert_eq!(
        actions(&stack.orders_pool).await,
        vec![
            (
                "Replay".to_owned(),
                vec![r1],
                "queue purged INC-9".to_owned(),
                alice.clone()
            ),
            (
                "DropQuarantined".to_owned(),
                vec![q1],
                "unencodable INC-7".to_owned(),
                alice.clone()
            ),
        ]
    );
    assert_eq!(
        actions(&stack.mail_pool).await,
        vec![
            (
                "RedriveDeadLetters".to_owned(),
                vec![d1, d2],
                "TRUSTED_PUBLISHERS fixed".to_owned(),
                alice.clone()
            ),
            (
                "ReleaseHeld".to_owned(),
                vec![q2],
                "row dropped INC-7".to_owned(),
                alice
            ),
        ]
    );

    console.stop().await;
    stack.cleanup().await;
}

/// Follows the job a post started to its end, asserting it handled `n`.
async fn wait_job(op: &Browser, started: &crate::common::Answer, n: usize) {
    assert_eq!(started.status, StatusCode::SEE_OTHER, "{}", started.body);
    let path = started.location.clone().expect("the job's page");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let page = op.page(&path).await;
        if page.contains(r#"data-state="done""#) {
            assert!(page.contains(&format!(r#"data-done="{n}""#)), "{page}");
            return;
        }
        assert!(!page.contains(r#"data-state="failed""#), "{page}");
        assert!(
            tokio::time::Instant::now() < deadline,
            "the job did not finish: {page}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
