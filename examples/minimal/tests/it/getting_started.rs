//! The getting-started run against the real PostgreSQL and RabbitMQ (a fresh database, an
//! exchange and queue of its own): every event applied once, in each shipment's chain order,
//! and nothing left behind by the shutdown.

use std::{collections::BTreeSet, time::Duration};

use minimal::{EVENTS, Setup};
use outbox::sqlx::{self, PgPool};
use outbox_inbox::lapin::{
    Connection, ConnectionProperties,
    options::{ExchangeDeleteOptions, QueueDeclareOptions, QueueDeleteOptions},
    types::FieldTable,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_event_is_applied_once_in_chain_order_and_shutdown_leaves_nothing_behind() {
    let database_url = outbox_testkit::fresh_database_url("minimal");
    // The example expects its database to exist, as a service's does.
    let pool = outbox_kit::db::connect(&database_url, 2)
        .await
        .expect("a fresh database");
    let setup = Setup {
        database_url,
        amqp_url: outbox_testkit::amqp_url(),
        exchange: outbox_testkit::unique("minimal_x"),
        queue: outbox_testkit::unique("minimal_q"),
    };

    let log = tokio::time::timeout(Duration::from_secs(60), minimal::run(&setup))
        .await
        .expect("the example ends within a minute")
        .expect("the example runs");

    // Every event exactly once...
    assert_eq!(log.len(), 3 * EVENTS.len(), "{log:?}");
    let seqs: BTreeSet<i64> = log.iter().map(|(_, seq, _)| *seq).collect();
    assert_eq!(seqs.len(), log.len(), "no event applied twice: {log:?}");
    // ...and each shipment's in the order they were appended (seqs rise along its chain).
    for id in 1..=3 {
        let chain: Vec<(i64, &str)> = log
            .iter()
            .filter(|(shipment, _, _)| *shipment == id)
            .map(|(_, seq, event)| (*seq, event.as_str()))
            .collect();
        let events: Vec<&str> = chain.iter().map(|(_, event)| *event).collect();
        assert_eq!(events, EVENTS, "shipment {id}");
        assert!(chain.is_sorted(), "shipment {id} in chain order: {chain:?}");
    }

    // The shutdown: the relay deleted what it published and let go of its leader lock; the
    // inbox holds nothing; the consumer acked everything it took.
    assert_eq!(
        count(&pool, "select count(*) from shipments_outbox").await,
        0
    );
    assert_eq!(
        count(&pool, "select count(*) from shipment_log_inbox_held").await,
        0
    );
    // The lock goes with the session, which the server ends a moment after the client closed it.
    let locks = "select count(*) from pg_locks where locktype = 'advisory'
                  and database = (select oid from pg_database where datname = current_database())";
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while count(&pool, locks).await > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the leader lock is released"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let amqp = Connection::connect(&setup.amqp_url, ConnectionProperties::default())
        .await
        .expect("broker");
    let ch = amqp.create_channel().await.expect("channel");
    let passive = QueueDeclareOptions {
        passive: true,
        ..QueueDeclareOptions::default()
    };
    for queue in [setup.queue.clone(), format!("{}.dead-letter", setup.queue)] {
        let q = ch
            .queue_declare(queue.as_str().into(), passive, FieldTable::default())
            .await
            .expect("the queue exists");
        assert_eq!(q.message_count(), 0, "{queue} is empty");
        ch.queue_delete(queue.as_str().into(), QueueDeleteOptions::default())
            .await
            .expect("delete queue");
    }
    for exchange in [setup.exchange.clone(), format!("{}.dlx", setup.queue)] {
        ch.exchange_delete(exchange.as_str().into(), ExchangeDeleteOptions::default())
            .await
            .expect("delete exchange");
    }
}

async fn count(pool: &PgPool, sql: &'static str) -> i64 {
    sqlx::query_scalar(sql)
        .fetch_one(pool)
        .await
        .expect("count")
}
