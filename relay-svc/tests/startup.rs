//! Startup order: the relay comes up (health, reflection, status) before the broker and before
//! orders-svc has created the outbox, and catches up once they exist.

mod common;

use common::*;
use futures::StreamExt;
use outbox_kit::testing::{self, Proxy};
use outbox_proto::orders::v1::OrderStatus;
use tonic_health::pb::{
    HealthCheckRequest, health_check_response::ServingStatus, health_client::HealthClient,
};

async fn channel(addr: std::net::SocketAddr) -> tonic::transport::Channel {
    tonic::transport::Endpoint::from_shared(format!("http://{addr}"))
        .expect("url")
        .connect()
        .await
        .expect("connect")
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

    let mut health = HealthClient::new(channel(relay.grpc_addr).await);
    for service in ["", "relay.v1.RelayService"] {
        let resp = health
            .check(HealthCheckRequest {
                service: service.into(),
            })
            .await
            .expect("check")
            .into_inner();
        assert_eq!(resp.status, ServingStatus::Serving as i32, "{service:?}");
    }
    {
        use tonic_reflection::pb::v1::{
            ServerReflectionRequest, server_reflection_client::ServerReflectionClient,
            server_reflection_request::MessageRequest, server_reflection_response::MessageResponse,
        };
        let mut client = ServerReflectionClient::new(channel(relay.grpc_addr).await);
        let mut responses = client
            .server_reflection_info(futures::stream::iter([ServerReflectionRequest {
                host: String::new(),
                message_request: Some(MessageRequest::ListServices(String::new())),
            }]))
            .await
            .expect("v1")
            .into_inner();
        let Some(MessageResponse::ListServicesResponse(list)) = responses
            .next()
            .await
            .expect("reply")
            .expect("ok")
            .message_response
        else {
            panic!("expected a service list");
        };
        let names: Vec<_> = list.service.iter().map(|s| s.name.as_str()).collect();
        assert!(names.contains(&"relay.v1.RelayService"), "{names:?}");
        assert!(!names.contains(&"orders.v1.OrderService"), "{names:?}");
    }
    {
        use tonic_reflection::pb::v1alpha::{
            ServerReflectionRequest, server_reflection_client::ServerReflectionClient,
            server_reflection_request::MessageRequest, server_reflection_response::MessageResponse,
        };
        let mut client = ServerReflectionClient::new(channel(relay.grpc_addr).await);
        let mut responses = client
            .server_reflection_info(futures::stream::iter([ServerReflectionRequest {
                host: String::new(),
                message_request: Some(MessageRequest::ListServices(String::new())),
            }]))
            .await
            .expect("v1alpha")
            .into_inner();
        let Some(MessageResponse::ListServicesResponse(list)) = responses
            .next()
            .await
            .expect("reply")
            .expect("ok")
            .message_response
        else {
            panic!("expected a service list");
        };
        assert!(
            list.service
                .iter()
                .any(|s| s.name == "relay.v1.RelayService"),
            "{list:?}"
        );
    }

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
    {
        use sqlx::Connection;
        let mut admin =
            sqlx::PgConnection::connect(&format!("{}/postgres", testing::pg_server_url()))
                .await
                .expect("admin connection");
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "create database \"{database}\""
        )))
        .execute(&mut admin)
        .await
        .expect("create database");
    }
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
    use sqlx::Connection;
    let database = testing::unique("relay_test");
    let database_url = format!("{}/{database}", testing::pg_server_url());
    let exchange = testing::unique("relay_ex");
    let consumer = Consumer::start(&exchange, Some("#")).await;
    {
        let mut admin =
            sqlx::PgConnection::connect(&format!("{}/postgres", testing::pg_server_url()))
                .await
                .expect("admin connection");
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "create database \"{database}\""
        )))
        .execute(&mut admin)
        .await
        .expect("create database");
    }
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
