//! The group commit's failure paths, against the real PostgreSQL through the real gRPC service:
//! calls queued behind busy writers are applied in ONE transaction (their outbox rows share one
//! `xmin`), and still each call keeps its own outcome — a forbidden transition or bad input fails
//! only that call, several calls on one order chain their events, and a database outage fails
//! exactly the calls whose changes did not commit.
//!
//! To make a batch deterministic, the tests park every writer first: a direct transaction holds
//! order rows the writers' current transactions wait for, the calls under test queue up
//! meanwhile, and releasing the rows lets one writer take them all.

use std::time::Duration;

use orders_svc::batch::WRITERS;
use outbox_proto::orders::{
    events::v1::OrderPayload,
    v1::{OrderStatus, UpsertOrderRequest, UpsertOrderResponse},
};
use outbox_testkit::{Proxy, pg_server_url, unique};
use prost::Message;
use sqlx::{PgPool, Postgres, Transaction};
use tokio::task::JoinHandle;
use tonic::Code;

use crate::common::{self, TestOrders, config, req, start, start_with, upsert};

const EMAIL: &str = "batch@example.com";

type Call = JoinHandle<Result<UpsertOrderResponse, tonic::Status>>;

fn call(t: &TestOrders, request: UpsertOrderRequest) -> Call {
    let mut client = t.client.clone();
    tokio::spawn(async move { client.upsert(request).await.map(|r| r.into_inner()) })
}

/// Sends the calls one after the other: a batch applies its calls in arrival order, and the
/// gaps make the arrival order the order they are sent in.
async fn send_in_order(t: &TestOrders, requests: Vec<UpsertOrderRequest>) -> Vec<Call> {
    let mut calls = Vec::new();
    for request in requests {
        calls.push(call(t, request));
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    calls
}

/// Waits until `n` sessions of this database wait for a lock (the parked writers).
pub(crate) async fn wait_blocked(direct: &PgPool, n: i64) {
    for _ in 0..200 {
        let blocked: i64 = sqlx::query_scalar(
            "select count(*) from pg_stat_activity
              where datname = current_database() and wait_event_type = 'Lock'",
        )
        .fetch_one(direct)
        .await
        .expect("pg_stat_activity");
        if blocked >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{n} writers never blocked");
}

/// Holds one order's row, as a concurrent writer would.
async fn plug_order(direct: &PgPool, id: i64) -> Transaction<'static, Postgres> {
    let mut tx = direct.begin().await.expect("begin");
    sqlx::query("select 1 from orders where id = $1 for update")
        .bind(id)
        .execute(&mut *tx)
        .await
        .expect("lock order");
    tx
}

/// Parks every writer: each takes a change of an order of its own (1001, 1002, …) whose row a
/// direct transaction holds. Committing the returned transaction lets them go.
async fn park_writers(
    t: &TestOrders,
    direct: &PgPool,
) -> (Transaction<'static, Postgres>, Vec<Call>) {
    let ids: Vec<i64> = (1001..).take(WRITERS).collect();
    for &id in &ids {
        upsert(t, id, OrderStatus::Pending, EMAIL)
            .await
            .expect("parking order");
    }
    let mut plug = direct.begin().await.expect("begin");
    sqlx::query("select 1 from orders where id = any($1) for update")
        .bind(&ids)
        .execute(&mut *plug)
        .await
        .expect("lock the parking orders");
    let mut parked = Vec::new();
    for (n, &id) in ids.iter().enumerate() {
        parked.push(call(t, req(id, OrderStatus::Paid, "")));
        wait_blocked(direct, n as i64 + 1).await;
    }
    (plug, parked)
}

/// The calls under test need a moment to reach the queue; none can finish while the writers are
/// parked.
async fn let_them_queue(calls: &[Call]) {
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        calls.iter().all(|c| !c.is_finished()),
        "a call bypassed the parked writers"
    );
}

/// Lets the parked writers go and waits until each of them succeeded.
async fn unpark(plug: Transaction<'static, Postgres>, parked: Vec<Call>) {
    plug.commit().await.expect("release the writers");
    for p in parked {
        p.await.expect("task").expect("parked call");
    }
}

/// What each of `calls` answered, in call order.
async fn answers(calls: Vec<Call>) -> Vec<Result<UpsertOrderResponse, tonic::Status>> {
    let mut answers = Vec::new();
    for c in calls {
        answers.push(c.await.expect("task"));
    }
    answers
}

/// How many transactions wrote these orders' events.
async fn transactions_of(direct: &PgPool, ids: &[i64]) -> i64 {
    sqlx::query_scalar("select count(distinct xmin::text) from outbox where aggregate_id = any($1)")
        .bind(ids)
        .fetch_one(direct)
        .await
        .expect("xmin")
}

