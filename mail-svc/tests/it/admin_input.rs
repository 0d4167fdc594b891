//! `MailAdmin` against hostile input and a broken audit table. Every field of every call gets
//! NUL and control characters, huge and negative numbers, empty and overlong values: each bad
//! value is INVALID_ARGUMENT naming its field, never INTERNAL, UNKNOWN or a panic. And a redrive,
//! which moves messages outside the database, is recorded before the first one moves: when its
//! audit row cannot be written, nothing moves.

use std::fmt::Debug;

use lapin::{Connection, ConnectionProperties, options::ExchangeDeleteOptions};
use outbox_kit::admin::AdminToken;
use outbox_proto::mail::admin::v1::{
    DeadLetterFilter, ListDeadLettersRequest, ListFailedMailsRequest, ListHeldRequest, MailFilter,
    RedriveDeadLettersRequest, ReleaseHeldRequest, RetryMailsRequest,
    mail_admin_client::MailAdminClient,
};
use serde_json::Value;
use tonic::{Code, Request, Status, transport::Channel};

use crate::common::{Names, Publisher, config, created, eventually, start};

const TOKEN: &str = "mail-admin-input-0123456789";

fn authorized<T>(message: T) -> Request<T> {
    let mut r = Request::new(message);
    r.metadata_mut().insert(
        "authorization",
        format!("Bearer {TOKEN}").parse().expect("metadata"),
    );
    r
}

