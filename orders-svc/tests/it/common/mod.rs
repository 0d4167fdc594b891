//! Starts a real orders-svc on port 0 against a fresh database and connects the generated client.

use orders_svc::{App, Config};
use outbox_proto::orders::v1::{
    GetOrderRequest, Order, OrderStatus, UpsertOrderRequest, UpsertOrderResponse,
    order_service_client::OrderServiceClient,
};
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;
use tonic::transport::Channel;

pub struct TestOrders {
    pub client: OrderServiceClient<Channel>,
    pub pool: PgPool,
    pub grpc_addr: std::net::SocketAddr,
    pub metrics_addr: std::net::SocketAddr,
    pub shutdown: CancellationToken,
    pub app: tokio::task::JoinHandle<anyhow::Result<()>>,
}

pub fn config(database_url: String) -> Config {
    Config {
        database_url: database_url.into(),
        shards: None,
        db_max_connections: 16,
        server: outbox_kit::settings::ServerSettings::on_free_ports(),
    }
}

pub async fn start() -> TestOrders {
    start_with(config(outbox_testkit::fresh_database_url("orders_test"))).await
}

pub async fn start_with(cfg: Config) -> TestOrders {
    outbox_testkit::init_tracing();
    let shutdown = CancellationToken::new();
    let app = App::build(cfg, shutdown.clone())
        .await
        .expect("orders-svc starts");
    let grpc_addr = app.grpc_addr();
    let metrics_addr = app.metrics_addr();
    let pool = app.pool().clone();
    let app = tokio::spawn(app.run());
    let client = OrderServiceClient::connect(format!("http://{grpc_addr}"))
        .await
        .expect("client connects");
    TestOrders {
        client,
        pool,
        grpc_addr,
        metrics_addr,
        shutdown,
        app,
    }
}

pub fn req(id: i64, status: OrderStatus, email: &str) -> UpsertOrderRequest {
    UpsertOrderRequest {
        id,
        status: status as i32,
        customer_email: email.to_owned(),
    }
}

pub async fn upsert(
    t: &TestOrders,
    id: i64,
    status: OrderStatus,
    email: &str,
) -> Result<UpsertOrderResponse, tonic::Status> {
    t.client
        .clone()
        .upsert(req(id, status, email))
        .await
        .map(|r| r.into_inner())
}

/// `GetOrder` of order `id`, as a client calls it.
pub async fn get(t: &TestOrders, id: i64) -> Result<Order, tonic::Status> {
    t.client
        .clone()
        .get_order(GetOrderRequest { id })
        .await
        .map(|r| r.into_inner())
}

/// One outbox row as the relay would read it.
#[derive(Debug, Clone, PartialEq, Eq, sqlx::FromRow)]
pub struct OutboxRow {
    pub seq: i64,
    pub aggregate_id: i64,
    pub event_type: String,
    pub prev_seq: Option<i64>,
    pub payload: Vec<u8>,
    pub traceparent: Option<String>,
}

pub async fn outbox(pool: &PgPool) -> Vec<OutboxRow> {
    sqlx::query_as(
        "select seq, aggregate_id, event_type, prev_seq, payload, traceparent from outbox order by seq",
    )
    .fetch_all(pool)
    .await
    .expect("read outbox")
}

pub async fn count(pool: &PgPool, table: &str) -> i64 {
    sqlx::query_scalar(sqlx::AssertSqlSafe(format!("select count(*) from {table}")))
        .fetch_one(pool)
        .await
        .expect("count")
}
