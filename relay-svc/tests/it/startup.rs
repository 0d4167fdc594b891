//! Startup order: the relay comes up (health, reflection, status) before the broker and before
//! orders-svc has migrated its database, and catches up once they are there. It starts relaying
//! a database only once orders-svc's migration 0006 is applied (see `relay_svc::schema`).

use outbox_proto::orders::{
    events::v1::{ORDER_CREATED, ORDER_STATUS_CHANGED},
    v1::OrderStatus,
};
use outbox_testkit::{Proxy, health, reflection};
use relay_svc::schema::Schema;
use tonic_health::pb::health_check_response::ServingStatus;

use crate::common::*;

async fn quarantined(pool: &sqlx::PgPool) -> i64 {
    sqlx::query_scalar("select count(*) from outbox_quarantine")
        .fetch_one(pool)
        .await
        .expect("count the quarantine")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn serves_health_reflection_and_status_while_the_broker_is_unreachable() {
    let orders = Orders::start().await;
    let exchange = outbox_testkit::unique("relay_ex");
    let broker = Proxy::start(&outbox_testkit::amqp_addr())
        .await
        .expect("proxy");
    broker.cut();
    let amqp_url = outbox_testkit::amqp_url_via(broker.addr());
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
    let exchange = outbox_testkit::unique("relay_ex");
    let consumer = Consumer::start(&exchange, Some("#")).await;
    // The database exists, its outbox table does not yet (orders-svc has not migrated it).
    let (database, pool) = orders_database_at(0).await;
    let database_url = format!("{}/{database}", outbox_testkit::pg_server_url());
    let relay = Relay::start(relay_config(
        &database_url,
        &outbox_testkit::amqp_url(),
        &exchange,
    ))
    .await;
    wait_until("the relay reports it is waiting", || async {
        relay.schema() == Schema::Behind(0)
    })
    .await;
    assert_eq!(
        health::status(relay.grpc_addr, "").await,
        ServingStatus::NotServing as i32
    );
    assert!(!relay.status().await.active, "no leader lock taken");

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
    wait_until("SERVING once the schema is there", || async {
        health::status(relay.grpc_addr, "").await == ServingStatus::Serving as i32
    })
    .await;
    pool.close().await;
    consumer.cleanup().await;
}

/// The upgrade race: a relay started before orders-svc migrates, here while the database is at
/// migration 0001 (the first orders outbox, rows without routing keys in it), waits through
/// 0005 — whose outbox has the routing key column and the quarantine table, but its rows no keys
/// yet: a relay reading them would quarantine them — until 0006 gave them their keys. It
/// quarantines nothing and publishes every event, the earlier rows and the later ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_relay_started_before_the_migrations_waits_for_0006_and_quarantines_nothing() {
    let exchange = outbox_testkit::unique("relay_ex");
    let consumer = Consumer::start(&exchange, Some("#")).await;
    let (database, pool) = orders_database_at(1).await;
    let created = insert_first_format(
        &pool,
        1,
        ORDER_CREATED,
        None,
        &payload(1, OrderStatus::Pending, OrderStatus::Unspecified),
        None,
    )
    .await;
    let paid = insert_first_format(
        &pool,
        1,
        ORDER_STATUS_CHANGED,
        Some(created),
        &payload(1, OrderStatus::Paid, OrderStatus::Pending),
        None,
    )
    .await;
    let other = insert_first_format(
        &pool,
        2,
        ORDER_CREATED,
        None,
        &payload(2, OrderStatus::Pending, OrderStatus::Unspecified),
        None,
    )
    .await;

    let database_url = format!("{}/{database}", outbox_testkit::pg_server_url());
    let relay = Relay::start(relay_config(
        &database_url,
        &outbox_testkit::amqp_url(),
        &exchange,
    ))
    .await;
    wait_until("the relay read migration 1 (or leads)", || async {
        relay.schema() == Schema::Behind(1) || relay.status().await.active
    })
    .await;
    assert_eq!(
        health::status(relay.grpc_addr, "").await,
        ServingStatus::NotServing as i32
    );
    assert!(!relay.status().await.active, "no leader lock taken");

    // orders-svc migrating, half-way: the window in which a relay used to quarantine the rows.
    orders_svc::db::MIGRATOR
        .run_to(5, &pool)
        .await
        .expect("migrations 0002 to 0005");
    wait_until("migration 5 read (or the rows acted on)", || async {
        relay.schema() == Schema::Behind(5)
            || quarantined(&pool).await > 0
            || !consumer.seqs().is_empty()
    })
    .await;
    assert!(consumer.seqs().is_empty(), "nothing published meanwhile");
    assert_eq!(quarantined(&pool).await, 0, "nothing quarantined meanwhile");
    assert_eq!(
        health::status(relay.grpc_addr, "").await,
        ServingStatus::NotServing as i32
    );

    // orders-svc finishes migrating (0006) and starts.
    let orders = Orders::start_on(database).await;
    let later = orders.upsert(3, OrderStatus::Pending).await as i64;
    let all: Vec<u64> = [created, paid, other, later]
        .iter()
        .map(|s| *s as u64)
        .collect();
    wait_until("every event published", || async { consumer.has_all(&all) }).await;
    wait_until("the outbox is drained", || async {
        orders.outbox_seqs().await.is_empty()
    })
    .await;
    assert_eq!(quarantined(&pool).await, 0, "nothing quarantined");
    assert_eq!(relay.schema(), Schema::Ready);
    wait_until("SERVING once the schema is there", || async {
        health::status(relay.grpc_addr, "").await == ServingStatus::Serving as i32
    })
    .await;
    let status = relay.status().await;
    assert!(status.active);
    assert_eq!(status.published_total, 4);
    pool.close().await;
    consumer.cleanup().await;
}