/// Reasons no admin call may accept, each with the start of the error it gets.
fn bad_reasons() -> Vec<(String, &'static str)> {
    vec![
        (String::new(), "reason: required"),
        (" \t ".into(), "reason: required"),
        ("lost\0in INC-1".into(), "reason: control character '\\0'"),
        (
            "INC-1\u{1b}[2K".into(),
            "reason: control character '\\u{1b}'",
        ),
        ("two\r\nlines".into(), "reason: control character '\\r'"),
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

async fn audit_rows(pool: &sqlx::PgPool) -> Vec<(String, Vec<i64>, String, Value)> {
    sqlx::query_as("select action, ids, reason, detail from admin_actions order by id")
        .fetch_all(pool)
        .await
        .expect("admin_actions")
}

#[tokio::test]
async fn every_bad_field_of_the_mail_admin_api_is_named() {
    let names = Names::new();
    let mut cfg = config(&names);
    cfg.server.admin.admin_token = AdminToken::new(Some(TOKEN.to_owned()));
    let svc = start(cfg).await;
    let mut admin = svc.admin().await;

    for limit in [1001, u32::MAX] {
        let what = format!("limit {limit}");
        named(
            &what,
            "limit: ",
            admin.list_held(ListHeldRequest { limit }).await,
        );
        named(
            &what,
            "limit: ",
            admin
                .list_dead_letters(ListDeadLettersRequest { limit, order_id: 0 })
                .await,
        );
        named(
            &what,
            "limit: ",
            admin
                .list_failed_mails(ListFailedMailsRequest { limit, order_id: 0 })
                .await,
        );
    }
    for order_id in [-1, i64::MIN] {
        let what = format!("order_id {order_id}");
        named(
            &what,
            "order_id: ",
            admin
                .list_dead_letters(ListDeadLettersRequest { limit: 0, order_id })
                .await,
        );
        named(
            &what,
            "order_id: ",
            admin
                .list_failed_mails(ListFailedMailsRequest { limit: 0, order_id })
                .await,
        );
    }

    // ReleaseHeld.
    let mut releases: Vec<(ReleaseHeldRequest, &str)> = [0, -1, i64::MIN]
        .into_iter()
        .map(|order_id| {
            let r = ReleaseHeldRequest {
                order_id,
                reason: "x".into(),
            };
            (r, "order_id: ")
        })
        .collect();
    for (reason, field) in bad_reasons() {
        releases.push((
            ReleaseHeldRequest {
                order_id: 1,
                reason,
            },
            field,
        ));
    }
    for (r, field) in releases {
        let what = format!("ReleaseHeld {field} ({:.60?})", r);
        named(&what, field, admin.release_held(authorized(r)).await);
    }

    // RedriveDeadLetters: filter, reason, limit.
    let seqs = |seqs: Vec<u64>, shard: u32| {
        Some(DeadLetterFilter {
            seqs,
            shard,
            ..Default::default()
        })
    };
    let good = RedriveDeadLettersRequest {
        filter: seqs(vec![1], 0),
        reason: "x".into(),
        limit: 0,
    };
    let mut redrives: Vec<(RedriveDeadLettersRequest, &str)> = vec![
        (
            RedriveDeadLettersRequest {
                filter: None,
                ..good.clone()
            },
            "filter: ",
        ),
        (
            RedriveDeadLettersRequest {
                filter: Some(DeadLetterFilter::default()),
                ..good.clone()
            },
            "filter: ",
        ),
        (
            RedriveDeadLettersRequest {
                filter: Some(DeadLetterFilter {
                    seqs: vec![1],
                    all: true,
                    ..Default::default()
                }),
                ..good.clone()
            },
            "filter: ",
        ),
        (
            RedriveDeadLettersRequest {
                filter: seqs(vec![0], 0),
                ..good.clone()
            },
            "filter.seqs: 0",
        ),
        (
            RedriveDeadLettersRequest {
                filter: seqs(vec![u64::MAX], 0),
                ..good.clone()
            },
            "filter.seqs: ",
        ),
        (
            RedriveDeadLettersRequest {
                filter: seqs(vec![1], u32::MAX),
                ..good.clone()
            },
            "filter.shard: ",
        ),
        (
            RedriveDeadLettersRequest {
                filter: Some(DeadLetterFilter {
                    order_id: -1,
                    ..Default::default()
                }),
                ..good.clone()
            },
            "filter.order_id: -1",
        ),
        (
            RedriveDeadLettersRequest {
                filter: Some(DeadLetterFilter {
                    order_id: i64::MIN,
                    ..Default::default()
                }),
                ..good.clone()
            },
            "filter.order_id: ",
        ),
        (
            RedriveDeadLettersRequest {
                limit: 1001,
                ..good.clone()
            },
            "limit: ",
        ),
        (
            RedriveDeadLettersRequest {
                limit: u32::MAX,
                ..good.clone()
            },
            "limit: ",
        ),
    ];
    for (reason, field) in bad_reasons() {
        redrives.push((
            RedriveDeadLettersRequest {
                reason,
                ..good.clone()
            },
            field,
        ));
    }
    for (r, field) in redrives {
        let what = format!("RedriveDeadLetters {field} ({:.60?})", r);
        named(
            &what,
            field,
            admin.redrive_dead_letters(authorized(r)).await,
        );
    }

    // RetryMails: filter, reason.
    let mails = |seqs: Vec<u64>, shard: u32| {
        Some(MailFilter {
            seqs,
            shard,
            ..Default::default()
        })
    };
    let good = RetryMailsRequest {
        filter: mails(vec![1], 0),
        reason: "x".into(),
    };
    let mut retries: Vec<(RetryMailsRequest, &str)> = vec![
        (
            RetryMailsRequest {
                filter: None,
                ..good.clone()
            },
            "filter: ",
        ),
        (
            RetryMailsRequest {
                filter: Some(MailFilter {
                    order_id: 3,
                    all_failed: true,
                    ..Default::default()
                }),
                ..good.clone()
            },
            "filter: ",
        ),
        (
            RetryMailsRequest {
                filter: mails(vec![0], 0),
                ..good.clone()
            },
            "filter.seqs: 0",
        ),
        (
            RetryMailsRequest {
                filter: mails(vec![u64::MAX], 0),
                ..good.clone()
            },
            "filter.seqs: ",
        ),
        (
            RetryMailsRequest {
                filter: mails(vec![1], u32::MAX),
                ..good.clone()
            },
            "filter.shard: ",
        ),
        (
            RetryMailsRequest {
                filter: Some(MailFilter {
                    order_id: i64::MIN,
                    ..Default::default()
                }),
                ..good.clone()
            },
            "filter.order_id: ",
        ),
    ];
    for (reason, field) in bad_reasons() {
        retries.push((
            RetryMailsRequest {
                reason,
                ..good.clone()
            },
            field,
        ));
    }
    for (r, field) in retries {
        let what = format!("RetryMails {field} ({:.60?})", r);
        named(&what, field, admin.retry_mails(authorized(r)).await);
    }

    assert!(audit_rows(&svc.pool).await.is_empty(), "nothing recorded");
    admin
        .list_held(ListHeldRequest { limit: 0 })
        .await
        .expect("still serving: none of it reached a panic");
    svc.stop().await;
    names.cleanup().await;
}

/// How many dead letters there are, and each one's (seq, redrive count).
async fn dead_letters(admin: &mut MailAdminClient<Channel>) -> (u64, Vec<(u64, u32)>) {
    let listed = admin
        .list_dead_letters(ListDeadLettersRequest {
            limit: 10,
            order_id: 0,
        })
        .await
        .expect("ListDeadLetters")
        .into_inner();
    let seen = listed
        .messages
        .iter()
        .map(|m| (m.seq, m.redrive_count))
        .collect();
    (listed.count, seen)
}

/// Record before act: with an audit table that refuses rows the dead letter stays where it is,
/// never redriven; a NUL in the reason is refused before anything is taken; a redrive let
/// through is recorded with what it moved.
#[tokio::test]
async fn a_redrive_is_recorded_before_anything_moves() {
    let names = Names::new();
    let mut cfg = config(&names);
    cfg.server.admin.admin_token = AdminToken::new(Some(TOKEN.to_owned()));
    let svc = start(cfg).await;
    let mut admin = svc.admin().await;
    let publisher = Publisher::connect(&names.exchange).await;
    // An event of a type mail-svc does not know: dead-lettered, its seq and order readable.
    let mut unknown = created(40, 400, "ana@example.com");
    unknown.r#type = "Foo".into();
    publisher.proto(&unknown).await;
    eventually("the dead letter", 60, || async {
        (svc.status().await.dead_lettered == 1).then_some(())
    })
    .await;
    // Still the one dead letter, never redriven (a redriven copy would come back counted 1).
    assert_eq!(dead_letters(&mut admin).await, (1, vec![(40, 0)]));
    let redrive = |reason: &str| RedriveDeadLettersRequest {
        filter: Some(DeadLetterFilter {
            all: true,
            ..Default::default()
        }),
        reason: reason.into(),
        limit: 0,
    };

    sqlx::raw_sql(
        "create function refuse_audit() returns trigger language plpgsql as
           $$ begin raise exception 'admin_actions refuses rows'; end $$;
         create trigger refuse_audit before insert on admin_actions
           for each row execute function refuse_audit();",
    )
    .execute(&svc.pool)
    .await
    .expect("trigger");
    let e = admin
        .redrive_dead_letters(authorized(redrive("INC-400 not recorded")))
        .await
        .expect_err("the audit row cannot be written");
    assert_ne!(e.code(), Code::Ok, "{e:?}");
    assert_eq!(
        dead_letters(&mut admin).await,
        (1, vec![(40, 0)]),
        "nothing moved"
    );
    sqlx::raw_sql("drop trigger refuse_audit on admin_actions; drop function refuse_audit();")
        .execute(&svc.pool)
        .await
        .expect("drop trigger");

    let e = admin
        .redrive_dead_letters(authorized(redrive("lost\0INC-400")))
        .await
        .expect_err("a NUL in the reason");
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    assert!(
        e.message().starts_with("reason: control character"),
        "{e:?}"
    );
    assert_eq!(
        dead_letters(&mut admin).await,
        (1, vec![(40, 0)]),
        "nothing moved"
    );
    assert!(audit_rows(&svc.pool).await.is_empty(), "nothing recorded");

    let moved = admin
        .redrive_dead_letters(authorized(redrive("INC-400")))
        .await
        .expect("redriven")
        .into_inner();
    assert_eq!(moved.redriven, [40]);
    let rows = audit_rows(&svc.pool).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    let (action, ids, reason, detail) = &rows[0];
    assert_eq!(
        (action.as_str(), reason.as_str()),
        ("RedriveDeadLetters", "INC-400")
    );
    assert_eq!(ids, &[40]);
    assert_eq!(detail["error"], Value::Null);

    svc.stop().await;
    let conn = Connection::connect(&outbox_testkit::amqp_url(), ConnectionProperties::default())
        .await
        .expect("connect");
    let ch = conn.create_channel().await.expect("channel");
    ch.exchange_delete(
        format!("{}.redrive", names.queue).as_str().into(),
        ExchangeDeleteOptions::default(),
    )
    .await
    .expect("delete the redrive exchange");
    outbox_support::amqp::close(&conn, "bye").await;
    names.cleanup().await;
}
