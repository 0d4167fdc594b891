//! `RelayAdmin.Replay`: an order's published events sent again to one queue. A mutation like the
//! moves out of quarantine: it needs the admin token, names every bad field, and writes an
//! `admin_actions` row with the reason, the operator and the seqs sent; a missing queue, an
//! order with nothing kept and an unreachable broker each get their own code and send nothing.

use outbox_kit::admin::AdminToken;
use outbox_proto::relay::admin::v1::{ReplayRequest, relay_admin_client::RelayAdminClient};
use serde_json::Value;
use tonic::{Code, Request, metadata::MetadataValue, transport::Channel};

use crate::common::{LIFECYCLE, Orders, Relay, all_arrive, orders_and_consumer, relay_config};

pub(crate) const TOKEN: &str = "replay-admin-0123456789";

pub(crate) fn with_token<T>(msg: T, token: Option<&str>) -> Request<T> {
    let mut r = Request::new(msg);
    if let Some(t) = token {
        r.metadata_mut().insert(
            "authorization",
            MetadataValue::try_from(format!("Bearer {t}")).expect("ascii"),
        );
    }
    r.metadata_mut()
        .insert("x-operator", MetadataValue::from_static("alice"));
    r
}

pub(crate) async fn admin_of(relay: &Relay) -> RelayAdminClient<Channel> {
    RelayAdminClient::connect(format!("http://{}", relay.grpc_addr))
        .await
        .expect("admin client")
}

pub(crate) async fn relay_with_token(orders: &Orders, amqp_url: &str, exchange: &str) -> Relay {
    let mut cfg = relay_config(&orders.database_url, amqp_url, exchange);
    cfg.server.admin.admin_token = AdminToken::new(Some(TOKEN.into()));
    Relay::start(cfg).await
}

/// An audit row: action, ids, reason, operator, detail.
pub(crate) type Audit = (String, Vec<i64>, String, Option<String>, Value);

