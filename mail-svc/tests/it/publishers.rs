//! TRUSTED_PUBLISHERS: when set, only messages whose AMQP `user_id` (checked by RabbitMQ against
//! the publishing connection's user) is in the list are processed; the rest are dead-lettered with
//! a reason. Unset, every message is processed, with or without `user_id` (hand-published
//! JSON).

use std::str::FromStr;

use lapin::uri::AMQPUri;
use prost::Message;

use crate::common::{Names, Publisher, TestMail, config, created, start, take_dead_letters};

const EMAIL: &str = "nanako@example.jp";

/// The RabbitMQ user the tests connect as (RabbitMQ accepts `user_id` only when it is this).
fn our_user() -> String {
    AMQPUri::from_str(&outbox_testkit::amqp_url())
        .expect("TEST_AMQP_URL")
        .authority
        .userinfo
        .username
}

/// mail-svc trusting `trusted` (none: the list unset), and a publisher to its exchange.
async fn trusting(trusted: &[&str]) -> (Names, TestMail, Publisher) {
    let names = Names::new();
    let mut cfg = config(&names);
    cfg.trusted_publishers = trusted.iter().map(|u| u.to_string()).collect();
    let svc = start(cfg).await;
    let publisher = Publisher::connect(&names.exchange).await;
    (names, svc, publisher)
}

/// Publishes OrderCreated `seq` of order `seq` as relay-svc would, as message `id` with `user`
/// as its `user_id`.
async fn publish(publisher: &Publisher, seq: u64, id: &str, user: Option<&str>) {
    let ev = created(seq, seq as i64, EMAIL);
    let props = Publisher::relay_properties(&ev, None).with_message_id(id.into());
    let props = match user {
        Some(u) => props.with_user_id(u.into()),
        None => props,
    };
    publisher
        .raw("order.created", &ev.encode_to_vec(), props)
        .await;
}

#[tokio::test]
async fn only_trusted_publishers_are_processed_when_the_list_is_set() {
    let me = our_user();
    // Trusting us: our messages with user_id are processed, without user_id dead-lettered.
    let (names, svc, publisher) = trusting(&["relay-svc", &me]).await;
    publish(&publisher, 1, "signed", Some(&me)).await;
    publish(&publisher, 2, "unsigned", None).await;
    publisher
        .json(
            "order.created",
            r#"{"seq":3,"type":"OrderCreated","aggregate_id":3,"payload":{"id":3,"status":"pending","customer_email":"nanako@example.jp"}}"#,
        )
        .await;
    let s = svc
        .status_once("one processed, two dead-lettered", |s| {
            s.processed + s.dead_lettered == 3
        })
        .await;
    assert_eq!((s.processed, s.dead_lettered), (1, 2));
    assert_eq!(svc.seqs(1).await, vec![1]);
    let dead = take_dead_letters(&names.dead_letter_queue(), 2).await;
    for d in &dead {
        assert!(d.reason.starts_with("no user_id property"), "{d:?}");
    }
    assert!(svc.mails(2).await.is_empty() && svc.mails(3).await.is_empty());
    svc.stop().await;
    names.cleanup().await;

    // Trusting only relay-svc: our signed message is dead-lettered, naming us.
    let (names, svc, publisher) = trusting(&["relay-svc"]).await;
    publish(&publisher, 1, "forged", Some(&me)).await;
    let dead = take_dead_letters(&names.dead_letter_queue(), 1).await;
    assert_eq!(
        dead[0].reason,
        format!("publisher {me:?} is not in TRUSTED_PUBLISHERS (relay-svc)")
    );
    // The dead letter is counted after its publish was confirmed: wait for the count.
    let s = svc
        .status_once("the dead letter counted", |s| s.dead_lettered == 1)
        .await;
    assert_eq!((s.processed, s.dead_lettered), (0, 1));
    svc.stop().await;
    names.cleanup().await;
}

#[tokio::test]
async fn everyone_is_processed_when_the_list_is_unset() {
    let me = our_user();
    let (names, svc, publisher) = trusting(&[]).await;
    publish(&publisher, 1, "signed", Some(&me)).await;
    publisher
        .json(
            "order.created",
            r#"{"seq":2,"type":"OrderCreated","aggregate_id":2,"payload":{"id":2,"status":"pending","customer_email":"nanako@example.jp"}}"#,
        )
        .await;
    svc.status_once("both processed", |s| s.processed == 2)
        .await;
    assert_eq!(svc.status().await.dead_lettered, 0);
    svc.stop().await;
    names.cleanup().await;
}