async fn order_state(direct: &PgPool, id: i64) -> Option<(String, i64, i64)> {
    sqlx::query_as("select status, version, last_event_seq from orders where id = $1")
        .bind(id)
        .fetch_optional(direct)
        .await
        .expect("order")
}

/// The order's events: (seq, prev_seq, status, previous_status), in seq order.
async fn chain(direct: &PgPool, id: i64) -> Vec<(i64, Option<i64>, i32, i32)> {
    let rows: Vec<(i64, Option<i64>, Vec<u8>)> = sqlx::query_as(
        "select seq, prev_seq, payload from outbox where aggregate_id = $1 order by seq",
    )
    .bind(id)
    .fetch_all(direct)
    .await
    .expect("outbox");
    rows.into_iter()
        .map(|(seq, prev, payload)| {
            let p = OrderPayload::decode(payload.as_slice()).expect("payload");
            (seq, prev, p.status, p.previous_status)
        })
        .collect()
}

/// Each event chains to the one before it (gap-free), and the order row points at the last.
pub(crate) async fn assert_chain(direct: &PgPool, id: i64) -> Vec<(i64, Option<i64>, i32, i32)> {
    let events = chain(direct, id).await;
    let mut previous: Option<(i64, i32)> = None;
    for &(seq, prev, status, previous_status) in &events {
        assert_eq!(
            prev,
            previous.map(|p| p.0),
            "order {id}: chain broken at seq {seq}"
        );
        assert_eq!(
            previous_status,
            previous.map_or(0, |p| p.1),
            "order {id} seq {seq}"
        );
        previous = Some((seq, status));
    }
    let (_, version, last) = order_state(direct, id).await.expect("order exists");
    assert_eq!(
        version as usize,
        events.len(),
        "order {id}: one event per version"
    );
    assert_eq!(Some(last), events.last().map(|e| e.0), "order {id}");
    events
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_forbidden_transition_or_bad_input_fails_only_its_own_call_in_a_group_commit() {
    let t = start().await;
    let direct = t.pool.clone();
    for (id, status) in [
        (1, OrderStatus::Pending),
        (2, OrderStatus::Pending),
        (3, OrderStatus::Cancelled),
    ] {
        upsert(&t, id, status, EMAIL).await.expect("setup");
    }

    let (plug, parked) = park_writers(&t, &direct).await;
    let calls = send_in_order(
        &t,
        vec![
            req(1, OrderStatus::Paid, ""),
            req(3, OrderStatus::Paid, ""), // forbidden: CANCELLED is final
            req(2, OrderStatus::Shipped, ""),
            req(6, OrderStatus::Pending, ""), // creation without email
            req(5, OrderStatus::Pending, EMAIL),
            req(2, OrderStatus::Shipped, ""), // same status again: no event
        ],
    )
    .await;
    // Invalid input never reaches a batch: it fails at once, while the writers are parked.
    let err = t
        .client
        .clone()
        .upsert(UpsertOrderRequest {
            id: 7,
            status: 99,
            customer_email: EMAIL.into(),
        })
        .await
        .expect_err("invalid status");
    assert_eq!(err.code(), Code::InvalidArgument);
    let_them_queue(&calls).await;
    unpark(plug, parked).await;
    let results = answers(calls).await;

    let ok = |i: usize| results[i].as_ref().expect("call succeeds").clone();
    let code = |i: usize| results[i].as_ref().expect_err("call fails").code();
    assert_eq!(ok(0).order.expect("order").status, OrderStatus::Paid as i32);
    assert_eq!(code(1), Code::FailedPrecondition);
    assert_eq!(ok(2).order.expect("order").version, 2);
    assert_eq!(code(3), Code::InvalidArgument);
    assert!(ok(4).created);
    assert_eq!(ok(5).event_seq, None, "the second SHIPPED is a no-op");
    assert_eq!(ok(5).order.expect("order").version, 2);

    // The successful calls committed together: one transaction wrote all their events.
    assert_eq!(
        transactions_of(&direct, &[1, 2, 5]).await,
        3,
        "two setup creations + one batch"
    );
    let setup_and_batch: i64 = sqlx::query_scalar(
        "select count(*) from outbox where aggregate_id = any($1) and xmin = (
             select xmin from outbox where aggregate_id = 5)",
    )
    .bind([1i64, 2, 5].as_slice())
    .fetch_one(&direct)
    .await
    .expect("xmin");
    assert_eq!(
        setup_and_batch, 3,
        "orders 1, 2 and 5 changed in ONE transaction"
    );
    // The failed calls wrote nothing.
    assert_eq!(
        order_state(&direct, 3).await.map(|s| (s.0, s.1)),
        Some(("cancelled".into(), 1))
    );
    assert_eq!(order_state(&direct, 6).await, None);
    for id in [1, 2, 3, 5] {
        assert_chain(&direct, id).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn several_calls_on_one_order_in_one_batch_keep_a_gap_free_chain() {
    let t = start().await;
    let direct = t.pool.clone();
    upsert(&t, 1, OrderStatus::Pending, EMAIL)
        .await
        .expect("setup");

    let (plug, parked) = park_writers(&t, &direct).await;
    let calls = send_in_order(
        &t,
        vec![
            req(1, OrderStatus::Paid, ""),
            req(2, OrderStatus::Pending, EMAIL), // created and changed in the same batch
            req(1, OrderStatus::Shipped, ""),
            req(2, OrderStatus::Paid, ""),
            req(1, OrderStatus::Paid, ""), // forbidden after the batch's own SHIPPED
            req(1, OrderStatus::Delivered, ""),
            req(2, OrderStatus::Cancelled, ""),
        ],
    )
    .await;
    let_them_queue(&calls).await;
    unpark(plug, parked).await;
    let results = answers(calls).await;
    assert_eq!(
        results[4].as_ref().expect_err("forbidden").code(),
        Code::FailedPrecondition
    );

    // Each successful call got its own event, chained in arrival order, and its own view of
    // the order right after its change.
    let one = assert_chain(&direct, 1).await;
    let two = assert_chain(&direct, 2).await;
    let statuses = |c: &[(i64, Option<i64>, i32, i32)]| c.iter().map(|e| e.2).collect::<Vec<_>>();
    use OrderStatus::*;
    assert_eq!(
        statuses(&one),
        [Pending, Paid, Shipped, Delivered].map(|s| s as i32)
    );
    assert_eq!(statuses(&two), [Pending, Paid, Cancelled].map(|s| s as i32));
    for (i, event) in [
        (0, one[1]),
        (2, one[2]),
        (5, one[3]),
        (1, two[0]),
        (3, two[1]),
        (6, two[2]),
    ] {
        let resp = results[i].as_ref().expect("call succeeds");
        let order = resp.order.as_ref().expect("order");
        assert_eq!(resp.event_seq, Some(event.0 as u64), "call {i}");
        assert_eq!(order.last_event_seq, event.0 as u64, "call {i}");
        assert_eq!(order.status, event.2, "call {i}");
    }
    assert_eq!(
        results[3]
            .as_ref()
            .expect("ok")
            .order
            .as_ref()
            .expect("order")
            .version,
        2
    );
    // All seven calls were one batch: one transaction for both orders' batch events.
    let batch: i64 = sqlx::query_scalar(
        "select count(distinct xmin::text) from outbox where aggregate_id = 2
            or (aggregate_id = 1 and prev_seq is not null)",
    )
    .fetch_one(&direct)
    .await
    .expect("xmin");
    assert_eq!(batch, 1, "one transaction");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_batch_that_loses_a_creation_race_goes_again_as_an_update() {
    let t = start().await;
    let direct = t.pool.clone();
    // Another writer (a second replica) is creating order 9, not committed yet.
    let rival = rival_creates_order_9(&direct).await;

    let (plug, parked) = park_writers(&t, &direct).await;
    // One batch creates 8, 9 and 10 (in id order, so it waits for the rival at 9).
    let calls = send_in_order(
        &t,
        vec![
            req(10, OrderStatus::Pending, EMAIL),
            req(9, OrderStatus::Paid, EMAIL),
            req(8, OrderStatus::Pending, EMAIL),
        ],
    )
    .await;
    let_them_queue(&calls).await;
    unpark(plug, parked).await;
    wait_blocked(&direct, 1).await;
    rival.commit().await.expect("the rival wins");

    let mut results = Vec::new();
    for c in calls {
        results.push(c.await.expect("task").expect("every call succeeds"));
    }
    assert!(results[0].created && results[2].created);
    // Order 9 exists now: the call became a change chained to the rival's creation.
    assert!(!results[1].created);
    assert_eq!(results[1].order.as_ref().expect("order").version, 2);
    for id in [8, 9, 10] {
        assert_chain(&direct, id).await;
    }
    assert_eq!(
        transactions_of(&direct, &[8, 10]).await,
        1,
        "the retried batch committed once"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_database_outage_mid_batch_fails_exactly_the_uncommitted_calls_and_recovers() {
    let proxy = Proxy::start("127.0.0.1:5432").await.expect("proxy");
    let name = unique("orders_group_outage_test");
    let t = start_with(config(format!(
        "postgres://postgres@{}/{name}",
        proxy.addr()
    )))
    .await;
    let direct = PgPool::connect(&format!("{}/{name}", pg_server_url()))
        .await
        .expect("direct");
    for id in 1..=3 {
        upsert(&t, id, OrderStatus::Pending, EMAIL)
            .await
            .expect("setup");
    }

    // Park both writers on rows 1 and 2 (a single call each).
    assert_eq!(WRITERS, 2, "the test parks exactly two writers");
    let hold_1 = plug_order(&direct, 1).await;
    let hold_2 = plug_order(&direct, 2).await;
    let a = call(&t, req(1, OrderStatus::Paid, ""));
    wait_blocked(&direct, 1).await;
    let b = call(&t, req(2, OrderStatus::Paid, ""));
    wait_blocked(&direct, 2).await;
    // A batch queues behind them: it touches order 1 too.
    let batch = vec![
        call(&t, req(3, OrderStatus::Paid, "")),
        call(&t, req(4, OrderStatus::Pending, EMAIL)),
        call(&t, req(1, OrderStatus::Shipped, "")),
    ];
    let_them_queue(&batch).await;
    // B's writer finishes B (committed) and takes the whole batch, which then waits for row 1
    // in the middle of its transaction, next to A.
    hold_2.rollback().await.expect("release row 2");
    let b = b
        .await
        .expect("task")
        .expect("B committed before the outage");
    assert_eq!(b.order.expect("order").version, 2);
    wait_blocked(&direct, 2).await;

    proxy.cut();
    for c in std::iter::once(a).chain(batch) {
        let err = c
            .await
            .expect("task")
            .expect_err("in flight during the outage");
        assert_eq!(err.code(), Code::Unavailable, "{err:?}");
    }
    hold_1.rollback().await.expect("release row 1");
    // The cut sessions roll back once they notice their client is gone.
    for _ in 0..200 {
        let others: i64 = sqlx::query_scalar(
            "select count(*) from pg_stat_activity
              where datname = current_database() and pid <> pg_backend_pid()
                and backend_type = 'client backend' and state <> 'idle'",
        )
        .fetch_one(&direct)
        .await
        .expect("sessions");
        if others == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    // Exactly B committed; nothing of A or of the batch did.
    assert_eq!(order_state(&direct, 1).await.map(|s| s.1), Some(1));
    assert_eq!(order_state(&direct, 2).await.map(|s| s.1), Some(2));
    assert_eq!(order_state(&direct, 3).await.map(|s| s.1), Some(1));
    assert_eq!(order_state(&direct, 4).await, None);
    assert_eq!(common::count(&direct, "outbox").await, 4);

    // The service recovers by itself; the same calls go through.
    proxy.restore();
    for (id, status, email) in [
        (1, OrderStatus::Paid, ""),
        (3, OrderStatus::Paid, ""),
        (4, OrderStatus::Pending, EMAIL),
        (1, OrderStatus::Shipped, ""),
    ] {
        let mut done = false;
        for _ in 0..40 {
            match upsert(&t, id, status, email).await {
                Ok(_) => {
                    done = true;
                    break;
                }
                Err(e) => {
                    assert_eq!(e.code(), Code::Unavailable, "{e:?}");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
            }
        }
        assert!(done, "order {id}: recovered after the outage");
    }
    for id in 1..=4 {
        assert_chain(&direct, id).await;
    }
    assert_eq!(order_state(&direct, 1).await.map(|s| s.1), Some(3));
    t.shutdown.cancel();
    let _ = t.app.await;
    direct.close().await;
    outbox_testkit::drop_database(&name).await.expect("drop");
}

/// Another writer (a second replica) creating order 9 in a transaction left open: the same two
/// statements the service runs. Commit it to make the order exist, roll it back to let a
/// waiting creation through.
pub(crate) async fn rival_creates_order_9(pool: &PgPool) -> Transaction<'static, Postgres> {
    let mut rival = pool.begin().await.expect("begin");
    sqlx::query(
        "with ev as (
             insert into outbox (aggregate_id, event_type, routing_key, content_type, prev_seq,
                                 payload, traceparent)
             values (9, 'OrderCreated', 'order.created', 'application/x-protobuf', null, $1,
                     null)
             returning seq, created_at
         )
         insert into orders (id, status, customer_email, version, last_event_seq, created_at,
                             updated_at)
         select 9, 'pending', $2, 1, ev.seq, ev.created_at, ev.created_at from ev",
    )
    .bind(
        OrderPayload {
            id: 9,
            status: OrderStatus::Pending as i32,
            customer_email: EMAIL.into(),
            previous_status: 0,
        }
        .encode_to_vec(),
    )
    .bind(EMAIL)
    .execute(&mut *rival)
    .await
    .expect("rival creation");
    rival
}
