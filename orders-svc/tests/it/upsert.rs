//! Upsert and GetOrder against a real PostgreSQL: each change appends exactly one outbox event in
//! the same transaction; no-ops, bad input and forbidden changes write nothing.

use outbox::trace::TraceHeaders;
use outbox_proto::orders::{events::v1::OrderPayload, v1::OrderStatus};
use prost::Message;
use tonic::Code;

use crate::common::{count, get, outbox, req, start, upsert};

const EMAIL: &str = "taro@example.com";

#[tokio::test]
async fn create_appends_order_created_with_no_prev_seq() {
    let t = start().await;
    let resp = upsert(&t, 43, OrderStatus::Pending, EMAIL)
        .await
        .expect("create");
    assert!(resp.created);
    let order = resp.order.expect("order");
    assert_eq!(
        (order.id, order.status, order.version),
        (43, OrderStatus::Pending as i32, 1)
    );
    assert_eq!(order.customer_email, EMAIL);
    let seq = resp.event_seq.expect("event_seq");
    assert_eq!(order.last_event_seq, seq);

    let rows = outbox(&t.pool).await;
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!((row.seq as u64, row.aggregate_id), (seq, 43));
    assert_eq!(row.event_type, "OrderCreated");
    assert_eq!(row.prev_seq, None);
    let payload = OrderPayload::decode(row.payload.as_slice()).expect("payload decodes");
    assert_eq!(
        payload,
        OrderPayload {
            id: 43,
            status: OrderStatus::Pending as i32,
            customer_email: EMAIL.into(),
            previous_status: OrderStatus::Unspecified as i32,
        }
    );
    let trace = row.traceparent.as_deref().expect("traceparent stored");
    assert!(TraceHeaders::parse(trace, None).is_some(), "{trace}");
}

