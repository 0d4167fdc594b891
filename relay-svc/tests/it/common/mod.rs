//! Test harness: a real orders-svc (schema + writers) on a fresh database, real relays on port
//! 0, and an independent consumer on a unique queue bound to a unique exchange.

use std::{
    collections::BTreeMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use futures::StreamExt;
use lapin::{
    BasicProperties, Connection, ConnectionProperties,
    options::{BasicConsumeOptions, ExchangeDeleteOptions, QueueBindOptions, QueueDeclareOptions},
    types::{AMQPValue, FieldTable, ShortString},
};
use outbox_proto::{
    orders::{
        events::v1::OrderEvent,
        v1::{OrderStatus, order_service_client::OrderServiceClient},
    },
    relay::v1::{GetStatusRequest, RelayStatus, relay_service_client::RelayServiceClient},
};
use outbox_testkit::{
    chains::{self, Link},
    orders,
};
use prost::Message;
use relay_svc::{App, Config, CrashHandle};
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;
use tonic::transport::Channel;

pub use outbox_testkit::{PATIENCE, chains::chains_of, wait_until};

/// The properties every event the relay publishes carries: protobuf, persistent, the row's `seq`
/// as message id, its event type (`kind`) as type, its creation time as timestamp, and
/// relay-svc as app id.
pub fn assert_published_properties(
    p: &BasicProperties,
    seq: i64,
    kind: &str,
    created_at: chrono::DateTime<chrono::Utc>,
) {
    assert_eq!(
        p.content_type().as_ref().map(|s| s.as_str()),
        Some("application/x-protobuf")
    );
    assert_eq!(*p.delivery_mode(), Some(2), "persistent");
    assert_eq!(
        p.message_id().as_ref().map(|s| s.to_string()),
        Some(seq.to_string())
    );
    assert_eq!(p.kind().as_ref().map(|s| s.as_str()), Some(kind));
    assert_eq!(*p.timestamp(), Some(created_at.timestamp() as u64));
    assert_eq!(p.app_id().as_ref().map(|s| s.as_str()), Some("relay-svc"));
}

pub fn init_logs() {
    outbox_testkit::init_tracing();
}

/// A running orders-svc on a fresh database.
pub struct Orders {
    pub client: OrderServiceClient<Channel>,
    pub pool: PgPool,
    pub database_url: String,
    pub database: String,
    shutdown: CancellationToken,
}

impl Orders {
    pub async fn start() -> Self {
        Self::start_on(outbox_testkit::unique("relay_test")).await
    }

    /// Starts orders-svc on the database named `database` (created and migrated if missing).
    pub async fn start_on(database: String) -> Self {
        init_logs();
        let database_url = format!("{}/{database}", outbox_testkit::pg_server_url());
        let shutdown = CancellationToken::new();
        let app = orders_svc::App::build(
            orders_svc::Config {
                database_url: database_url.clone().into(),
                shards: None,
                db_max_connections: 16,
                server: outbox_kit::settings::ServerSettings::on_free_ports(),
            },
            shutdown.clone(),
        )
        .await
        .expect("orders-svc starts");
        let grpc_addr = app.grpc_addr();
        let pool = app.pool().clone();
        tokio::spawn(app.run());
        let client = OrderServiceClient::connect(format!("http://{grpc_addr}"))
            .await
            .expect("orders client connects");
        Self {
            client,
            pool,
            database_url,
            database,
            shutdown,
        }
    }

    /// Upserts through gRPC; returns the seq of the event it appended.
    pub async fn upsert(&self, id: i64, status: OrderStatus) -> u64 {
        self.upsert_with(id, status, None).await
    }

    pub async fn upsert_with(
        &self,
        id: i64,
        status: OrderStatus,
        traceparent: Option<&str>,
    ) -> u64 {
        let req = match traceparent {
            Some(tp) => orders::traced_upsert_request(id, status, tp),
            None => tonic::Request::new(orders::upsert_request(id, status)),
        };
        self.client
            .clone()
            .upsert(req)
            .await
            .expect("upsert")
            .into_inner()
            .event_seq
            .expect("a change appends an event")
    }

    pub async fn outbox_seqs(&self) -> Vec<i64> {
        sqlx::query_scalar("select seq from outbox order by seq")
            .fetch_all(&self.pool)
            .await
            .expect("read outbox")
    }
}

impl Drop for Orders {
    fn drop(&mut self) {
        self.shutdown.cancel();
        // A passing test leaves no database behind; a failing one keeps it to look at. The
        // drop ends the relays and orders-svc of the test that still use it.
        if !std::thread::panicking() {
            outbox_testkit::drop_database_blocking(self.database.clone());
        }
    }
}

/// What most tests start with: orders-svc on a fresh database, a fresh exchange, and a consumer
/// of everything published to it.
pub async fn orders_and_consumer() -> (Orders, String, Consumer) {
    let orders = Orders::start().await;
    let exchange = outbox_testkit::unique("relay_ex");
    let consumer = Consumer::start(&exchange, Some("#")).await;
    (orders, exchange, consumer)
}

/// The lifecycle every test order walks through: four events.
pub const LIFECYCLE: [OrderStatus; 4] = [
    OrderStatus::Pending,
    OrderStatus::Paid,
    OrderStatus::Shipped,
    OrderStatus::Delivered,
];

/// A relay config for tests: port 0, short backoff, quick poll and takeover.
pub fn relay_config(database_url: &str, amqp_url: &str, exchange: &str) -> Config {
    Config {
        database_url: database_url.into(),
        amqp_url: amqp_url.into(),
        amqp_tls: Default::default(),
        amqp_exchange: exchange.to_owned(),
        batch_size: 64,
        backoff_min: Some(Duration::from_millis(50)),
        backoff_max: Some(Duration::from_secs(1)),
        poll_interval: Some(Duration::from_millis(500)),
        standby_retry: Some(Duration::from_millis(200)),
        confirm_timeout: Some(Duration::from_secs(5)),
        leader_lease: Duration::from_secs(10),
        published_retention: outbox_relay::DEFAULT_PUBLISHED_RETENTION,
        relay_shards: None,
        before_delete: None,
        server: outbox_kit::settings::ServerSettings::on_free_ports(),
        fleet: Default::default(),
    }
}

/// A running relay-svc.
pub struct Relay {
    pub grpc_addr: std::net::SocketAddr,
    pub client: RelayServiceClient<Channel>,
    pub metrics_addr: std::net::SocketAddr,
    pub shutdown: CancellationToken,
    /// The in-process figures, including those `GetStatus` does not carry (holds, quarantine).
    pub live: Arc<outbox_relay::status::Status>,
    /// Each shard's orders-svc schema as the relay reads it (see `relay_svc::schema`).
    pub schemas: Vec<tokio::sync::watch::Receiver<relay_svc::schema::Schema>>,
    crash: CrashHandle,
    pub task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Relay {
    pub async fn start(cfg: Config) -> Self {
        let shutdown = CancellationToken::new();
        let app = App::build(cfg, shutdown.clone())
            .await
            .expect("relay-svc starts");
        let grpc_addr = app.grpc_addr();
        let metrics_addr = app.metrics_addr();
        let crash = app.crash_handle();
        let live = app.status();
        let schemas = app.schemas();
        let task = tokio::spawn(app.run());
        let client = RelayServiceClient::connect(format!("http://{grpc_addr}"))
            .await
            .expect("relay client connects");
        Self {
            grpc_addr,
            client,
            metrics_addr,
            shutdown,
            live,
            schemas,
            crash,
            task,
        }
    }

    /// Shard 0's orders-svc schema as the relay last read it.
    pub fn schema(&self) -> relay_svc::schema::Schema {
        self.schemas[0].borrow().clone()
    }

    /// A relay with the test [`relay_config`] for `orders`' outbox and the machine's broker.
    pub async fn start_for(orders: &Orders, exchange: &str) -> Self {
        Self::start(relay_config(
            &orders.database_url,
            &outbox_testkit::amqp_url(),
            exchange,
        ))
        .await
    }

    pub async fn status(&self) -> RelayStatus {
        self.client
            .clone()
            .get_status(GetStatusRequest {})
            .await
            .expect("GetStatus")
            .into_inner()
    }

    /// Kills it as a crash would: tasks aborted, connections dropped, nothing cleaned up.
    pub fn crash(&self) {
        self.crash.crash();
        self.shutdown.cancel();
    }

    /// Graceful shutdown, as SIGTERM would: waits until it has stopped.
    pub async fn stop(&mut self) -> anyhow::Result<()> {
        self.shutdown.cancel();
        (&mut self.task).await.expect("relay task joins")
    }

    pub async fn metrics(&self) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut s = tokio::net::TcpStream::connect(self.metrics_addr)
            .await
            .expect("metrics connect");
        s.write_all(b"GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n")
            .await
            .expect("metrics write");
        let mut body = String::new();
        s.read_to_string(&mut body).await.expect("metrics read");
        body
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

/// Waits (`what`: the moment, for the failure message) until every one of `events` (order,
/// seq) reached `consumer`, then until `orders`' outbox is drained.
pub async fn all_arrive(what: &str, consumer: &Consumer, orders: &Orders, events: &[(i64, u64)]) {
    let all: Vec<u64> = events.iter().map(|(_, s)| *s).collect();
    wait_until(what, || async { consumer.has_all(&all) }).await;
    wait_until("the outbox is drained", || async {
        orders.outbox_seqs().await.is_empty()
    })
    .await;
}

/// One message as the consumer saw it.
#[derive(Debug, Clone)]
pub struct Received {
    pub routing_key: String,
    pub properties: BasicProperties,
    pub event: OrderEvent,
    /// The body as it came.
    pub body: Vec<u8>,
}

impl Received {
    /// Its headers (the relay always sends some).
    pub fn headers(&self) -> &BTreeMap<ShortString, AMQPValue> {
        self.properties.headers().as_ref().expect("headers").inner()
    }
}

/// An independent consumer: its own connection, a unique exclusive queue bound to the exchange.
pub struct Consumer {
    pub received: Arc<Mutex<Vec<Received>>>,
    channel: lapin::Channel,
    connection: Connection,
    pub queue: String,
    exchange: String,
}

impl Consumer {
    /// Declares `exchange` (as the relay does) and, with `binding`, a queue bound to it.
    pub async fn start(exchange: &str, binding: Option<&str>) -> Self {
        Self::start_at(&outbox_testkit::amqp_url(), exchange, binding).await
    }

    /// [`Consumer::start`] on the broker at `amqp_url` (a node of the test's own).
    pub async fn start_at(amqp_url: &str, exchange: &str, binding: Option<&str>) -> Self {
        let connection = Connection::connect(amqp_url, ConnectionProperties::default())
            .await
            .expect("consumer connects to RabbitMQ");
        let channel = connection.create_channel().await.expect("channel");
        outbox_relay::declare_exchange(&channel, exchange)
            .await
            .expect("declare exchange");
        let queue = outbox_testkit::unique("relay_q");
        let c = Self {
            received: Arc::default(),
            channel,
            connection,
            queue,
            exchange: exchange.to_owned(),
        };
        if let Some(binding) = binding {
            c.bind(binding).await;
        }
        c
    }

    /// Declares the queue, binds it with `binding` and starts consuming.
    pub async fn bind(&self, binding: &str) {
        self.channel
            .queue_declare(
                self.queue.as_str().into(),
                QueueDeclareOptions {
                    exclusive: true,
                    auto_delete: true,
                    ..Default::default()
                },
                FieldTable::default(),
            )
            .await
            .expect("declare queue");
        self.channel
            .queue_bind(
                self.queue.as_str().into(),
                self.exchange.as_str().into(),
                binding.into(),
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await
            .expect("bind queue");
        let mut deliveries = self
            .channel
            .basic_consume(
                self.queue.as_str().into(),
                "".into(),
                BasicConsumeOptions {
                    no_ack: true,
                    ..Default::default()
                },
                FieldTable::default(),
            )
            .await
            .expect("consume");
        let received = self.received.clone();
        tokio::spawn(async move {
            while let Some(Ok(d)) = deliveries.next().await {
                let event = OrderEvent::decode(d.data.as_slice()).expect("body is an OrderEvent");
                received.lock().expect("lock").push(Received {
                    routing_key: d.routing_key.to_string(),
                    properties: d.properties,
                    event,
                    body: d.data,
                });
            }
        });
    }

    pub fn snapshot(&self) -> Vec<Received> {
        self.received.lock().expect("lock").clone()
    }

    pub fn seqs(&self) -> Vec<u64> {
        self.snapshot().iter().map(|r| r.event.seq).collect()
    }

    /// True once every seq in `want` was received at least once.
    pub fn has_all(&self, want: &[u64]) -> bool {
        let got: std::collections::HashSet<u64> = self.seqs().into_iter().collect();
        want.iter().all(|s| got.contains(s))
    }

    /// Deletes the exchange (the queue is exclusive and goes with the connection).
    pub async fn cleanup(self) {
        let _ = self
            .channel
            .exchange_delete(
                self.exchange.as_str().into(),
                ExchangeDeleteOptions::default(),
            )
            .await;
        let _ = self.connection.close(200, "test done".into()).await;
    }
}

/// The guarantee ([`chains::assert_complete_and_ordered`]) on what a consumer received, in
/// arrival order; `chains` maps each order to its committed seqs in commit order.
#[track_caller]
pub fn assert_complete_and_ordered(received: &[Received], chains: &BTreeMap<i64, Vec<u64>>) {
    let links = received.iter().map(|r| Link {
        aggregate: r.event.aggregate_id,
        seq: r.event.seq,
        prev_seq: r.event.prev_seq,
    });
    chains::assert_complete_and_ordered(links, chains);
}

/// A fresh database that orders-svc's migrations brought up to `version` only (0: an empty
/// database), as an older orders-svc left it; its name and a pool. Start orders-svc on it with
/// [`Orders::start_on`] to migrate the rest (and drop it with the test).
pub async fn orders_database_at(version: i64) -> (String, PgPool) {
    use sqlx::Connection;
    let database = outbox_testkit::unique("relay_test");
    let mut admin =
        sqlx::PgConnection::connect(&format!("{}/postgres", outbox_testkit::pg_server_url()))
            .await
            .expect("admin connection");
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "create database \"{database}\""
    )))
    .execute(&mut admin)
    .await
    .expect("create database");
    let pool = PgPool::connect(&format!("{}/{database}", outbox_testkit::pg_server_url()))
        .await
        .expect("pool");
    if version > 0 {
        orders_svc::db::MIGRATOR
            .run_to(version, &pool)
            .await
            .expect("the older migrations");
    }
    (database, pool)
}

/// Appends an event as the first orders outbox did (before orders-svc migration 0003, and an
/// orders-svc of that version after it): no routing key, the payload an encoded `OrderPayload`.
/// Its seq.
pub async fn insert_first_format(
    pool: &PgPool,
    order: i64,
    event_type: &str,
    prev_seq: Option<i64>,
    payload: &[u8],
    traceparent: Option<&str>,
) -> i64 {
    sqlx::query_scalar(
        "insert into outbox (aggregate_id, event_type, prev_seq, payload, traceparent) \
         values ($1, $2, $3, $4, $5) returning seq",
    )
    .bind(order)
    .bind(event_type)
    .bind(prev_seq)
    .bind(payload)
    .bind(traceparent)
    .fetch_one(pool)
    .await
    .expect("insert a row of the first format")
}

/// Raw outbox rows' payloads, and writes through a client clone (for concurrent writers).
pub use outbox_testkit::orders::{payload, upsert};

/// `writers` concurrent writers, each walking `orders_each` orders through [`LIFECYCLE`]
/// (interleaved across its orders, pausing `pause` between calls). Returns (order, seq) pairs.
pub fn spawn_writers(
    client: &OrderServiceClient<Channel>,
    writers: i64,
    orders_each: i64,
    pause: Duration,
) -> tokio::task::JoinHandle<Vec<(i64, u64)>> {
    outbox_testkit::spawn_gathered((0..writers).map(|w| {
        let client = client.clone();
        async move {
            let mut events = Vec::new();
            for status in LIFECYCLE {
                for i in 1..=orders_each {
                    let id = w * 1_000 + i;
                    events.push((id, upsert(&client, id, status).await));
                    if !pause.is_zero() {
                        tokio::time::sleep(pause).await;
                    }
                }
            }
            events
        }
    }))
}

/// One writer that keeps appending (a new order per call, ids from `first_id`) until `stop` is
/// cancelled; returns its (order, seq) pairs. For a test that needs the relay to be publishing
/// at a moment it does not control (the broker blocks a connection when it next publishes).
pub fn keep_writing(
    client: &OrderServiceClient<Channel>,
    first_id: i64,
    stop: CancellationToken,
) -> tokio::task::JoinHandle<Vec<(i64, u64)>> {
    let client = client.clone();
    tokio::spawn(async move {
        let mut events = Vec::new();
        for id in first_id.. {
            if stop.is_cancelled() {
                break;
            }
            events.push((id, upsert(&client, id, OrderStatus::Pending).await));
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        events
    })
}

/// Preloads `events` rows over `orders` chains in one transaction (event i belongs to order
/// 1 + i % orders); returns every order's chain.
pub async fn preload(pool: &PgPool, events: i64, orders: i64) -> Vec<(i64, u64)> {
    let body = payload(1, OrderStatus::Paid, OrderStatus::Pending);
    let mut tx = pool.begin().await.expect("begin");
    let first: i64 = sqlx::query_scalar(
        "with ins as ( \
             insert into outbox (aggregate_id, event_type, routing_key, prev_seq, payload) \
             select 1 + (g % $2), \
                    case when g < $2 then 'OrderCreated' else 'OrderStatusChanged' end, \
                    case when g < $2 then 'order.created' else 'order.status_changed' end, \
                    null, $3 \
               from generate_series(0, $1 - 1) g \
             returning seq) \
         select min(seq) from ins",
    )
    .bind(events)
    .bind(orders)
    .bind(&body)
    .fetch_one(&mut *tx)
    .await
    .expect("preload");
    // Identity values of one insert are handed out in row order: chain by position.
    sqlx::query("update outbox set prev_seq = seq - $1 where seq >= $2 + $1")
        .bind(orders)
        .bind(first)
        .execute(&mut *tx)
        .await
        .expect("chain");
    tx.commit().await.expect("commit");
    let rows: Vec<(i64, i64)> = sqlx::query_as("select aggregate_id, seq from outbox order by seq")
        .fetch_all(pool)
        .await
        .expect("read back");
    rows.into_iter().map(|(o, s)| (o, s as u64)).collect()
}
