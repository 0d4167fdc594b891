//! The invoices example end to end, against the real PostgreSQL and RabbitMQ: changes append
//! their events in the service's transactions (a rolled-back or refused change leaves none), the
//! relay publishes them, and the consumer applies each exactly once, in each invoice's chain
//! order, to the ledger although the test delivers every chain reversed, with duplicates, beside
//! poison that goes to the dead-letter queue with its reason while the rest flows.

use std::{collections::BTreeMap, time::Duration};

use invoices::{Billing, Error, InvoiceEvent, OUTBOX_TABLE};
use lapin::{
    BasicProperties, Channel, Connection, ConnectionProperties,
    message::Delivery,
    options::{
        BasicGetOptions, BasicPublishOptions, ConfirmSelectOptions, ExchangeDeleteOptions,
        QueueDeclareOptions, QueueDeleteOptions,
    },
    types::{AMQPValue, FieldTable},
};
use outbox::wire;
use outbox_inbox::amqp::{DEATH_REASON_HEADER, Topology};
use prost::Message;
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;

async fn billing() -> (PgPool, Billing) {
    let database_url = outbox_testkit::fresh_database_url("outbox_invoices");
    let pool = outbox_kit::db::connect(&database_url, 8)
        .await
        .expect("a fresh database");
    let billing = Billing::new(pool.clone()).await.expect("migrated");
    (pool, billing)
}

async fn count(pool: &PgPool, table: &str) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!("select count(*) from {table}")))
        .fetch_one(pool)
        .await
        .expect("count")
}