/// The stored context is the Upsert span's own, a child in the caller's trace, with the
/// caller's trace state.
#[tokio::test]
async fn the_event_continues_the_callers_trace() {
    let t = start().await;
    let caller = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let mut request = tonic::Request::new(req(8, OrderStatus::Pending, EMAIL));
    request
        .metadata_mut()
        .insert("traceparent", caller.parse().expect("header"));
    request
        .metadata_mut()
        .insert("tracestate", "congo=t61rcWkgMzE".parse().expect("header"));
    t.client.clone().upsert(request).await.expect("upsert");
    let (traceparent, headers): (String, String) =
        sqlx::query_as("select traceparent, headers::text from outbox")
            .fetch_one(&t.pool)
            .await
            .expect("row");
    let stored = TraceHeaders::parse(&traceparent, None).expect("valid");
    assert_eq!(stored.trace_id(), "4bf92f3577b34da6a3ce929d0e0e4736");
    assert_ne!(
        traceparent, caller,
        "the Upsert span's id, not the caller's"
    );
    assert_eq!(headers, r#"{"tracestate": "congo=t61rcWkgMzE"}"#);
}

#[tokio::test]
async fn creation_takes_any_defined_status() {
    let t = start().await;
    for (id, status) in [
        (1, OrderStatus::Paid),
        (2, OrderStatus::Delivered),
        (3, OrderStatus::Cancelled),
    ] {
        let resp = upsert(&t, id, status, EMAIL).await.expect("create");
        assert!(resp.created);
        assert_eq!(resp.order.expect("order").status, status as i32);
    }
    assert_eq!(count(&t.pool, "outbox").await, 3);
}

#[tokio::test]
async fn change_appends_status_changed_chained_to_the_previous_event() {
    let t = start().await;
    let first = upsert(&t, 44, OrderStatus::Pending, EMAIL)
        .await
        .expect("create");
    // The email is only taken on creation; later calls may omit it.
    let second = upsert(&t, 44, OrderStatus::Paid, "").await.expect("pay");
    let third = upsert(&t, 44, OrderStatus::Shipped, "")
        .await
        .expect("ship");
    assert!(!second.created && !third.created);
    let order = third.order.expect("order");
    assert_eq!(
        (order.version, order.status),
        (3, OrderStatus::Shipped as i32)
    );
    assert_eq!(order.customer_email, EMAIL);

    let rows = outbox(&t.pool).await;
    let seqs: Vec<u64> = rows.iter().map(|r| r.seq as u64).collect();
    assert_eq!(
        seqs,
        vec![
            first.event_seq.unwrap(),
            second.event_seq.unwrap(),
            third.event_seq.unwrap()
        ]
    );
    assert_eq!(rows[1].event_type, "OrderStatusChanged");
    assert_eq!(rows[1].prev_seq, Some(rows[0].seq));
    assert_eq!(rows[2].prev_seq, Some(rows[1].seq));
    let payload = OrderPayload::decode(rows[2].payload.as_slice()).expect("payload");
    assert_eq!(payload.status, OrderStatus::Shipped as i32);
    assert_eq!(payload.previous_status, OrderStatus::Paid as i32);
    assert_eq!(payload.customer_email, EMAIL);
}

#[tokio::test]
async fn same_status_is_a_no_op_without_event() {
    let t = start().await;
    upsert(&t, 7, OrderStatus::Paid, EMAIL)
        .await
        .expect("create");
    let before = get(&t, 7).await.expect("get");
    let again = upsert(&t, 7, OrderStatus::Paid, EMAIL)
        .await
        .expect("retry");
    assert!(!again.created);
    assert_eq!(again.event_seq, None);
    assert_eq!(again.order.expect("order"), before);
    assert_eq!(count(&t.pool, "outbox").await, 1);
}

#[tokio::test]
async fn invalid_input_names_the_field_and_writes_nothing() {
    let t = start().await;
    let overlong = format!("{}@example.com", "a".repeat(250));
    let cases = [
        (req(0, OrderStatus::Pending, EMAIL), "id"),
        (req(-5, OrderStatus::Pending, EMAIL), "id"),
        (req(1, OrderStatus::Unspecified, EMAIL), "status"),
        (
            outbox_proto::orders::v1::UpsertOrderRequest {
                id: 1,
                status: 99,
                customer_email: EMAIL.into(),
            },
            "status",
        ),
        (req(1, OrderStatus::Pending, ""), "customer_email"),
        (
            req(1, OrderStatus::Pending, "not-an-email"),
            "customer_email",
        ),
        (
            req(1, OrderStatus::Pending, "a b@example.com"),
            "customer_email",
        ),
        (req(1, OrderStatus::Pending, &overlong), "customer_email"),
    ];
    for (request, field) in cases {
        let err = t
            .client
            .clone()
            .upsert(request.clone())
            .await
            .expect_err("rejected");
        assert_eq!(err.code(), Code::InvalidArgument, "{request:?}: {err:?}");
        assert!(
            err.message().contains(field),
            "{request:?}: message {:?} names {field}",
            err.message()
        );
    }
    assert_eq!(count(&t.pool, "orders").await, 0);
    assert_eq!(count(&t.pool, "outbox").await, 0);
}

#[tokio::test]
async fn forbidden_transitions_fail_precondition_and_write_nothing() {
    use OrderStatus::*;
    let t = start().await;
    // (created as, path to walk, forbidden target)
    let cases = [
        (Paid, vec![], Pending),
        (Shipped, vec![], Cancelled),
        (Shipped, vec![], Paid),
        (Delivered, vec![], Shipped),
        (Delivered, vec![], Cancelled),
        (Cancelled, vec![], Paid),
        (Cancelled, vec![], Pending),
        (Pending, vec![Paid, Shipped], Pending),
    ];
    for (i, (initial, path, target)) in cases.into_iter().enumerate() {
        let id = 100 + i as i64;
        upsert(&t, id, initial, EMAIL).await.expect("create");
        for step in path {
            upsert(&t, id, step, "").await.expect("allowed step");
        }
        let events_before = count(&t.pool, "outbox").await;
        let before = get(&t, id).await.expect("get");
        let err = upsert(&t, id, target, "").await.expect_err("forbidden");
        assert_eq!(
            err.code(),
            Code::FailedPrecondition,
            "{initial:?} -> {target:?}"
        );
        let after = get(&t, id).await.expect("get");
        assert_eq!(before, after);
        assert_eq!(count(&t.pool, "outbox").await, events_before);
    }
}

#[tokio::test]
async fn get_order_unknown_is_not_found_and_bad_id_is_invalid() {
    let t = start().await;
    let err = get(&t, 404).await.expect_err("missing");
    assert_eq!(err.code(), Code::NotFound);
    let err = get(&t, 0).await.expect_err("bad id");
    assert_eq!(err.code(), Code::InvalidArgument);
    assert!(err.message().contains("id"));

    upsert(&t, 404, OrderStatus::Pending, EMAIL)
        .await
        .expect("create");
    let order = get(&t, 404).await.expect("found");
    assert_eq!((order.id, order.status), (404, OrderStatus::Pending as i32));
    assert!(order.created_at.is_some() && order.updated_at.is_some());
}

/// The shared address rule (`outbox_kit::email`, which mail-svc applies to every event): an
/// address mail-svc would dead-letter is refused here, before an order (and an event) exists.
#[tokio::test]
async fn addresses_mail_svc_would_refuse_are_refused_at_upsert() {
    let t = start().await;
    let long_local = format!("{}@example.com", "a".repeat(65));
    for (i, bad) in [
        "john..doe@example.com",
        ".a@x.com",
        "a.@x.com",
        "a@-x.com",
        "a@x..com",
        "a@x_y.com",
        "\"quoted\"@example.com",
        "tarō@example.jp",
        long_local.as_str(),
    ]
    .into_iter()
    .enumerate()
    {
        let err = upsert(&t, 500 + i as i64, OrderStatus::Pending, bad)
            .await
            .expect_err("refused");
        assert_eq!(err.code(), Code::InvalidArgument, "{bad}: {err:?}");
        assert!(
            err.message().starts_with("customer_email: "),
            "{bad}: message {:?} names customer_email",
            err.message()
        );
    }
    assert_eq!(count(&t.pool, "orders").await, 0);
    assert_eq!(count(&t.pool, "outbox").await, 0);

    // The edges of what is accepted: 64-byte local part, the full atext alphabet, hyphens inside
    // labels.
    let local64 = format!("{}@example.com", "a".repeat(64));
    for (i, ok) in [
        local64.as_str(),
        "o'brien+orders@mail.example-shop.co.jp",
        "!#$%&'*+-/=?^_`{|}~@example.com",
    ]
    .into_iter()
    .enumerate()
    {
        upsert(&t, 600 + i as i64, OrderStatus::Pending, ok)
            .await
            .unwrap_or_else(|e| panic!("{ok} accepted: {e:?}"));
    }
    assert_eq!(count(&t.pool, "outbox").await, 3);
}
