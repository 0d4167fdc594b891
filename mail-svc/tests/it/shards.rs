//! A sharded orders-svc: mail-svc keys events by (shard, seq) and chains by (shard, order).
//! Migration 0005 turns the data of an unsharded deployment into shard 0's, keys unchanged; the
//! admin service names each held chain's and dead letter's shard and acts on the shard asked.

use outbox_kit::admin::AdminToken;
use outbox_proto::{
    mail::admin::v1::{
        DeadLetterFilter, ListDeadLettersRequest, ListHeldRequest, RedriveDeadLettersRequest,
        ReleaseHeldRequest,
    },
    orders::v1::OrderStatus,
};
use prost::Message;
use tonic::{Code, Request};

use crate::common::{
    Names, Publisher, changed, config, created, eventually, start, take_dead_letters,
};

const EMAIL: &str = "hanako@example.jp";
const TOKEN: &str = "shard-test-admin-token";

/// What an unsharded deployment left behind at migration 0004: order 100 processed up to seq 10
/// with its mail queued, and its seq 12 held for seq 11. After 0005 they are shard 0's: seq 11
/// arrives unsharded (no header), releases 12, and the mails keep the keys they had.
#[tokio::test]
async fn the_shard_migration_keeps_an_unsharded_deployments_data() {
    let names = Names::new();
    let pool = outbox_kit::db::connect(&names.database_url, 2)
        .await
        .expect("database");
    mail_svc::db::MIGRATOR
        .run_to(4, &pool)
        .await
        .expect("migrations up to 0004");
    let held = changed(12, 11, 100, OrderStatus::Shipped, EMAIL).encode_to_vec();
    sqlx::query("insert into order_progress (order_id, last_seq) values (100, 10)")
        .execute(&pool)
        .await
        .expect("watermark");
    sqlx::query(
        "insert into held_events (seq, order_id, prev_seq, event) values (12, 100, 11, $1)",
    )
    .bind(held)
    .execute(&pool)
    .await
    .expect("held event");
    sqlx::query(
        "insert into mails (seq, order_id, event_type, recipient, subject, body, idempotency_key)
         values (10, 100, 'OrderCreated', $1, 's', 'b', 'order-event-10')",
    )
    .bind(EMAIL)
    .execute(&pool)
    .await
    .expect("mail");
    pool.close().await;

    let svc = start(config(&names)).await;
    let publisher = Publisher::connect(&names.exchange).await;
    publisher
        .proto(&changed(11, 10, 100, OrderStatus::Paid, EMAIL))
        .await;
    // Shard 1's seq 10 is no duplicate of shard 0's.
    publisher.sharded(&created(10, 200, EMAIL), "1").await;
    eventually("the held chain released, shard 1 mailed", 60, || async {
        (svc.seqs(100).await.len() == 3 && svc.seqs(200).await.len() == 1).then_some(())
    })
    .await;
    let keys: Vec<(u32, u64, String)> = svc
        .mails(100)
        .await
        .into_iter()
        .chain(svc.mails(200).await)
        .map(|m| (m.shard, m.seq, m.idempotency_key))
        .collect();
    assert_eq!(
        keys,
        [
            (0, 10, "order-event-10".to_owned()),
            (0, 11, "order-event-11".to_owned()),
            (0, 12, "order-event-12".to_owned()),
            (1, 10, "order-event-1-10".to_owned()),
        ]
    );
    assert_eq!(svc.status().await.held, 0);
    svc.stop().await;
    names.cleanup().await;
}

fn authorized<T>(message: T) -> Request<T> {
    let mut r = Request::new(message);
    r.metadata_mut().insert(
        "authorization",
        format!("Bearer {TOKEN}").parse().expect("metadata"),
    );
    r
}

