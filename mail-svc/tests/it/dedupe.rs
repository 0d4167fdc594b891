//! Duplicates, reordering and holds, end to end: events published to a real RabbitMQ, mails read
//! back through the gRPC API.

use std::time::Duration;

use outbox_proto::{mail::v1::MailState, orders::v1::OrderStatus};
use outbox_testkit::run_in_own_process;

use crate::common::{
    Names, Publisher, SmtpSink, changed, config, created, eventually, metrics_text, smtp_config,
    start,
};

const EMAIL: &str = "taro@example.jp";

#[tokio::test]
async fn duplicate_delivery_gives_one_mail_and_counts_a_skip() {
    // The counters read below are process-wide: only in a process of its own do they count
    // this test's events alone.
    if run_in_own_process(concat!(
        module_path!(),
        "::duplicate_delivery_gives_one_mail_and_counts_a_skip"
    )) {
        return;
    }
    let names = Names::new();
    let svc = start(config(&names)).await;
    let publisher = Publisher::connect(&names.exchange).await;

    let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    publisher
        .proto_traced(&created(3, 43, EMAIL), Some(traceparent))
        .await;
    // Deliveries are processed concurrently: let the traced copy be the one that is mailed.
    eventually("first copy processed", 60, || async {
        (svc.status().await.processed == 1).then_some(())
    })
    .await;
    publisher.proto(&created(3, 43, EMAIL)).await;
    publisher.proto(&created(3, 43, EMAIL)).await;

    let status = svc.status_once("two skips", |s| s.skipped == 2).await;
    assert_eq!(status.processed, 1);
    assert_eq!(status.held, 0);
    assert_eq!(status.dead_lettered, 0);

    let mails = svc.mails(43).await;
    assert_eq!(mails.len(), 1, "{mails:?}");
    let m = &mails[0];
    assert_eq!(m.seq, 3);
    assert_eq!(m.r#type, "OrderCreated");
    assert_eq!(m.recipient, EMAIL);
    assert_eq!(
        m.subject,
        "[Order 43] ご注文を受け付けました / Your order has been received"
    );
    assert_eq!(m.idempotency_key, "order-event-3");
    assert_eq!(m.traceparent, traceparent);
    assert!(m.body.contains("ご注文を受け付けました"));

    // The log mailer delivers it.
    svc.mails_once("mail sent", 43, |m| {
        m[0].state == MailState::Sent as i32 && m[0].sent_at.is_some()
    })
    .await;
    assert_eq!(svc.status().await.unsent_mails, 0);

    // A redelivery much later is still a duplicate.
    publisher.proto(&created(3, 43, EMAIL)).await;
    eventually("third skip", 60, || async {
        (svc.status().await.skipped == 3).then_some(())
    })
    .await;
    assert_eq!(svc.seqs(43).await, vec![3]);

    let metrics = metrics_text(svc.metrics_addr).await;
    // Every counter is exported at 0 from the start, and this test has the process to itself:
    // these must have counted.
    let exposed = outbox_testkit::Exposition::parse(&metrics);
    for (name, want) in [
        ("mail_processed_total", 1.0),
        ("mail_skipped_total", 3.0),
        ("mail_sent_total", 1.0),
    ] {
        let counted = exposed.value(name);
        assert!(counted.is_some_and(|v| v >= want), "{name} in {metrics}");
    }
    svc.stop().await;
    names.cleanup().await;
}

#[tokio::test]
async fn successor_first_is_held_then_both_go_in_order() {
    let names = Names::new();
    let svc = start(config(&names)).await;
    let publisher = Publisher::connect(&names.exchange).await;

    publisher
        .proto(&changed(5, 4, 44, OrderStatus::Paid, EMAIL))
        .await;
    let s = svc.status_once("seq 5 held", |s| s.held == 1).await;
    assert_eq!(s.processed, 0);
    assert!(svc.mails(44).await.is_empty(), "nothing mailed while held");
    // A duplicate of the held event is skipped, not held twice.
    publisher
        .proto(&changed(5, 4, 44, OrderStatus::Paid, EMAIL))
        .await;
    eventually("held duplicate skipped", 60, || async {
        (svc.status().await.skipped == 1).then_some(())
    })
    .await;
    assert_eq!(svc.status().await.held, 1);

    publisher.proto(&created(4, 44, EMAIL)).await;
    let mails = svc.mails_once("both mailed", 44, |m| m.len() == 2).await;
    assert_eq!(mails.iter().map(|m| m.seq).collect::<Vec<_>>(), vec![4, 5]);
    assert!(mails[1].subject.contains("お支払いを確認しました"));
    let s = svc.status().await;
    assert_eq!((s.processed, s.held, s.oldest_held_age_ms), (2, 0, 0));
    svc.stop().await;
    names.cleanup().await;
}

#[tokio::test]
async fn a_fully_reversed_chain_is_mailed_in_chain_order() {
    let names = Names::new();
    let svc = start(config(&names)).await;
    let publisher = Publisher::connect(&names.exchange).await;
    // Order 7's chain: 10 -> 12 -> 15 -> 21 -> 30 (other orders' events sit in between).
    let statuses = [
        OrderStatus::Paid,
        OrderStatus::Shipped,
        OrderStatus::Delivered,
        OrderStatus::Cancelled,
    ];
    let seqs = [10u64, 12, 15, 21, 30];
    let mut events = vec![created(seqs[0], 7, EMAIL)];
    for (i, w) in seqs.windows(2).enumerate() {
        events.push(changed(w[1], w[0], 7, statuses[i], EMAIL));
    }
    for ev in events.iter().rev() {
        publisher.proto(ev).await;
    }
    let mails = svc
        .mails_once("whole chain mailed", 7, |m| m.len() == seqs.len())
        .await;
    assert_eq!(
        mails.iter().map(|m| m.seq).collect::<Vec<_>>(),
        seqs.to_vec()
    );
    let subjects: Vec<_> = mails.iter().map(|m| m.subject.as_str()).collect();
    assert!(subjects[0].contains("ご注文を受け付けました"));
    assert!(subjects[1].contains("お支払いを確認しました"));
    assert!(subjects[2].contains("商品を発送しました"));
    assert!(subjects[3].contains("商品をお届けしました"));
    assert!(subjects[4].contains("ご注文をキャンセルしました"));
    let s = svc.status().await;
    assert_eq!((s.processed, s.held, s.skipped), (5, 0, 0));
    svc.stop().await;
    names.cleanup().await;
}

#[tokio::test]
async fn a_json_event_in_the_seed_shape_is_accepted() {
    let names = Names::new();
    let svc = start(config(&names)).await;
    let publisher = Publisher::connect(&names.exchange).await;
    publisher
        .json(
            "order.created",
            r#"{"seq":1,"type":"OrderCreated","aggregate_id":42,"payload":{"id":42,"status":"pending","customer_email":"hanako@example.jp"},"ts_ms":1792076127301}"#,
        )
        .await;
    publisher
        .json(
            "order.status_changed",
            r#"{"seq":2,"type":"OrderStatusChanged","aggregate_id":42,"prev_seq":1,"payload":{"id":42,"status":"shipped","customer_email":"hanako@example.jp"},"ts_ms":1792076127301}"#,
        )
        .await;
    let mails = svc
        .mails_once("JSON events mailed", 42, |m| m.len() == 2)
        .await;
    assert_eq!(
        mails[1].subject,
        "[Order 42] 商品を発送しました / Your order has been shipped"
    );
    assert_eq!(mails[1].recipient, "hanako@example.jp");
    svc.stop().await;
    names.cleanup().await;
}

#[tokio::test]
async fn an_event_held_too_long_shows_in_the_status_and_metrics() {
    // The held-age gauge read below is process-wide: every mail-svc of the process sets it, so
    // only in a process of its own is it this test's service's.
    if run_in_own_process(concat!(
        module_path!(),
        "::an_event_held_too_long_shows_in_the_status_and_metrics"
    )) {
        return;
    }
    let names = Names::new();
    let mut cfg = config(&names);
    cfg.mail_hold_alert = Duration::from_millis(500);
    let svc = start(cfg).await;
    let publisher = Publisher::connect(&names.exchange).await;
    publisher
        .proto(&changed(9, 8, 90, OrderStatus::Shipped, EMAIL))
        .await;
    let s = svc
        .status_once("held for over a second", |s| {
            s.held == 1 && s.oldest_held_age_ms >= 1000
        })
        .await;
    assert_eq!(s.processed, 0);
    eventually("gauge exported", 60, || async {
        let m = metrics_text(svc.metrics_addr).await;
        m.lines()
            .any(|l| {
                l.starts_with("mail_oldest_held_age_seconds")
                    && l.split_whitespace()
                        .last()
                        .and_then(|v| v.parse::<f64>().ok())
                        .is_some_and(|v| v > 0.0)
            })
            .then_some(())
    })
    .await;
    // The predecessor arrives: the hold is released and the age drops to zero.
    publisher.proto(&created(8, 90, EMAIL)).await;
    svc.status_once("released", |s| {
        s.held == 0 && s.oldest_held_age_ms == 0 && s.processed == 2
    })
    .await;
    svc.stop().await;
    names.cleanup().await;
}

#[tokio::test]
async fn a_hold_survives_a_restart() {
    let names = Names::new();
    let first = start(config(&names)).await;
    let publisher = Publisher::connect(&names.exchange).await;
    publisher
        .proto(&changed(31, 30, 77, OrderStatus::Cancelled, EMAIL))
        .await;
    eventually("held", 60, || async {
        (first.status().await.held == 1).then_some(())
    })
    .await;
    first.stop().await;

    let second = start(config(&names)).await;
    assert_eq!(second.status().await.held, 1, "the hold is durable");
    publisher.proto(&created(30, 77, EMAIL)).await;
    // The duplicate of the first event, delivered after the restart, is still a duplicate.
    publisher.proto(&created(30, 77, EMAIL)).await;
    let s = second
        .status_once("released after the restart", |s| {
            s.processed == 2 && s.skipped == 1
        })
        .await;
    assert_eq!(s.held, 0);
    assert_eq!(second.seqs(77).await, vec![30, 31]);
    second.stop().await;
    names.cleanup().await;
}

/// A sharded orders-svc numbers each shard's events from 1: shard 1's seqs 10 and 11 are other
/// events than shard 0's. Delivered reversed and twice, each shard's chain is mailed once, in
/// order, under a key of its own; keyed by seq alone, shard 1's events would be skipped as
/// duplicates of shard 0's (or its second would wait on shard 0's watermark).
#[tokio::test]
async fn equal_seqs_of_two_shards_are_two_events_each_mailed_once() {
    let names = Names::new();
    let svc = start(config(&names)).await;
    let publisher = Publisher::connect(&names.exchange).await;

    let zero = [
        created(10, 100, EMAIL),
        changed(11, 10, 100, OrderStatus::Paid, EMAIL),
    ];
    let one = [
        created(10, 200, EMAIL),
        changed(11, 10, 200, OrderStatus::Paid, EMAIL),
    ];
    publisher.sharded(&one[1], "1").await;
    eventually("shard 1's second event held", 60, || async {
        (svc.status().await.held == 1).then_some(())
    })
    .await;
    publisher.proto(&zero[0]).await; // shard 0 as an unsharded orders-svc sends it
    publisher.sharded(&zero[1], "0").await;
    publisher.sharded(&one[0], "1").await;
    for ev in &one {
        publisher.sharded(ev, "1").await;
    }
    let status = svc
        .status_once("four mails, two skips", |s| {
            s.processed == 4 && s.skipped == 2
        })
        .await;
    assert_eq!(status.held, 0);
    let keys = |mails: Vec<outbox_proto::mail::v1::Mail>| {
        mails
            .into_iter()
            .map(|m| (m.shard, m.seq, m.idempotency_key))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        keys(svc.mails(100).await),
        [
            (0, 10, "order-event-10".to_owned()),
            (0, 11, "order-event-11".to_owned())
        ]
    );
    assert_eq!(
        keys(svc.mails(200).await),
        [
            (1, 10, "order-event-1-10".to_owned()),
            (1, 11, "order-event-1-11".to_owned())
        ]
    );
    svc.stop().await;
    names.cleanup().await;
}

/// Retention deletes sent mails (MAIL_RETENTION), yet a redelivery of their events is still a
/// duplicate: the order's watermark recognises it, not the mail row. No second mail reaches the
/// SMTP server, the order's next event is mailed as usual, and `processed` still counts the
/// pruned mails.
#[tokio::test]
async fn a_redelivered_event_whose_mail_was_pruned_is_still_a_duplicate() {
    let sink = SmtpSink::start().await;
    let names = Names::new();
    let mut cfg = smtp_config(&names, sink.addr);
    cfg.mail_retention = Duration::from_secs(1);
    let svc = start(cfg).await;
    let publisher = Publisher::connect(&names.exchange).await;

    publisher.proto(&created(1, 70, EMAIL)).await;
    publisher
        .proto(&changed(2, 1, 70, OrderStatus::Paid, EMAIL))
        .await;
    eventually("both mails sent", 60, || async {
        (sink.mails().len() == 2).then_some(())
    })
    .await;
    eventually("both mails pruned", 60, || async {
        svc.mails(70).await.is_empty().then_some(())
    })
    .await;
    let pruned: i64 = sqlx::query_scalar(
        "select coalesce(sum(value), 0)::bigint from counters where name = 'pruned'",
    )
    .fetch_one(&svc.pool)
    .await
    .expect("counter");
    assert_eq!(pruned, 2);
    assert_eq!(svc.status().await.processed, 2, "pruned mails still count");

    // Both events again (a redelivery, a replay from the broker), then the order's next one.
    publisher.proto(&created(1, 70, EMAIL)).await;
    publisher
        .proto(&changed(2, 1, 70, OrderStatus::Paid, EMAIL))
        .await;
    eventually("both redeliveries skipped", 60, || async {
        (svc.status().await.skipped == 2).then_some(())
    })
    .await;
    publisher
        .proto(&changed(3, 2, 70, OrderStatus::Shipped, EMAIL))
        .await;
    eventually("the next event mailed", 60, || async {
        (sink.mails().len() == 3).then_some(())
    })
    .await;
    let keys: Vec<String> = sink
        .mails()
        .iter()
        .filter_map(|m| m.header("X-Idempotency-Key"))
        .collect();
    assert_eq!(
        keys,
        ["order-event-1", "order-event-2", "order-event-3"],
        "one mail per event, no second one for the pruned"
    );
    let status = svc.status().await;
    assert_eq!((status.processed, status.skipped), (3, 2));
    svc.stop().await;
    names.cleanup().await;
}
