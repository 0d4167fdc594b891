//! The whole path with the three real binaries: Upsert over gRPC -> outbox -> relay-svc ->
//! RabbitMQ -> mail-svc, asserting the mails mail-svc reports. Also bad input at every edge while
//! good traffic flows.

use std::time::{Duration, Instant};

use e2e::stack::{Stack, StackConfig};
use futures::StreamExt;
use lapin::{
    BasicProperties, Connection, ConnectionProperties,
    options::{BasicConsumeOptions, BasicPublishOptions, QueueDeclareOptions},
    types::{AMQPValue, FieldTable},
};
use outbox_proto::{
    mail::v1::Mail,
    orders::v1::{OrderStatus, UpsertOrderRequest},
};

async fn upsert(stack: &Stack, id: i64, status: OrderStatus) -> u64 {
    stack.upsert(id, status).await.expect("upsert")
}

/// Polls ListMails until the order has `n` mails (or gives up after a minute).
async fn mails_for(stack: &Stack, order_id: i64, n: usize) -> Vec<Mail> {
    stack.mails_for(order_id, n).await.expect("list mails")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upserts_become_one_mail_per_event_in_order_with_the_right_text() {
    let mut stack = Stack::start(StackConfig::new("e2e"))
        .await
        .expect("stack starts");
    let mut expected_43 = Vec::new();
    for status in [
        OrderStatus::Pending,
        OrderStatus::Paid,
        OrderStatus::Shipped,
        OrderStatus::Delivered,
    ] {
        expected_43.push(upsert(&stack, 43, status).await);
    }
    let expected_44 = vec![
        upsert(&stack, 44, OrderStatus::Pending).await,
        upsert(&stack, 44, OrderStatus::Cancelled).await,
    ];
    // A retried call changes nothing and mails nothing.
    let retry = stack
        .orders_client()
        .await
        .expect("client")
        .upsert(UpsertOrderRequest {
            id: 44,
            status: OrderStatus::Cancelled as i32,
            customer_email: String::new(),
        })
        .await
        .expect("retry")
        .into_inner();
    assert_eq!(retry.event_seq, None);

    let mails_43 = mails_for(&stack, 43, 4).await;
    let seqs: Vec<u64> = mails_43.iter().map(|m| m.seq).collect();
    assert_eq!(
        seqs, expected_43,
        "one mail per event, in the order's chain order"
    );
    let texts = [
        "ご注文を受け付けました",
        "お支払いを確認しました",
        "商品を発送しました",
        "商品をお届けしました",
    ];
    for (mail, text) in mails_43.iter().zip(texts) {
        assert!(mail.subject.contains(text), "{} names {text}", mail.subject);
        assert!(
            mail.subject.contains("43"),
            "the subject names the order: {}",
            mail.subject
        );
        assert_eq!(mail.recipient, "customer43@example.com");
    }
    let types: Vec<&str> = mails_43.iter().map(|m| m.r#type.as_str()).collect();
    assert_eq!(
        types,
        [
            "OrderCreated",
            "OrderStatusChanged",
            "OrderStatusChanged",
            "OrderStatusChanged"
        ]
    );

    let mails_44 = mails_for(&stack, 44, 2).await;
    assert_eq!(
        mails_44.iter().map(|m| m.seq).collect::<Vec<_>>(),
        expected_44
    );
    assert!(mails_44[1].subject.contains("ご注文をキャンセルしました"));

    // Nothing more arrives later (no duplicates after the fact).
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(mails_for(&stack, 43, 0).await.len(), 4);
    stack.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trace_id_of_an_upsert_appears_in_relay_and_mail_logs() {
    let mut stack = Stack::start(StackConfig::new("e2e"))
        .await
        .expect("stack starts");
    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let request = outbox_testkit::orders::traced_upsert_request(
        7,
        OrderStatus::Pending,
        &format!("00-{trace_id}-00f067aa0ba902b7-01"),
    );
    let seq = stack
        .orders_client()
        .await
        .expect("client")
        .upsert(request)
        .await
        .expect("upsert")
        .into_inner()
        .event_seq
        .expect("seq");
    assert_eq!(mails_for(&stack, 7, 1).await.len(), 1);
    tokio::time::sleep(Duration::from_millis(500)).await;
    for procs in [&stack.relays, &stack.mails] {
        let log = std::fs::read_to_string(&procs[0].log_path).expect("log");
        assert!(
            log.lines().any(|l| l.contains(trace_id)),
            "{} logs trace id {trace_id} for seq {seq}",
            procs[0].name
        );
    }
    let orders_log = std::fs::read_to_string(&stack.orders.log_path).expect("log");
    assert!(
        orders_log.contains(trace_id),
        "orders-svc logs the trace id"
    );
    stack.stop().await;
}

/// Garbage published straight to the exchange, and malformed gRPC calls, while good orders flow:
/// every good event is mailed, the garbage waits in the dead-letter queue with a reason, and no
/// service restarts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_at_every_edge_is_rejected_and_good_traffic_still_flows() {
    let mut stack = Stack::start(StackConfig::new("e2e"))
        .await
        .expect("stack starts");
    let conn = Connection::connect(&outbox_testkit::amqp_url(), ConnectionProperties::default())
        .await
        .expect("amqp");
    // mail-svc reports SERVING before its consumer has declared the queue; garbage published
    // (without `mandatory`) before the queue exists would be dropped by the broker, not
    // dead-lettered. Wait for the queue (a passive declare fails, and closes its channel, until
    // it exists).
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let probe = conn.create_channel().await.expect("channel");
        let passive = QueueDeclareOptions {
            passive: true,
            ..QueueDeclareOptions::default()
        };
        if probe
            .queue_declare(stack.queue.as_str().into(), passive, FieldTable::default())
            .await
            .is_ok()
        {
            let _ = probe.close(200, "bye".into()).await;
            break;
        }
        assert!(Instant::now() < deadline, "mail-svc declared its queue");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let ch = conn.create_channel().await.expect("channel");
    let garbage: Vec<(&str, &str, Vec<u8>)> = vec![
        ("wrong content type", "text/plain", b"hello".to_vec()),
        (
            "truncated protobuf",
            "application/x-protobuf",
            vec![0x08, 0x96],
        ),
        (
            "JSON missing fields",
            "application/json",
            br#"{"seq": 900000, "type": "OrderCreated"}"#.to_vec(),
        ),
        (
            "huge body",
            "application/x-protobuf",
            vec![0u8; 5 * 1024 * 1024],
        ),
    ];
    let client = stack.orders_client().await.expect("client");
    for (i, (what, content_type, body)) in garbage.iter().enumerate() {
        // Good traffic in between.
        upsert(&stack, 100 + i as i64, OrderStatus::Pending).await;
        let mut headers = FieldTable::default();
        headers.insert(
            "aggregate_id".into(),
            AMQPValue::LongLongInt(100 + i as i64),
        );
        ch.basic_publish(
            stack.exchange.as_str().into(),
            "order.created".into(),
            BasicPublishOptions::default(),
            body,
            BasicProperties::default()
                .with_content_type((*content_type).into())
                .with_headers(headers),
        )
        .await
        .expect("publish")
        .await
        .expect("confirm");
        upsert(&stack, 100 + i as i64, OrderStatus::Paid).await;
        // Malformed gRPC calls are refused with INVALID_ARGUMENT and never reach the outbox.
        let bad = client
            .clone()
            .upsert(UpsertOrderRequest {
                id: -(i as i64),
                status: 77,
                customer_email: what.to_string(),
            })
            .await
            .expect_err("rejected");
        assert_eq!(bad.code(), tonic::Code::InvalidArgument, "{what}");
    }
    for i in 0..garbage.len() as i64 {
        let mails = mails_for(&stack, 100 + i, 2).await;
        assert_eq!(mails.len(), 2, "order {} got both its mails", 100 + i);
    }

    let dead_letter_queue = format!("{}.dead-letter", stack.queue);
    let mut consumer = ch
        .basic_consume(
            dead_letter_queue.as_str().into(),
            "e2e-dlq".into(),
            BasicConsumeOptions::default(),
            FieldTable::default(),
        )
        .await
        .expect("dead-letter queue exists");
    let mut reasons = Vec::new();
    while reasons.len() < garbage.len() {
        let delivery = tokio::time::timeout(Duration::from_secs(30), consumer.next())
            .await
            .expect("dead-lettered in time")
            .expect("stream")
            .expect("delivery");
        let reason = delivery
            .properties
            .headers()
            .as_ref()
            .and_then(|h| h.inner().get("x-death-reason").cloned());
        match reason {
            Some(AMQPValue::LongString(s)) => reasons.push(s.to_string()),
            other => panic!("dead-lettered message carries a reason, got {other:?}"),
        }
        delivery
            .ack(lapin::options::BasicAckOptions::default())
            .await
            .expect("ack");
    }
    assert_eq!(reasons.len(), garbage.len(), "{reasons:?}");
    for p in std::iter::once(&mut stack.orders)
        .chain(stack.relays.iter_mut())
        .chain(stack.mails.iter_mut())
    {
        assert!(p.is_running(), "{} still runs", p.name);
        assert_eq!(p.starts, 1, "{} never restarted", p.name);
    }
    stack.stop().await;
}