/// Held chains and dead letters of two shards with equal seqs: the admin service names each
/// one's shard, releases the order's chain in its shard, and redrives the seqs of the shard
/// asked for only.
#[tokio::test]
async fn the_admin_service_names_and_acts_on_shards() {
    let names = Names::new();
    let mut cfg = config(&names);
    cfg.server.admin.admin_token = AdminToken::new(Some(TOKEN.to_owned()));
    let svc = start(cfg).await;
    let publisher = Publisher::connect(&names.exchange).await;
    let mut admin = svc.admin().await;

    // Order 300 of shard 1 waits for its lost seq 21; order 301 of shard 0 is fine.
    publisher.sharded(&created(20, 300, EMAIL), "1").await;
    publisher
        .sharded(&changed(22, 21, 300, OrderStatus::Shipped, EMAIL), "1")
        .await;
    publisher.proto(&created(20, 301, EMAIL)).await;
    svc.status_once("one held", |s| s.held == 1 && s.processed == 2)
        .await;
    let listed = admin
        .list_held(ListHeldRequest { limit: 10 })
        .await
        .expect("ListHeld")
        .into_inner();
    let o = &listed.orders[..];
    assert_eq!(o.len(), 1, "{o:?}");
    assert_eq!(
        (
            o[0].shard,
            o[0].order_id,
            o[0].waiting_for,
            &o[0].held_seqs[..]
        ),
        (1, 300, 21, &[22][..])
    );
    let released = admin
        .release_held(authorized(ReleaseHeldRequest {
            order_id: 300,
            reason: "seq 21 of shard 1 is lost".into(),
        }))
        .await
        .expect("ReleaseHeld")
        .into_inner();
    assert_eq!((released.skipped, released.released), (vec![21], vec![22]));
    assert_eq!(svc.seqs(300).await, [20, 22]);

    // Two dead letters with the same seq in two shards (each a second "first" event of its
    // order: a chain conflict): the seq filter takes the shard's only.
    // The second only once the first is applied: two deliveries may be applied out of order,
    // and a second "first" event applied first would make the first one a stale duplicate.
    let processed = svc.status().await.processed;
    for (shard, order) in [("0", 400), ("2", 401)] {
        publisher.sharded(&created(30, order, EMAIL), shard).await;
    }
    eventually("both first events applied", 60, || async {
        (svc.status().await.processed >= processed + 2).then_some(())
    })
    .await;
    for (shard, order) in [("0", 400), ("2", 401)] {
        publisher.sharded(&created(31, order, EMAIL), shard).await;
    }
    eventually("both dead-lettered", 60, || async {
        (svc.status().await.dead_lettered == 2).then_some(())
    })
    .await;
    let listed = admin
        .list_dead_letters(ListDeadLettersRequest {
            limit: 10,
            order_id: 0,
        })
        .await
        .expect("ListDeadLetters")
        .into_inner();
    let mut shards: Vec<(u32, u64, i64)> = listed
        .messages
        .iter()
        .map(|m| (m.shard, m.seq, m.order_id))
        .collect();
    shards.sort_unstable();
    assert_eq!(shards, [(0, 31, 400), (2, 31, 401)]);
    let redrive = |shard, seqs: Vec<u64>| RedriveDeadLettersRequest {
        filter: Some(DeadLetterFilter {
            seqs,
            shard,
            ..Default::default()
        }),
        reason: "test".into(),
        limit: 10,
    };
    let missing = admin
        .redrive_dead_letters(authorized(redrive(1, vec![31])))
        .await
        .expect_err("no seq 31 in shard 1");
    assert_eq!(missing.code(), Code::NotFound, "{missing:?}");
    assert!(
        missing.message().contains("seq 31 of shard 1"),
        "{missing:?}"
    );
    let moved = admin
        .redrive_dead_letters(authorized(redrive(2, vec![31])))
        .await
        .expect("RedriveDeadLetters")
        .into_inner();
    assert_eq!(moved.redriven, [31]);
    assert_eq!(moved.remaining, 0, "shard 0's seq 31 is not taken");
    // Redriven, shard 2's copy is dead-lettered again (still a conflict); shard 0's stayed.
    let again = take_dead_letters(&names.dead_letter_queue(), 2).await;
    let mut orders: Vec<_> = again.iter().map(|d| d.message_id.clone()).collect();
    orders.sort();
    assert_eq!(
        orders,
        [Some("shard-0-31".to_owned()), Some("shard-2-31".to_owned())]
    );
    svc.stop().await;
    names.cleanup().await;
}