pub(crate) async fn audit(orders: &Orders) -> Vec<Audit> {
    sqlx::query_as("select action, ids, reason, operator, detail from admin_actions order by id")
        .fetch_all(&orders.pool)
        .await
        .expect("admin_actions")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replay_is_guarded_checked_audited_and_reaches_the_queue() {
    let (orders, exchange, consumer) = orders_and_consumer().await;
    let mut relay = relay_with_token(&orders, &outbox_testkit::amqp_url(), &exchange).await;
    let order = 7101;
    let mut events = Vec::new();
    for status in LIFECYCLE {
        events.push((order, orders.upsert(order, status).await));
    }
    all_arrive("the order's events", &consumer, &orders, &events).await;
    let seqs: Vec<i64> = events.iter().map(|(_, s)| *s as i64).collect();
    let first_publishes = consumer.snapshot().len();
    let mut admin = admin_of(&relay).await;
    let request =
        |order_id: i64, from_seq: i64, to_seq: i64, queue: &str, reason: &str| ReplayRequest {
            order_id,
            shard: 0,
            from_seq,
            to_seq,
            queue: queue.into(),
            reason: reason.into(),
        };
    let queue = consumer.queue.clone();

    // No token: refused before anything else.
    let e = admin
        .replay(with_token(request(order, 0, 0, &queue, "x"), None))
        .await
        .expect_err("no token");
    assert_eq!(e.code(), Code::Unauthenticated, "{e:?}");

    // Bad fields, each named.
    for (bad, field) in [
        (request(order, 0, 0, "", "x"), "queue: required"),
        (request(0, 0, 0, &queue, "x"), "order_id: required"),
        (request(-4, 0, 0, &queue, "x"), "order_id: -4"),
        (request(order, seqs[2], seqs[1], &queue, "x"), "from_seq: "),
        (request(order, 0, 0, &queue, " "), "reason: required"),
        (
            ReplayRequest {
                shard: 1,
                ..request(order, 0, 0, &queue, "x")
            },
            "shard: 1 is out of range",
        ),
    ] {
        let e = admin
            .replay(with_token(bad, Some(TOKEN)))
            .await
            .expect_err(field);
        assert_eq!(e.code(), Code::InvalidArgument, "{field}: {e:?}");
        assert!(e.message().starts_with(field), "{field}: {}", e.message());
    }

    // Nothing kept for the order or the range; a queue that does not exist.
    let e = admin
        .replay(with_token(request(424242, 0, 0, &queue, "x"), Some(TOKEN)))
        .await
        .expect_err("nothing kept");
    assert_eq!(e.code(), Code::NotFound, "{e:?}");
    assert!(
        e.message().contains("nothing in the retention window"),
        "{e:?}"
    );
    let e = admin
        .replay(with_token(
            request(order, seqs[3] + 1, 0, &queue, "x"),
            Some(TOKEN),
        ))
        .await
        .expect_err("nothing kept in the range");
    assert_eq!(e.code(), Code::NotFound, "{e:?}");
    let missing = outbox_testkit::unique("relay_replay_missing");
    let e = admin
        .replay(with_token(request(order, 0, 0, &missing, "x"), Some(TOKEN)))
        .await
        .expect_err("no such queue");
    assert_eq!(e.code(), Code::FailedPrecondition, "{e:?}");
    assert!(e.message().contains(&missing), "{e:?}");

    // The broker unreachable (a relay whose AMQP_URL leads nowhere, on the same database).
    let mut away = relay_with_token(
        &orders,
        &outbox_testkit::amqp_url_via("127.0.0.1:1"),
        &exchange,
    )
    .await;
    let e = admin_of(&away)
        .await
        .replay(with_token(request(order, 0, 0, &queue, "x"), Some(TOKEN)))
        .await
        .expect_err("no broker");
    assert_eq!(e.code(), Code::Unavailable, "{e:?}");
    away.stop().await.expect("stops");
    assert!(
        audit(&orders).await.is_empty(),
        "nothing done, nothing audited"
    );

    // The happy path: two events, to the consumer's queue only, audited.
    let sent = admin
        .replay(with_token(
            request(
                order,
                seqs[1],
                seqs[2],
                &queue,
                "INC-7101 consumer lost them",
            ),
            Some(TOKEN),
        ))
        .await
        .expect("replayed")
        .into_inner();
    assert_eq!(sent.seqs, seqs[1..3]);
    assert_eq!(sent.queue, queue);
    outbox_testkit::wait_until("the replayed events", || async {
        consumer.snapshot().len() == first_publishes + 2
    })
    .await;
    let again = &consumer.snapshot()[first_publishes..];
    let marks: Vec<(i64, bool)> = again
        .iter()
        .map(|r| {
            (
                r.event.seq as i64,
                r.headers().contains_key(outbox::wire::HEADER_REPLAY),
            )
        })
        .collect();
    assert_eq!(marks, [(seqs[1], true), (seqs[2], true)]);

    let rows = audit(&orders).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    let (action, ids, reason, operator, detail) = &rows[0];
    assert_eq!(action, "Replay");
    assert_eq!(ids, &seqs[1..3]);
    assert_eq!(reason, "INC-7101 consumer lost them");
    assert_eq!(operator.as_deref(), Some("alice"));
    assert_eq!(detail["order_id"], order);
    assert_eq!(detail["queue"], queue.as_str());

    relay.stop().await.expect("stops");
    consumer.cleanup().await;
}

/// Record before act: a replay whose audit row cannot be written sends nothing, and a reason the
/// audit row could not hold (a NUL byte) is refused before anything is read or sent. The
/// consumer's queue is FIFO and each replayed message is confirmed before the call returns, so
/// whatever a refused call had sent would arrive before the one replay that is let through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_is_recorded_before_anything_is_sent() {
    let (orders, exchange, consumer) = orders_and_consumer().await;
    let mut relay = relay_with_token(&orders, &outbox_testkit::amqp_url(), &exchange).await;
    let order = 7102;
    let mut events = Vec::new();
    for status in LIFECYCLE {
        events.push((order, orders.upsert(order, status).await));
    }
    all_arrive("the order's events", &consumer, &orders, &events).await;
    let seqs: Vec<i64> = events.iter().map(|(_, s)| *s as i64).collect();
    let first_publishes = consumer.snapshot().len();
    let mut admin = admin_of(&relay).await;
    let request = |from_seq: i64, to_seq: i64, reason: &str| ReplayRequest {
        order_id: order,
        shard: 0,
        from_seq,
        to_seq,
        queue: consumer.queue.clone(),
        reason: reason.into(),
    };

    // The audit table refuses every row: the replay fails and sends nothing.
    sqlx::raw_sql(
        "create function refuse_audit() returns trigger language plpgsql as
           $$ begin raise exception 'admin_actions refuses rows'; end $$;
         create trigger refuse_audit before insert on admin_actions
           for each row execute function refuse_audit();",
    )
    .execute(&orders.pool)
    .await
    .expect("trigger");
    let e = admin
        .replay(with_token(
            request(0, 0, "INC-7102 not recorded"),
            Some(TOKEN),
        ))
        .await
        .expect_err("the audit row cannot be written");
    assert_ne!(e.code(), Code::Ok, "{e:?}");
    sqlx::raw_sql("drop trigger refuse_audit on admin_actions; drop function refuse_audit();")
        .execute(&orders.pool)
        .await
        .expect("drop trigger");
    // One replay let through: the first message after those before it is its own.
    let client = admin.clone();
    let next_is_only = |seq: i64, since: usize| {
        let mut admin = client.clone();
        let consumer = &consumer;
        let request = request(seq, seq, "INC-7102");
        async move {
            let sent = admin
                .replay(with_token(request, Some(TOKEN)))
                .await
                .expect("replayed")
                .into_inner();
            assert_eq!(sent.seqs, [seq]);
            outbox_testkit::wait_until("the replayed event", || async {
                consumer.snapshot().len() > since
            })
            .await;
            let replayed: Vec<i64> = consumer.snapshot()[since..]
                .iter()
                .map(|r| r.event.seq as i64)
                .collect();
            assert_eq!(replayed, [seq], "only the recorded replay was sent");
        }
    };
    next_is_only(seqs[1], first_publishes).await;

    // A NUL byte (and any control character) in the reason: refused, naming the field.
    for hostile in ["lost\0in INC-7102", "INC-7102\u{1b}[2K", "two\nlines"] {
        let e = admin
            .replay(with_token(request(0, 0, hostile), Some(TOKEN)))
            .await
            .expect_err(hostile);
        assert_eq!(e.code(), Code::InvalidArgument, "{hostile:?}: {e:?}");
        assert!(
            e.message().starts_with("reason: control character"),
            "{hostile:?}: {}",
            e.message()
        );
    }
    next_is_only(seqs[2], first_publishes + 1).await;

    // Recorded: the two that were sent, each with what it was about to send and how it ended.
    let rows = audit(&orders).await;
    assert_eq!(rows.len(), 2, "{rows:?}");
    for ((action, ids, reason, _, detail), seq) in rows.iter().zip([seqs[1], seqs[2]]) {
        assert_eq!((action.as_str(), reason.as_str()), ("Replay", "INC-7102"));
        assert_eq!(ids, &[seq]);
        assert_eq!(detail["planned"], serde_json::json!([seq]));
        assert_eq!(detail["error"], Value::Null);
    }

    relay.stop().await.expect("stops");
    consumer.cleanup().await;
}
