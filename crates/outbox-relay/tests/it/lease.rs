//! The leader lease: a frozen leader is replaced within the lease, and when it thaws it finds
//! its lock gone and stands by, having lost nothing; the lock connection asks for TCP
//! keepalives.

use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::support::{
    all_arrive, assert_complete_and_ordered,
    broker::Consumer,
    chains_of,
    db::Db,
    relay::{Running, settings, settings_via},
    stall::StallProxy,
    wait_until,
};

/// Short, so the test waits seconds rather than the default's ten.
const LEASE: Duration = Duration::from_secs(4);

async fn max_committed_seq(db: &Db) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!(
        "select coalesce(max(last_seq), 0)::bigint from {}",
        db.outbox.table().heads()
    )))
    .fetch_one(&db.pool)
    .await
    .expect("max seq")
}

/// The leader reaches PostgreSQL and RabbitMQ through paths the test freezes under load: to
/// both, it looks like a SIGSTOPped process (its session silent, its sockets open). Within the
/// lease plus a standby retry, the standby terminates the frozen leader's session and
/// publishes; thawed, the old leader finds its lock gone and stands by; every event arrived,
/// in chain order.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_frozen_leader_is_replaced_and_stands_by_when_it_thaws() {
    let db = Db::fresh("outbox_lease").await;
    let consumer = Consumer::start("#").await;
    let pg = StallProxy::start(&outbox_testkit::pg_addr()).await;
    let amqp = StallProxy::start(&outbox_testkit::amqp_addr()).await;
    let via_pg =
        outbox_testkit::pg_url_via(pg.addr(), outbox_testkit::database_name(&db.database_url));
    let frozen_pool = outbox_kit::db::connect(&via_pg, 4).await.expect("database");
    let mut s = settings_via(
        &db,
        &outbox_testkit::amqp_url_via(amqp.addr()),
        &consumer.exchange,
    );
    s.leader_lease = LEASE;
    let frozen = Running::start(s, frozen_pool);
    wait_until("the first relay leads", || async {
        frozen.snapshot().active
    })
    .await;
    let mut s = settings(&db, &consumer.exchange);
    s.leader_lease = LEASE;
    let standby = Running::start(s, db.pool.clone());

    let stop = CancellationToken::new();
    let writers = db.spawn_writers_until(4, stop.clone());
    wait_until("the stream is flowing", || async {
        consumer.seqs().len() >= 20
    })
    .await;
    assert!(!standby.snapshot().active, "one leader at a time");

    pg.stall();
    amqp.stall();
    let stopped_at = Instant::now();
    let committed_before = max_committed_seq(&db).await;
    // Only the new leader can publish what commits from now on.
    wait_until("an event published after the leader froze", || async {
        consumer.seqs().iter().any(|s| *s > committed_before)
    })
    .await;
    let took = stopped_at.elapsed();
    println!(
        "events flow again {:.1}s after the leader froze",
        took.as_secs_f64()
    );
    assert!(
        took <= LEASE + Duration::from_secs(5),
        "a frozen leader must be replaced within the lease + a few seconds, took {took:?}"
    );
    assert!(standby.snapshot().active);

    pg.resume();
    amqp.resume();
    // Load goes on for a while with the old leader awake next to the new one.
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        !frozen.snapshot().active,
        "the old leader must stand by after it thawed"
    );
    stop.cancel();
    let events = writers.await.expect("writers");
    all_arrive("after the thaw", &consumer, &db, &events).await;
    assert_complete_and_ordered(&consumer.envelopes(), &chains_of(&events));
    assert!(!frozen.snapshot().active);
    assert!(standby.snapshot().active);
    consumer.cleanup().await;
}

/// The lock connection asks the server for TCP keepalives, so PostgreSQL drops the session (and
/// the lock) of a leader whose host vanished in seconds, not hours.
#[tokio::test]
async fn the_lock_connection_sends_tcp_keepalives() {
    use sqlx::Connection;
    let pg: sqlx::postgres::PgConnectOptions =
        format!("{}/postgres", outbox_testkit::pg_server_url())
            .parse()
            .expect("url");
    let mut conn = sqlx::PgConnection::connect_with(&outbox_relay::db::lock_options(&pg))
        .await
        .expect("connect");
    for (name, want) in [
        ("tcp_keepalives_idle", "5"),
        ("tcp_keepalives_interval", "2"),
        ("tcp_keepalives_count", "3"),
    ] {
        let got: String = sqlx::query_scalar(sqlx::AssertSqlSafe(format!("show {name}")))
            .fetch_one(&mut conn)
            .await
            .expect("show");
        assert_eq!(got, want, "{name}");
    }
    conn.close().await.expect("close");
}
