//! Waking the relay (`orders_svc::wake`): every commit that appended events is followed by a
//! notification on the outbox's channel, the first after a quiet gap carrying it in its own
//! transaction, the rest coalesced into one from the waker's task after the gap.

use std::{sync::Arc, time::Duration};

use orders_svc::wake::{MIN_NOTIFY_GAP, RelayWaker};
use outbox_proto::orders::v1::OrderStatus;
use sqlx::postgres::PgListener;
use tokio_util::sync::CancellationToken;

use crate::common::{start, upsert};

async fn listen(pool: &sqlx::PgPool) -> PgListener {
    let mut listener = PgListener::connect_with(pool).await.expect("listener");
    let channel = orders_svc::db::outbox().table().notify_channel();
    listener.listen(&channel).await.expect("listen");
    listener
}

/// The notifications that arrive within `within`.
async fn received(listener: &mut PgListener, within: Duration) -> usize {
    let mut n = 0;
    while let Ok(Ok(_)) = tokio::time::timeout(within, listener.recv()).await {
        n += 1;
    }
    n
}

#[tokio::test]
async fn a_quiet_services_upsert_and_a_burst_each_wake_the_relay() {
    let t = start().await;
    let mut listener = listen(&t.pool).await;

    upsert(&t, 1, OrderStatus::Pending, "wake@example.com")
        .await
        .expect("upsert");
    assert!(
        received(&mut listener, Duration::from_secs(2)).await >= 1,
        "the commit woke nobody"
    );

    let burst: Vec<_> = (10..60)
        .map(|id| {
            let t = t.client.clone();
            tokio::spawn(async move {
                let mut client = t;
                client
                    .upsert(crate::common::req(
                        id,
                        OrderStatus::Pending,
                        "wake@example.com",
                    ))
                    .await
            })
        })
        .collect();
    for call in burst {
        call.await.expect("task").expect("upsert");
    }
    assert!(
        received(&mut listener, Duration::from_secs(2)).await >= 1,
        "the burst woke nobody"
    );

    // An Upsert that changes nothing appends nothing and wakes nobody.
    upsert(&t, 1, OrderStatus::Pending, "wake@example.com")
        .await
        .expect("upsert");
    assert_eq!(received(&mut listener, Duration::from_millis(500)).await, 0);
    t.shutdown.cancel();
}

#[tokio::test]
async fn commits_within_the_gap_get_one_notification_after_it() {
    let t = start().await;
    let mut listener = listen(&t.pool).await;
    let waker = Arc::new(RelayWaker::default());
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(orders_svc::wake::run(
        t.pool.clone(),
        waker.clone(),
        shutdown.clone(),
    ));

    // A commit carried the NOTIFY (its turn); three more commit within the gap.
    assert!(waker.take_turn());
    let turn = std::time::Instant::now();
    for _ in 0..3 {
        assert!(!waker.take_turn(), "a second turn within the gap");
        waker.wake_later();
    }
    tokio::time::timeout(Duration::from_secs(2), listener.recv())
        .await
        .expect("the task notifies")
        .expect("notification");
    assert!(
        turn.elapsed() >= MIN_NOTIFY_GAP,
        "notified {:?} after the last turn, within the gap",
        turn.elapsed()
    );
    assert_eq!(
        received(&mut listener, Duration::from_millis(300)).await,
        0,
        "one notification for the commits of one gap"
    );
    shutdown.cancel();
    task.await.expect("task");
    t.shutdown.cancel();
}
