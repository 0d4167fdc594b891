//! The real stack in-process for the operator tools' tests (the console's, outboxctl's):
//! orders-svc, relay-svc and mail-svc on port 0, on fresh databases and unique RabbitMQ names
//! that a guard ([`Made`]) removes when the stack goes, whether the test passed or failed.

use std::time::Duration;

use clap::Parser as _;
use outbox_kit::telemetry::LogFormat;
use outbox_proto::orders::v1::{OrderStatus, order_service_client::OrderServiceClient};
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;

use crate::{Made, Running};

/// The admin token relay-svc and mail-svc take in the stack.
pub const TOKEN: &str = "test-admin-token-0123456789";

/// One stack's names (prefixes the sweep in deploy/test.sh knows: `relay…`, `mail…`), removed
/// with it.
#[derive(Debug)]
pub struct Names {
    pub orders_db: String,
    pub mail_db: String,
    pub exchange: String,
    pub queue: String,
    made: Made,
}

impl Names {
    pub fn new() -> Self {
        let names = Self {
            orders_db: crate::fresh_database_url("relay_stack_orders"),
            mail_db: crate::fresh_database_url("mail_stack"),
            exchange: crate::unique("mail_stack_ex"),
            queue: crate::unique("mail_stack_q"),
            made: Made::new(),
        };
        names
            .made
            .database(&names.orders_db)
            .database(&names.mail_db)
            .mail_topology(&names.exchange, &names.queue);
        names
    }

    /// Removes the queues, exchanges and databases now (the guard does it at the latest when
    /// the names are dropped).
    pub async fn cleanup(&self) {
        if let Err(e) = self.made.remove().await {
            eprintln!("{e:#}");
        }
    }
}

impl Default for Names {
    fn default() -> Self {
        Self::new()
    }
}

/// The three services on one set of names. The services are stopped (their shutdown started)
/// before the names are removed: fields drop in order, `names` last.
#[derive(Debug)]
pub struct Stack {
    pub orders: Running,
    pub orders_client: OrderServiceClient<tonic::transport::Channel>,
    pub orders_pool: PgPool,
    pub relay: Running,
    pub mail: Running,
    pub mail_pool: PgPool,
    pub names: Names,
}

/// orders-svc on `names`' orders database; its pool and a client.
pub async fn start_orders(
    names: &Names,
) -> (
    Running,
    PgPool,
    OrderServiceClient<tonic::transport::Channel>,
) {
    start_orders_on(&format!("--database-url={}", names.orders_db)).await
}

/// orders-svc on the databases `databases` names (`--database-url=URL`, `--shards=URL,URL`),
/// which it creates when missing (the caller drops them); its (first shard's) pool and a client.
pub async fn start_orders_on(
    databases: &str,
) -> (
    Running,
    PgPool,
    OrderServiceClient<tonic::transport::Channel>,
) {
    let shutdown = CancellationToken::new();
    let app = orders_svc::App::build(
        orders_svc::Config::try_parse_from([
            "orders-svc",
            "--grpc-addr=127.0.0.1:0",
            "--metrics-addr=127.0.0.1:0",
            databases,
        ])
        .expect("orders config"),
        shutdown.clone(),
    )
    .await
    .expect("orders-svc starts");
    let grpc_addr = app.grpc_addr();
    let pool = app.pool().clone();
    let running = Running::spawn(grpc_addr, shutdown, app.run());
    let client = OrderServiceClient::connect(format!("http://{grpc_addr}"))
        .await
        .expect("orders client");
    (running, pool, client)
}

/// relay-svc, with the admin token when `token`.
pub async fn start_relay(names: &Names, token: Option<&str>) -> Running {
    let mut args = vec![
        "relay-svc".to_owned(),
        "--grpc-addr=127.0.0.1:0".into(),
        "--metrics-addr=127.0.0.1:0".into(),
        format!("--database-url={}", names.orders_db),
        format!("--amqp-url={}", crate::amqp_url()),
        format!("--amqp-exchange={}", names.exchange),
        "--poll-interval=200ms".into(),
        "--backoff-min=50ms".into(),
        "--backoff-max=1s".into(),
        "--standby-retry=200ms".into(),
    ];
    if let Some(t) = token {
        args.push(format!("--admin-token={t}"));
    }
    let cfg = relay_svc::Config::try_parse_from(args).expect("relay config");
    let shutdown = CancellationToken::new();
    let app = relay_svc::App::build(cfg, shutdown.clone())
        .await
        .expect("relay-svc starts");
    Running::spawn(app.grpc_addr(), shutdown, app.run())
}