/// Waits (at most 30 s) until `done` says so.
async fn eventually<F: AsyncFnMut() -> bool>(what: &str, mut done: F) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !done().await {
        assert!(tokio::time::Instant::now() < deadline, "timed out: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A message as the relay published it (or as the test forges it).
#[derive(Clone)]
struct Msg {
    routing_key: String,
    properties: BasicProperties,
    body: Vec<u8>,
}

impl Msg {
    fn of(d: &Delivery) -> Self {
        Self {
            routing_key: d.routing_key.to_string(),
            properties: d.properties.clone(),
            body: d.data.clone(),
        }
    }

    fn envelope(&self) -> wire::Envelope {
        wire::Envelope::decode(self.body.as_slice()).expect("a relayed envelope")
    }

    /// A message the relay could have sent, around `payload`.
    fn forged(aggregate_id: i64, seq: u64, payload: &[u8]) -> Self {
        let envelope = wire::Envelope {
            seq,
            r#type: "InvoiceIssued".into(),
            aggregate_id,
            prev_seq: None,
            payload: payload.to_vec(),
            ts_ms: 0,
        };
        Self {
            routing_key: "invoice.issued".into(),
            // An invoice's, as the relay marks every event (the inbox chains by type and id).
            properties: BasicProperties::default()
                .with_content_type(wire::CONTENT_TYPE_PROTOBUF.into())
                .with_headers({
                    let mut h = lapin::types::FieldTable::default();
                    h.insert(
                        wire::HEADER_AGGREGATE_TYPE.into(),
                        lapin::types::AMQPValue::LongString("invoice".into()),
                    );
                    h
                }),
            body: envelope.encode_to_vec(),
        }
    }
}

/// Publishes `msg` to `exchange` under its own routing key and waits for the broker's confirm
/// (so that it is queued before anything published afterwards, by anyone).
async fn publish(ch: &Channel, exchange: &str, msg: &Msg) {
    let confirm = ch
        .basic_publish(
            exchange.into(),
            msg.routing_key.as_str().into(),
            BasicPublishOptions::default(),
            &msg.body,
            msg.properties.clone(),
        )
        .await
        .expect("publish")
        .await
        .expect("confirm");
    assert!(confirm.is_ack(), "the broker took it");
}

/// Takes exactly `n` messages out of `queue` (and checks that no other is there).
async fn take(ch: &Channel, queue: &str, n: usize) -> Vec<Msg> {
    let mut out = Vec::new();
    let get = || ch.basic_get(queue.into(), BasicGetOptions { no_ack: true });
    eventually(&format!("{n} messages in {queue}"), async || {
        if let Some(m) = get().await.expect("get") {
            out.push(Msg::of(&m.delivery));
        }
        out.len() == n
    })
    .await;
    assert!(get().await.expect("get").is_none(), "no other message");
    out
}

fn header(msg: &Msg, name: &str) -> String {
    match msg
        .properties
        .headers()
        .as_ref()
        .and_then(|h| h.inner().get(name))
    {
        Some(AMQPValue::LongString(s)) => String::from_utf8_lossy(s.as_bytes()).into_owned(),
        other => panic!("{name}: {other:?}"),
    }
}

/// The ledger, line by line: (invoice, seq, event, amount).
async fn ledger(pool: &PgPool) -> Vec<(i64, i64, String, i64)> {
    sqlx::query_as("select invoice_id, seq, event, amount_cents from billing.ledger order by line")
        .fetch_all(pool)
        .await
        .expect("ledger")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_event_reaches_the_ledger_once_in_chain_order_through_duplicates_reordering_and_poison()
 {
    let (pool, billing) = billing().await;
    let exchange = outbox_testkit::unique("outbox_invoices_x");
    let topology = Topology::new(
        &exchange,
        &outbox_testkit::unique("outbox_invoices_q"),
        "invoice.#",
    );
    let amqp = Connection::connect(&outbox_testkit::amqp_url(), ConnectionProperties::default())
        .await
        .expect("broker");
    let ch = amqp.create_channel().await.expect("channel");
    ch.confirm_select(ConfirmSelectOptions::default())
        .await
        .expect("confirm mode");
    // The queue exists before anything is published: the relay publishes `mandatory`, so an
    // event nothing is bound to would stay in the outbox.
    topology.declare(&ch).await.expect("topology");

    // Four invoices: a chain of 4 events, one of 3 (both in one transaction), of 2 and of 1.
    let mut tx = pool.begin().await.expect("begin");
    let a = billing.issue(&mut tx, "acme", 10_000).await.expect("issue");
    for cents in [2_500, 2_500, 5_000] {
        billing.pay(&mut tx, a, cents).await.expect("pay");
    }
    let b = billing
        .issue(&mut tx, "globex", 4_200)
        .await
        .expect("issue");
    billing.pay(&mut tx, b, 200).await.expect("pay");
    billing
        .void(&mut tx, b, "ordered twice")
        .await
        .expect("void");
    tx.commit().await.expect("commit");
    let mut tx = pool.begin().await.expect("begin");
    let c = billing.issue(&mut tx, "initech", 999).await.expect("issue");
    let d = billing
        .issue(&mut tx, "umbrella", 700)
        .await
        .expect("issue");
    tx.commit().await.expect("commit");
    let mut tx = pool.begin().await.expect("begin");
    billing.pay(&mut tx, d, 300).await.expect("pay");
    tx.commit().await.expect("commit");
    // A rolled-back transaction takes its invoice and its events with it.
    let mut tx = pool.begin().await.expect("begin");
    let gone = billing.issue(&mut tx, "hooli", 100).await.expect("issue");
    billing.pay(&mut tx, gone, 100).await.expect("pay");
    tx.rollback().await.expect("rollback");
    billing.notify().await.expect("notify");

    // The relay publishes them all and empties the outbox.
    let stop_relay = CancellationToken::new();
    let relay = billing.relay(&outbox_testkit::amqp_url(), &exchange, stop_relay.clone());
    let relay = tokio::spawn(relay.run());
    eventually("the outbox emptied", async || {
        count(&pool, OUTBOX_TABLE).await == 0
    })
    .await;

    // The test stands in for a network that reorders and repeats: it takes the relayed messages
    // out of the queue and delivers them again, each invoice's chain reversed, the invoices
    // interleaved, every third message twice in a row.
    let relayed = take(&ch, &topology.queue, 10).await;
    let mut chains: BTreeMap<i64, Vec<Msg>> = BTreeMap::new();
    for m in &relayed {
        let e = m.envelope();
        let event = InvoiceEvent::parse(&e.payload).expect("an invoice event");
        // Under the event's own type and routing key, with its content type.
        let sent = (e.r#type.as_str(), m.routing_key.as_str());
        assert_eq!(sent, event.type_and_routing_key());
        assert_eq!(
            header(m, wire::HEADER_PAYLOAD_CONTENT_TYPE),
            "application/json"
        );
        chains.entry(e.aggregate_id).or_default().push(m.clone());
    }
    assert_eq!(
        chains.keys().copied().collect::<Vec<_>>(),
        [a, b, c, d],
        "none of {gone}"
    );
    for chain in chains.values_mut() {
        // The relay keeps each chain in order.
        for pair in chain.windows(2) {
            assert_eq!(pair[1].envelope().prev_seq, Some(pair[0].envelope().seq));
        }
        chain.reverse();
    }
    let mut schedule = Vec::new();
    for round in 0..4 {
        for chain in chains.values() {
            schedule.extend(chain.get(round).cloned());
        }
    }
    let schedule: Vec<Msg> = schedule
        .into_iter()
        .enumerate()
        .flat_map(|(i, m)| std::iter::repeat_n(m, if i % 3 == 0 { 2 } else { 1 }))
        .collect();
    // It does reorder: the first delivery of invoice a is its last event.
    assert_eq!(schedule[0].envelope().seq, chains[&a][0].envelope().seq);
    assert!(schedule[0].envelope().prev_seq.is_some());

    // Poison among them: a body that is no envelope, and an envelope of invoice a whose JSON is
    // cut short (were it applied, it would be taken as a's first event).
    let not_an_envelope = Msg {
        body: b"not an envelope".to_vec(),
        ..Msg::forged(a, 1, b"")
    };
    let bad_json = Msg::forged(a, 1_000_000, br#"{"type":"InvoiceIssued","customer":"#);
    for (i, m) in schedule.iter().enumerate() {
        publish(&ch, &exchange, m).await;
        match i {
            1 => publish(&ch, &exchange, &not_an_envelope).await,
            5 => publish(&ch, &exchange, &bad_json).await,
            _ => {}
        }
    }
    // And, once a's chain is processed, an event that claims to be a's first: a chain conflict.
    let issued = serde_json::to_vec(&InvoiceEvent::InvoiceIssued {
        customer: "acme".into(),
        amount_cents: 1,
    })
    .expect("json");
    let conflict = Msg::forged(a, 1_000_001, &issued);
    publish(&ch, &exchange, &conflict).await;

    let stop = CancellationToken::new();
    let consumer = billing.consume(&amqp, &topology, stop.clone());
    let checks = async {
        eventually("the ledger has every event", async || {
            count(&pool, "billing.ledger").await >= 10
        })
        .await;
        // While it consumes: duplicates of messages processed long ago, then a new change,
        // which the relay publishes into the running consumer.
        for m in &relayed[..3] {
            publish(&ch, &exchange, m).await;
        }
        let mut tx = pool.begin().await.expect("begin");
        billing.pay(&mut tx, c, 999).await.expect("pay");
        tx.commit().await.expect("commit");
        billing.notify().await.expect("notify");
        eventually("the new payment in the ledger", async || {
            count(&pool, "billing.ledger").await >= 11
        })
        .await;
        stop.cancel();
    };
    tokio::pin!(consumer);
    tokio::select! {
        ended = &mut consumer => panic!("the consumer stopped on its own: {ended:?}"),
        () = checks => {}
    }
    consumer
        .await
        .expect("the consumer ends cleanly at shutdown");
    stop_relay.cancel();
    relay.await.expect("the relay stops");

    // Each event exactly once, each invoice's in chain order, with what it did to the amount
    // owed; the paid and voided invoices owe nothing.
    let lines = ledger(&pool).await;
    let mut by_invoice: BTreeMap<i64, Vec<(i64, String, i64)>> = BTreeMap::new();
    for (invoice, seq, event, cents) in lines {
        by_invoice
            .entry(invoice)
            .or_default()
            .push((seq, event, cents));
    }
    let chain_seqs = |id: i64| -> Vec<i64> {
        let mut seqs: Vec<i64> = chains[&id]
            .iter()
            .map(|m| m.envelope().seq as i64)
            .collect();
        seqs.reverse();
        seqs
    };
    let expected: [(i64, &[(&str, i64)]); 4] = [
        (
            a,
            &[
                ("InvoiceIssued", 10_000),
                ("InvoicePaid", -2_500),
                ("InvoicePaid", -2_500),
                ("InvoicePaid", -5_000),
            ],
        ),
        (
            b,
            &[
                ("InvoiceIssued", 4_200),
                ("InvoicePaid", -200),
                ("InvoiceVoided", -4_000),
            ],
        ),
        (c, &[("InvoiceIssued", 999), ("InvoicePaid", -999)]),
        (d, &[("InvoiceIssued", 700), ("InvoicePaid", -300)]),
    ];
    assert_eq!(by_invoice.len(), 4, "{by_invoice:?}");
    for (id, events) in expected {
        let got = &by_invoice[&id];
        let got_events: Vec<(&str, i64)> = got.iter().map(|(_, e, c)| (e.as_str(), *c)).collect();
        assert_eq!(got_events, events, "invoice {id}");
        let got_seqs: Vec<i64> = got.iter().map(|(s, _, _)| *s).collect();
        let mut want = chain_seqs(id);
        if id == c {
            want.push(*got_seqs.last().expect("c's payment"));
        }
        assert_eq!(got_seqs, want, "invoice {id}: chain order, each once");
    }
    let owed: BTreeMap<i64, i64> = by_invoice
        .iter()
        .map(|(id, lines)| (*id, lines.iter().map(|l| l.2).sum()))
        .collect();
    assert_eq!(owed, BTreeMap::from([(a, 0), (b, 0), (c, 0), (d, 400)]));
    assert_eq!(
        count(&pool, "billing.ledger_inbox_held").await,
        0,
        "nothing left held"
    );

    // The poison is in the dead-letter queue, each with its reason; the queue itself is empty
    // (everything else was acked).
    let dead = take(&ch, &topology.dead_letter_queue, 3).await;
    let reasons: Vec<String> = dead
        .iter()
        .map(|m| header(m, DEATH_REASON_HEADER))
        .collect();
    assert_eq!(dead[0].body, not_an_envelope.body);
    assert!(
        reasons[0].starts_with("not an outbox envelope"),
        "{reasons:?}"
    );
    assert_eq!(dead[1].body, bad_json.body);
    assert!(
        reasons[1].starts_with("not an invoice event: EOF"),
        "{reasons:?}"
    );
    assert_eq!(dead[2].body, conflict.body);
    assert!(reasons[2].starts_with("chain conflict"), "{reasons:?}");
    let passive = QueueDeclareOptions {
        passive: true,
        ..QueueDeclareOptions::default()
    };
    let q = ch
        .queue_declare(
            topology.queue.as_str().into(),
            passive,
            FieldTable::default(),
        )
        .await
        .expect("passive declare");
    assert_eq!(q.message_count(), 0, "every delivery was acked");

    for queue in [&topology.queue, &topology.dead_letter_queue] {
        let _ = ch
            .queue_delete(queue.as_str().into(), QueueDeleteOptions::default())
            .await;
    }
    for x in [&topology.exchange, &topology.dead_letter_exchange] {
        let _ = ch
            .exchange_delete(x.as_str().into(), ExchangeDeleteOptions::default())
            .await;
    }
    let _ = amqp.close(200, "bye".into()).await;
}

#[tokio::test]
async fn refused_changes_append_nothing_and_say_why() {
    let (pool, billing) = billing().await;
    let mut tx = pool.begin().await.expect("begin");
    let id = billing.issue(&mut tx, "acme", 500).await.expect("issue");
    billing.pay(&mut tx, id, 500).await.expect("pay in full");
    tx.commit().await.expect("commit");
    let appended = count(&pool, OUTBOX_TABLE).await;
    assert_eq!(appended, 2);

    // Refusals come from the invoice's state, before anything is written: even a caller that
    // commits afterwards has appended nothing.
    let mut tx = pool.begin().await.expect("begin");
    let open = billing.issue(&mut tx, "globex", 300).await.expect("issue");
    let refusals = [
        (billing.pay(&mut tx, id, 1).await, "not open"),
        (billing.void(&mut tx, id, "late").await, "not open"),
        (
            billing.pay(&mut tx, open, 301).await,
            "exceeds what is owed",
        ),
        (billing.pay(&mut tx, 424_242, 1).await, "no such invoice"),
        (
            billing.pay(&mut tx, open, 0).await,
            "amount_cents must be positive",
        ),
        (
            billing.issue(&mut tx, "initech", -5).await.map(drop),
            "amount_cents must be positive",
        ),
    ];
    tx.commit().await.expect("commit");
    for (result, says) in refusals {
        let err = result.expect_err(says);
        assert!(
            matches!(err, Error::Refused { .. } | Error::InvalidAmount(_)),
            "{err:?}"
        );
        assert!(err.to_string().contains(says), "{err} should say {says:?}");
    }
    assert_eq!(
        count(&pool, OUTBOX_TABLE).await,
        appended + 1,
        "only the issue of {open}"
    );
}
