//! Hostile input to every field of `RelayAdmin`: NUL and control characters in strings, huge and
//! negative numbers, empty required fields, overlong strings. Each bad value is INVALID_ARGUMENT
//! naming its field (never INTERNAL, UNKNOWN or a panic), and nothing is recorded or moved.

use std::fmt::Debug;

use outbox_proto::relay::admin::v1::{
    DropQuarantinedRequest, ListBacklogRequest, ListQuarantinedRequest, QuarantineSelector,
    ReplayRequest, RequeueQuarantinedRequest,
};
use tonic::{Code, Status};

use crate::{
    common::orders_and_consumer,
    replay::{TOKEN, admin_of, audit, relay_with_token, with_token},
};

/// Reasons no admin call may accept, each with the start of the error it gets.
fn bad_reasons() -> Vec<(String, &'static str)> {
    vec![
        (String::new(), "reason: required"),
        (" \t ".into(), "reason: required"),
        ("lost\0in INC-1".into(), "reason: control character '\\0'"),
        ("\0".into(), "reason: control character '\\0'"),
        (
            "INC-1\u{1b}[2K".into(),
            "reason: control character '\\u{1b}'",
        ),
        ("two\nlines".into(), "reason: control character '\\n'"),
        ("bell\u{7}".into(), "reason: control character"),
        ("x".repeat(1001), "reason: at most 1000 characters"),
        ("é".repeat(100_000), "reason: at most 1000 characters"),
    ]
}