/// mail-svc (log mailer), trusting `trusted` publishers, with the admin token when `token`;
/// returns once it consumes.
pub async fn start_mail(names: &Names, trusted: &str, token: Option<&str>) -> (Running, PgPool) {
    let mut args = vec![
        "mail-svc".to_owned(),
        "--grpc-addr=127.0.0.1:0".into(),
        "--metrics-addr=127.0.0.1:0".into(),
        format!("--database-url={}", names.mail_db),
        format!("--amqp-url={}", crate::amqp_url()),
        format!("--amqp-exchange={}", names.exchange),
        format!("--mail-queue={}", names.queue),
        format!("--trusted-publishers={trusted}"),
    ];
    if let Some(t) = token {
        args.push(format!("--admin-token={t}"));
    }
    let mut cfg = mail_svc::Config::try_parse_from(args).expect("mail config");
    cfg.server.log_format = LogFormat::Text;
    let shutdown = CancellationToken::new();
    let app = mail_svc::App::build(cfg, shutdown.clone())
        .await
        .expect("mail-svc starts");
    let pool = app.pool().clone();
    let mut consuming = app.consuming();
    let running = Running::spawn(app.grpc_addr(), shutdown, app.run());
    tokio::time::timeout(Duration::from_secs(60), consuming.wait_for(|c| *c))
        .await
        .expect("mail-svc consumes within 60s")
        .expect("consumer state");
    (running, pool)
}

impl Stack {
    /// The whole stack; relay and mail with the admin token.
    pub async fn start() -> Self {
        let names = Names::new();
        let (orders, orders_pool, orders_client) = start_orders(&names).await;
        let relay = start_relay(&names, Some(TOKEN)).await;
        let (mail, mail_pool) = start_mail(&names, "guest", Some(TOKEN)).await;
        Self {
            orders,
            orders_client,
            orders_pool,
            relay,
            mail,
            mail_pool,
            names,
        }
    }

    /// Stops mail-svc and starts it again trusting `trusted` (a deploy with another setting).
    pub async fn redeploy_mail(&mut self, trusted: &str) {
        let (mail, pool) = start_mail(&self.names, trusted, Some(TOKEN)).await;
        let mut old = std::mem::replace(&mut self.mail, mail);
        self.mail_pool = pool;
        old.stop_in_place().await;
    }

    /// Stops mail-svc; its queue keeps what the relay publishes meanwhile.
    pub async fn stop_mail(&mut self) {
        self.mail.stop_in_place().await;
    }

    /// Stops relay-svc: what orders-svc writes meanwhile stays in the outbox.
    pub async fn stop_relay(&mut self) {
        self.relay.stop_in_place().await;
    }

    /// Starts mail-svc again (trusting `guest`) after [`Stack::stop_mail`].
    pub async fn start_mail_again(&mut self) {
        let (mail, pool) = start_mail(&self.names, "guest", Some(TOKEN)).await;
        self.mail = mail;
        self.mail_pool = pool;
    }

    /// Stops the services, then removes the test's queues, exchanges and databases (mail-svc
    /// stopped first: a running one declares its queues again once they are deleted).
    pub async fn cleanup(mut self) {
        self.stop_mail().await;
        self.stop_relay().await;
        self.orders.stop_in_place().await;
        self.names.cleanup().await;
    }

    /// Upserts through gRPC; the seq of the appended event.
    pub async fn upsert(&self, id: i64, status: OrderStatus) -> i64 {
        let seq = crate::orders::upsert(&self.orders_client, id, status).await;
        i64::try_from(seq).expect("seq")
    }

    /// Writes order `id`'s created event by hand the first orders outbox's way, without a routing
    /// key, and with a misspelt type: a row the relay cannot encode, so it quarantines it. Its
    /// seq.
    pub async fn insert_unencodable(&self, id: i64) -> i64 {
        sqlx::query_scalar(
            "insert into outbox (aggregate_id, event_type, prev_seq, payload)
             values ($1, 'OrderCreatd', null, $2) returning seq",
        )
        .bind(id)
        .bind(crate::orders::payload(
            id,
            OrderStatus::Pending,
            OrderStatus::Unspecified,
        ))
        .fetch_one(&self.orders_pool)
        .await
        .expect("insert")
    }

    /// Waits (`what`: the moment, for the failure message) until the order's mails are those of
    /// `seqs`, in this order, and all sent.
    pub async fn wait_until_sent(&self, what: &str, order_id: i64, seqs: &[i64]) {
        let want: Vec<(i64, bool)> = seqs.iter().map(|&seq| (seq, true)).collect();
        crate::wait_until(what, || async { self.mails(order_id).await == want }).await;
    }

    /// The order's mails in queue order: (seq, sent).
    pub async fn mails(&self, order_id: i64) -> Vec<(i64, bool)> {
        sqlx::query_as(
            "select seq, sent_at is not null from mails where order_id = $1 order by position",
        )
        .bind(order_id)
        .fetch_all(&self.mail_pool)
        .await
        .expect("mails")
    }
}
