//! A crash after the transaction committed and before the ack: the broker redelivers the
//! message, and the next consumer skips it. Still one mail per event.

use outbox_proto::orders::v1::OrderStatus;

use crate::common::{Names, Publisher, changed, config, created, start};

const EMAIL: &str = "saburo@example.jp";

#[tokio::test]
async fn redelivery_after_a_crash_between_commit_and_ack_is_skipped() {
    let names = Names::new();
    let mut crashing = config(&names);
    crashing.hooks.crash_after_commit_seq = Some(2);
    // One delivery at a time, so that seq 3 is certainly not processed before the crash.
    crashing.consumer_concurrency = 1;
    crashing.batch_size = 1;
    let first = start(crashing).await;
    let publisher = Publisher::connect(&names.exchange).await;

    publisher.proto(&created(1, 55, EMAIL)).await;
    publisher
        .proto(&changed(2, 1, 55, OrderStatus::Paid, EMAIL))
        .await;
    publisher
        .proto(&changed(3, 2, 55, OrderStatus::Shipped, EMAIL))
        .await;

    // The first instance commits seq 2, then "crashes": its consumer stops without acking and
    // its connection closes, so the broker takes seq 2 (and 3, if prefetched) back.
    let mut consuming = first.consuming.clone();
    tokio::time::timeout(
        std::time::Duration::from_secs(60),
        consuming.wait_for(|c| !*c),
    )
    .await
    .expect("the consumer crashed")
    .expect("state");
    assert_eq!(
        first.seqs(55).await,
        vec![1, 2],
        "seq 2 was committed before the crash"
    );
    let before = first.status().await;
    assert_eq!(before.skipped, 0);

    // A new instance on the same database and queue gets the redelivery and skips it.
    let second = start(config(&names)).await;
    // The second instance works on deliveries concurrently: seq 3 may be processed before the
    // redelivered seq 2 is skipped, so wait for both.
    let s = second
        .status_once("seq 3 processed, seq 2 skipped", |s| {
            s.processed == 3 && s.skipped >= 1
        })
        .await;
    assert_eq!(s.skipped, 1, "the redelivered seq 2 was skipped");
    assert_eq!(second.seqs(55).await, vec![1, 2, 3]);
    first.stop().await;
    second.stop().await;
    names.cleanup().await;
}
