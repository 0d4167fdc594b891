//! Replay to one consumer ([`outbox_relay::Replay`]): an aggregate's published events sent
//! again reach the one queue named, in seq order, marked, each the message first published;
//! another queue bound to the same exchange sees nothing; a missing queue or a range with
//! nothing kept is an error and sends nothing.

use std::time::Duration;

use lapin::types::AMQPValue;
use outbox::wire::HEADER_REPLAY;
use outbox_relay::{
    EnvelopeEncoder, Error, Replay,
    publisher::{Outcome, Publisher},
};

use crate::support::{
    all_arrive,
    broker::{Consumer, Received},
    db::{Db, LIFECYCLE, event},
    relay::{Running, settings},
};

async fn publisher(exchange: &str) -> Publisher {
    Publisher::connect(
        &outbox_testkit::amqp_url(),
        &outbox_support::amqp::Tls::default(),
        outbox_support::amqp::DEFAULT_HEARTBEAT,
        exchange,
        Duration::from_secs(5),
        |_| {},
    )
    .await
    .expect("broker")
}

/// Parcels 1 and 2 walked through [`LIFECYCLE`] and relayed to every consumer's queue; parcel
/// 1's seqs.
async fn relayed(db: &Db, consumers: &[&Consumer]) -> Vec<i64> {
    let events: Vec<_> = LIFECYCLE
        .iter()
        .flat_map(|step| [event(1, step), event(2, step)])
        .collect();
    let seqs = db.append(&events).await;
    let mut relay = Running::start(settings(db, &consumers[0].exchange), db.pool.clone());
    let keyed: Vec<(i64, i64)> = seqs.iter().map(|s| (0, *s)).collect();
    for consumer in consumers {
        all_arrive("", consumer, db, &keyed).await;
    }
    relay.stop().await;
    seqs.iter().step_by(2).copied().collect()
}

fn replay_header(r: &Received) -> Option<String> {
    let headers = r.properties.headers().as_ref()?;
    match headers.inner().get(HEADER_REPLAY)? {
        AMQPValue::LongString(v) => Some(v.to_string()),
        other => Some(format!("{other:?}")),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_reaches_only_its_queue_in_seq_order_marked_and_as_first_published() {
    let db = Db::fresh("outbox_relay_replay").await;
    let target = Consumer::start_shared(None, "parcel.#").await;
    let other = Consumer::start_shared(Some(&target.exchange), "parcel.#").await;
    let parcel_1 = relayed(&db, &[&target, &other]).await;
    let (first_target, first_other) = (target.received(), other.received().len());

    let publisher = publisher(&target.exchange).await;
    let mut replay = Replay::new("parcel", 1, target.queue());
    replay.from_seq = Some(parcel_1[1]);
    replay.to_seq = Some(parcel_1[3]);
    let sent = replay
        .run(&db.pool, db.outbox.table(), &publisher, &EnvelopeEncoder)
        .await
        .expect("replayed");
    assert_eq!(sent, parcel_1[1..]);

    target.drained().await;
    other.drained().await;
    assert_eq!(
        other.received().len(),
        first_other,
        "the other queue got nothing"
    );
    let again = target.received()[first_target.len()..].to_vec();
    let seqs: Vec<i64> = again.iter().map(|r| r.envelope.seq as i64).collect();
    assert_eq!(seqs, parcel_1[1..], "in seq order, nothing else");
    for replayed in &again {
        assert_eq!(replay_header(replayed).as_deref(), Some("true"));
        let first = first_target
            .iter()
            .find(|r| r.envelope.seq == replayed.envelope.seq)
            .expect("first published");
        assert_eq!(replay_header(first), None, "a first publish is not marked");
        assert_eq!(replayed.body, first.body, "seq {}", replayed.envelope.seq);
        // The same properties and headers, the replay mark aside.
        let mut headers = lapin::types::FieldTable::default();
        for (name, value) in replayed
            .properties
            .headers()
            .as_ref()
            .expect("headers")
            .inner()
        {
            if name.as_str() != HEADER_REPLAY {
                headers.insert(name.clone(), value.clone());
            }
        }
        let unmarked = replayed.properties.clone().with_headers(headers);
        assert_eq!(unmarked, first.properties, "seq {}", replayed.envelope.seq);
        assert_eq!(replayed.routing_key, target.queue(), "the default exchange");
    }

    // No bounds: every kept event of the parcel.
    let sent = Replay::new("parcel", 1, target.queue())
        .run(&db.pool, db.outbox.table(), &publisher, &EnvelopeEncoder)
        .await
        .expect("replayed");
    assert_eq!(sent, parcel_1);
    publisher.close().await;
    other.drained().await;
    assert_eq!(other.received().len(), first_other);
    target.cleanup().await;
    other.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_queue_or_nothing_kept_is_an_error_and_sends_nothing() {
    let db = Db::fresh("outbox_relay_replay").await;
    let consumer = Consumer::start_shared(None, "parcel.#").await;
    let parcel_1 = relayed(&db, &[&consumer]).await;
    let before = consumer.received().len();
    let publisher = publisher(&consumer.exchange).await;
    let run = |replay: Replay| {
        let (db, publisher) = (&db, &publisher);
        async move {
            replay
                .run(&db.pool, db.outbox.table(), publisher, &EnvelopeEncoder)
                .await
        }
    };

    let missing = outbox_testkit::unique("outbox_relay_replay_missing");
    let e = run(Replay::new("parcel", 1, missing.as_str()))
        .await
        .expect_err("no such queue");
    assert!(
        matches!(&e, Error::QueueMissing(q) if *q == missing),
        "{e:?}"
    );
    assert!(e.to_string().contains(&missing), "{e}");

    let last = *parcel_1.last().expect("seqs");
    let mut after_the_last = Replay::new("parcel", 1, consumer.queue());
    after_the_last.from_seq = Some(last + 1);
    for (replay, says) in [
        (
            after_the_last,
            format!("parcel 1 with seqs from {}", last + 1),
        ),
        (
            Replay::new("parcel", 99, consumer.queue()),
            "parcel 99".into(),
        ),
        (Replay::new("crate", 1, consumer.queue()), "crate 1".into()),
    ] {
        let e = run(replay).await.expect_err("nothing kept");
        assert!(matches!(e, Error::NothingToReplay { .. }), "{e:?}");
        let text = e.to_string();
        assert!(
            text.starts_with("nothing in the retention window"),
            "{text}"
        );
        assert!(text.contains(&says), "{text}");
    }

    // A queue gone between the check and the publish: `mandatory` makes it a return.
    let row = outbox_relay::db::published_of(
        db.outbox.table(),
        &db.pool,
        "parcel",
        1,
        (parcel_1[0], parcel_1[0]),
    )
    .await
    .expect("row");
    let mut message = outbox_relay::Outgoing::from_row(&row[0]).expect("encodes");
    message.routing_key = missing.clone();
    let outcome = publisher
        .publish_to_queue(
            &[&message],
            Duration::from_secs(5),
            &tokio_util::sync::CancellationToken::new(),
        )
        .await
        .expect("answered");
    assert!(
        matches!(outcome[..], [Outcome::Returned { .. }]),
        "{outcome:?}"
    );
    publisher.close().await;

    consumer.drained().await;
    assert_eq!(consumer.received().len(), before, "nothing sent");
    consumer.cleanup().await;
}
