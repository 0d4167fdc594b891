//! Startup order: the relay comes up (health, reflection, status) before the broker and before
//! orders-svc has created the outbox, and catches up once they exist.

use outbox_kit::testing::{self, Proxy, health, reflection};
use outbox_proto::orders::v1::OrderStatus;
use tonic_health::pb::health_check_response::ServingStatus;

use crate::common::*;

/// An empty database named `database` (no tables: what exists before orders-svc migrated it).
async fn create_database(database: &str) {
    use sqlx::Connection;
    let mut admin = sqlx::PgConnection::connect(&format!("{}/postgres", testing::pg_server_url()))
        .await
        .expect("admin connection");
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "create database \"{database}\""
    )))
    .execute(&mut admin)
    .await
    .expect("create database");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn serves_health_reflection_and_status_while_the_broker_is_unreachable() {
    let orders = Orders::start().await;
    let exchange = testing::unique("relay_ex");
    let broker = Proxy::start(&outbox_kit::testing::amqp_addr())
        .await
        .expect("proxy");
    broker.cut();
    let amqp_url = outbox_kit::testing::amqp_url_via(broker.addr());
    let relay = Relay::start(relay_config(&orders.database_url, &amqp_url, &exchange)).await;
    let seq = orders.upsert(1, OrderStatus::Pending).await;

    for service in ["", "relay.v1.RelayService"] {
        let status = health::status(relay.grpc_addr, service).await;
        assert_eq!(status, ServingStatus::Serving as i32, "{service:?}");
    }
    let names = reflection::services_v1(relay.grpc_addr).await;
    assert!(
        names.iter().any(|n| n == "relay.v1.RelayService"),
        "{names:?}"
    );
    assert!(
        !names.iter().any(|n| n == "orders.v1.OrderService"),
        "{names:?}"
    );
    let names = reflection::services_v1alpha(relay.grpc_addr).await;
    assert!(
        names.iter().any(|n| n == "relay.v1.RelayService"),
        "{names:?}"
    );

    wait_until(
        "the unreachable broker shows as failures and backlog",
        || async {
            let s = relay.status().await;
            s.active && s.consecutive_failures >= 2 && s.backlog == 1
        },
    )
    .await;
    assert_eq!(orders.outbox_seqs().await, [seq as i64]);

    // The broker "starts": the relay connects by itself and drains.
    let consumer = Consumer::start(&exchange, Some("#")).await;
    broker.restore();
    wait_until("published once the broker is up", || async {
        consumer.has_all(&[seq])
    })
    .await;
    wait_until("the outbox is drained", || async {
        orders.outbox_seqs().await.is_empty()
    })
    .await;
    consumer.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn waits_for_orders_svc_to_create_the_outbox() {
    let database = testing::unique("relay_test");
    let database_url = format!("{}/{database}", testing::pg_server_url());
    let exchange = testing::unique("relay_ex");
    let consumer = Consumer::start(&exchange, Some("#")).await;
    // The database exists, its outbox table does not yet (orders-svc has not migrated it).
    create_database(&database).await;
    let relay = Relay::start(relay_config(&database_url, &testing::amqp_url(), &exchange)).await;
    wait_until("the relay reports it is retrying", || async {
        let s = relay.status().await;
        s.active && s.consecutive_failures >= 2
    })
    .await;

    let orders = Orders::start_on(database).await;
    let seq = orders.upsert(1, OrderStatus::Pending).await;
    wait_until("published once the outbox exists", || async {
        consumer.has_all(&[seq])
    })
    .await;
    wait_until("the outbox is drained", || async {
        orders.outbox_seqs().await.is_empty()
    })
    .await;
    consumer.cleanup().await;
}

/// orders-svc at migration 0001 only (an older version still running): the outbox exists, its
/// quarantine does not. The relay publishes nothing and waits; once orders-svc migrated, it drains.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn waits_for_the_quarantine_table_of_migration_0002() {
    let database = testing::unique("relay_test");
    let database_url = format!("{}/{database}", testing::pg_server_url());
    let exchange = testing::unique("relay_ex");
    let consumer = Consumer::start(&exchange, Some("#")).await;
    create_database(&database).await;
    let pool = sqlx::PgPool::connect(&database_url).await.expect("pool");
    orders_svc::db::MIGRATOR
        .run_to(1, &pool)
        .await
        .expect("migration 0001 only");
    let seq: i64 = sqlx::query_scalar(
        "insert into outbox (aggregate_id, event_type, payload) \
         values (1, 'OrderCreated', $1) returning seq",
    )
    .bind(payload(1, OrderStatus::Pending, OrderStatus::Unspecified))
    .fetch_one(&pool)
    .await
    .expect("insert");

    let relay = Relay::start(relay_config(&database_url, &testing::amqp_url(), &exchange)).await;
    wait_until("the relay reports it is waiting", || async {
        let s = relay.status().await;
        s.active && s.consecutive_failures >= 2
    })
    .await;
    assert!(consumer.seqs().is_empty(), "nothing published meanwhile");

    let orders = Orders::start_on(database).await;
    wait_until("published once migration 0002 ran", || async {
        consumer.has_all(&[seq as u64])
    })
    .await;
    wait_until("the outbox is drained", || async {
        orders.outbox_seqs().await.is_empty()
    })
    .await;
    pool.close().await;
    consumer.cleanup().await;
}