#[track_caller]
fn named<T: Debug>(what: &str, field: &str, answer: Result<T, Status>) {
    let e = answer.expect_err(what);
    assert_eq!(e.code(), Code::InvalidArgument, "{what}: {e:?}");
    assert!(
        e.message().starts_with(field),
        "{what}: {field:?} expected, got {:?}",
        e.message()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bad_field_of_the_relay_admin_api_is_named() {
    let (orders, exchange, consumer) = orders_and_consumer().await;
    let mut relay = relay_with_token(&orders, &outbox_testkit::amqp_url(), &exchange).await;
    let mut admin = admin_of(&relay).await;

    for limit in [1001, u32::MAX] {
        let what = format!("ListBacklog limit {limit}");
        named(
            &what,
            "limit: ",
            admin.list_backlog(ListBacklogRequest { limit }).await,
        );
        named(
            &what,
            "limit: ",
            admin
                .list_quarantined(ListQuarantinedRequest { limit, order_id: 0 })
                .await,
        );
    }
    for order_id in [-1, i64::MIN] {
        named(
            &format!("ListQuarantined order_id {order_id}"),
            "order_id: ",
            admin
                .list_quarantined(ListQuarantinedRequest { limit: 0, order_id })
                .await,
        );
    }

    // The moves out of quarantine: selector, shard, reason.
    let select = |seqs: Vec<u64>, order_id: i64| Some(QuarantineSelector { seqs, order_id });
    let mut moves: Vec<(String, Option<QuarantineSelector>, u32, String, &str)> = vec![
        ("no selector".into(), None, 0, "x".into(), "select: "),
        (
            "empty selector".into(),
            select(vec![], 0),
            0,
            "x".into(),
            "select: ",
        ),
        ("both".into(), select(vec![1], 5), 0, "x".into(), "select: "),
        (
            "seq 0".into(),
            select(vec![0], 0),
            0,
            "x".into(),
            "select.seqs: 0",
        ),
        (
            "seq max".into(),
            select(vec![u64::MAX], 0),
            0,
            "x".into(),
            "select.seqs: ",
        ),
        (
            "order -1".into(),
            select(vec![], -1),
            0,
            "x".into(),
            "select",
        ),
        (
            "order min".into(),
            select(vec![], i64::MIN),
            0,
            "x".into(),
            "select",
        ),
        (
            "shard 1".into(),
            select(vec![1], 0),
            1,
            "x".into(),
            "shard: 1",
        ),
        (
            "shard max".into(),
            select(vec![1], 0),
            u32::MAX,
            "x".into(),
            "shard: ",
        ),
    ];
    for (reason, field) in bad_reasons() {
        moves.push((
            format!("reason {reason:.20?}"),
            select(vec![1], 0),
            0,
            reason,
            field,
        ));
    }
    for (what, select, shard, reason, field) in moves {
        let requeue = RequeueQuarantinedRequest {
            select: select.clone(),
            reason: reason.clone(),
            shard,
        };
        named(
            &format!("RequeueQuarantined {what}"),
            field,
            admin
                .requeue_quarantined(with_token(requeue, Some(TOKEN)))
                .await,
        );
        let drop = DropQuarantinedRequest {
            select,
            reason,
            shard,
        };
        named(
            &format!("DropQuarantined {what}"),
            field,
            admin.drop_quarantined(with_token(drop, Some(TOKEN))).await,
        );
    }

    // The replay: every field.
    let good = ReplayRequest {
        order_id: 7,
        shard: 0,
        from_seq: 0,
        to_seq: 0,
        queue: consumer.queue.clone(),
        reason: "x".into(),
    };
    let mut replays: Vec<(ReplayRequest, &str)> = vec![
        (
            ReplayRequest {
                order_id: 0,
                ..good.clone()
            },
            "order_id: required",
        ),
        (
            ReplayRequest {
                order_id: -1,
                ..good.clone()
            },
            "order_id: -1",
        ),
        (
            ReplayRequest {
                order_id: i64::MIN,
                ..good.clone()
            },
            "order_id: ",
        ),
        (
            ReplayRequest {
                shard: 1,
                ..good.clone()
            },
            "shard: 1",
        ),
        (
            ReplayRequest {
                shard: u32::MAX,
                ..good.clone()
            },
            "shard: ",
        ),
        (
            ReplayRequest {
                from_seq: -1,
                ..good.clone()
            },
            "from_seq: -1",
        ),
        (
            ReplayRequest {
                from_seq: i64::MIN,
                ..good.clone()
            },
            "from_seq: ",
        ),
        (
            ReplayRequest {
                to_seq: -1,
                ..good.clone()
            },
            "to_seq: -1",
        ),
        (
            ReplayRequest {
                to_seq: i64::MIN,
                ..good.clone()
            },
            "to_seq: ",
        ),
        (
            ReplayRequest {
                from_seq: i64::MAX,
                to_seq: 1,
                ..good.clone()
            },
            "from_seq: ",
        ),
        (
            ReplayRequest {
                queue: String::new(),
                ..good.clone()
            },
            "queue: required",
        ),
        (
            ReplayRequest {
                queue: " ".into(),
                ..good.clone()
            },
            "queue: required",
        ),
        (
            ReplayRequest {
                queue: "q".repeat(256),
                ..good.clone()
            },
            "queue: at most 255",
        ),
        (
            ReplayRequest {
                queue: "ü".repeat(200),
                ..good.clone()
            },
            "queue: at most 255",
        ),
        (
            ReplayRequest {
                queue: "q\0".into(),
                ..good.clone()
            },
            "queue: control character",
        ),
        (
            ReplayRequest {
                queue: "q\u{1b}x".into(),
                ..good.clone()
            },
            "queue: control character",
        ),
    ];
    for (reason, field) in bad_reasons() {
        replays.push((
            ReplayRequest {
                reason,
                ..good.clone()
            },
            field,
        ));
    }
    for (request, field) in replays {
        let what = format!("Replay {field} ({:.60?})", request);
        named(
            &what,
            field,
            admin.replay(with_token(request, Some(TOKEN))).await,
        );
    }

    assert!(audit(&orders).await.is_empty(), "nothing recorded");
    assert!(consumer.snapshot().is_empty(), "nothing published");
    // Still serving: none of it reached a panic.
    admin
        .list_backlog(ListBacklogRequest { limit: 0 })
        .await
        .expect("still serving");
    relay.stop().await.expect("stops");
    consumer.cleanup().await;
}
