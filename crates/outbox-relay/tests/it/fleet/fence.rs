//! The fence in the outbox database: once a newer owner took it, an older owner's delete and
//! quarantine move change nothing and report that they were fenced out.

use outbox_relay::{
    Error,
    db::{self, Queries},
    fleet::fence,
};

use crate::support::db::{Db, event};

#[tokio::test]
async fn after_a_newer_epoch_took_the_fence_the_older_owners_delete_and_quarantine_change_nothing()
{
    let db = Db::fresh("fleet_fence").await;
    let table = db.outbox.table().clone();
    let seqs = db.append(&[event(1, "created"), event(2, "created")]).await;
    let mut conn = db.pool.acquire().await.expect("connection");
    assert_eq!(fence::current(&mut conn, &table).await.expect("read"), None);
    fence::take(&mut conn, &table, 3)
        .await
        .expect("take epoch 3");
    fence::take(&mut conn, &table, 3)
        .await
        .expect("the same epoch again");
    let old = Queries::new(&table).fenced(3);
    // The current owner's delete takes effect.
    assert_eq!(
        db::delete(&old, &db.pool, &seqs[..1])
            .await
            .expect("delete"),
        1
    );

    fence::take(&mut conn, &table, 4)
        .await
        .expect("a newer owner takes it");
    assert_eq!(
        fence::current(&mut conn, &table).await.expect("read"),
        Some(4)
    );
    match db::delete(&old, &db.pool, &seqs[1..]).await {
        Err(Error::Fenced { epoch: 3 }) => {}
        other => panic!("the older owner's delete: {other:?}"),
    }
    match db::quarantine(&old, &db.pool, &[(seqs[1], "test".into())]).await {
        Err(Error::Fenced { epoch: 3 }) => {}
        other => panic!("the older owner's quarantine move: {other:?}"),
    }
    assert_eq!(
        db.unsent().await,
        seqs[1..],
        "the fenced statements changed nothing"
    );
    assert!(db.quarantined().await.is_empty());
    match fence::take(&mut conn, &table, 3).await {
        Err(Error::Fenced { epoch: 3 }) => {}
        other => panic!("taking an older epoch back: {other:?}"),
    }
    // Without published rows kept, the delete is fenced too.
    let bare = Queries::new(&table).without_published().fenced(3);
    assert!(matches!(
        db::delete(&bare, &db.pool, &seqs[1..]).await,
        Err(Error::Fenced { .. })
    ));
    let new = Queries::new(&table).fenced(4);
    assert_eq!(
        db::quarantine(&new, &db.pool, &[(seqs[1], "test".into())])
            .await
            .expect("move"),
        1
    );
    assert_eq!(db.quarantined().await, seqs[1..]);
}

/// A fenced delete in flight holds the fence row: the newer owner's take waits for it, so the
/// delete commits under the epoch current at its commit, never after the take.
#[tokio::test]
async fn a_take_waits_for_the_older_owners_fenced_delete_in_flight() {
    let db = Db::fresh("fleet_fence_wait").await;
    let table = db.outbox.table().clone();
    let seqs = db.append(&[event(1, "created")]).await;
    let mut conn = db.pool.acquire().await.expect("connection");
    fence::take(&mut conn, &table, 1).await.expect("take");
    // The older owner's delete, held open inside a transaction (as a frozen process would
    // hold it between its statement and its commit).
    let mut tx = db.pool.begin().await.expect("begin");
    let old = Queries::new(&table).fenced(1);
    let moved = db::delete(&old, &mut *tx, &seqs)
        .await
        .expect("fenced delete");
    assert_eq!(moved, 1);
    let mut taker = db.pool.acquire().await.expect("connection");
    let take = tokio::spawn(async move { fence::take(&mut taker, &table, 2).await });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert!(
        !take.is_finished(),
        "the take waits for the delete in flight"
    );
    tx.commit().await.expect("commit");
    take.await.expect("task").expect("taken after the delete");
    assert!(
        db.unsent().await.is_empty(),
        "the delete committed under its epoch"
    );
}
