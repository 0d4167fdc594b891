//! The real stack in-process (orders-svc, relay-svc, mail-svc on port 0, fresh databases, unique
//! RabbitMQ names) and a runner for the real `outboxctl` binary against it.

use std::{future::Future, net::SocketAddr, time::Duration};

use clap::Parser as _;
use lapin::{
    Connection, ConnectionProperties,
    options::{ExchangeDeleteOptions, QueueDeleteOptions},
};
use outbox_kit::telemetry::LogFormat;
use outbox_proto::orders::v1::{OrderStatus, order_service_client::OrderServiceClient};
use serde_json::Value;
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;

pub const TOKEN: &str = "test-admin-token-0123456789";

/// Test names: prefixes the sweep in deploy/test.sh knows (`relay…`, `mail…`).
#[derive(Debug, Clone)]
pub struct Names {
    pub orders_db: String,
    pub mail_db: String,
    pub exchange: String,
    pub queue: String,
}

impl Names {
    pub fn new() -> Self {
        Self {
            orders_db: outbox_testkit::fresh_database_url("relay_ctl_orders"),
            mail_db: outbox_testkit::fresh_database_url("mail_ctl"),
            exchange: outbox_testkit::unique("mail_ctl_ex"),
            queue: outbox_testkit::unique("mail_ctl_q"),
        }
    }

    /// Removes the queues, exchanges and databases (called by a test that passed).
    pub async fn cleanup(&self) {
        let Ok(conn) =
            Connection::connect(&outbox_testkit::amqp_url(), ConnectionProperties::default()).await
        else {
            return;
        };
        if let Ok(ch) = conn.create_channel().await {
            for q in [self.queue.clone(), format!("{}.dead-letter", self.queue)] {
                let _ = ch
                    .queue_delete(q.as_str().into(), QueueDeleteOptions::default())
                    .await;
            }
            for x in [
                self.exchange.clone(),
                format!("{}.dlx", self.queue),
                format!("{}.redrive", self.queue),
            ] {
                let _ = ch
                    .exchange_delete(x.as_str().into(), ExchangeDeleteOptions::default())
                    .await;
            }
        }
        let _ = conn.close(200, "bye".into()).await;
        for url in [&self.orders_db, &self.mail_db] {
            let _ = outbox_testkit::drop_database(outbox_testkit::database_name(url)).await;
        }
    }
}

/// One running service: its address, and how to stop it.
pub struct Running {
    pub grpc_addr: SocketAddr,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Running {
    /// Stops it and waits for it, keeping the value (stopping it again does nothing).
    pub async fn stop_in_place(&mut self) {
        self.shutdown.cancel();
        if !self.task.is_finished() {
            let _ = tokio::time::timeout(Duration::from_secs(30), &mut self.task).await;
        }
    }

    pub async fn stop(self) {
        self.shutdown.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(30), self.task).await;
    }
}

pub struct Stack {
    pub names: Names,
    pub orders: Running,
    pub orders_client: OrderServiceClient<tonic::transport::Channel>,
    pub orders_pool: PgPool,
    pub relay: Running,
    pub mail: Running,
    pub mail_pool: PgPool,
}

pub async fn start_orders(
    names: &Names,
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
            &format!("--database-url={}", names.orders_db),
        ])
        .expect("orders config"),
        shutdown.clone(),
    )
    .await
    .expect("orders-svc starts");
    let grpc_addr = app.grpc_addr();
    let pool = app.pool().clone();
    let task = tokio::spawn(app.run());
    let client = OrderServiceClient::connect(format!("http://{grpc_addr}"))
        .await
        .expect("orders client");
    (
        Running {
            grpc_addr,
            shutdown,
            task,
        },
        pool,
        client,
    )
}

/// relay-svc, with the admin token when `token`.
pub async fn start_relay(names: &Names, token: Option<&str>) -> Running {
    let mut args = vec![
        "relay-svc".to_owned(),
        "--grpc-addr=127.0.0.1:0".into(),
        "--metrics-addr=127.0.0.1:0".into(),
        format!("--database-url={}", names.orders_db),
        format!("--amqp-url={}", outbox_testkit::amqp_url()),
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
    let grpc_addr = app.grpc_addr();
    let task = tokio::spawn(app.run());
    Running {
        grpc_addr,
        shutdown,
        task,
    }
}

/// mail-svc (log mailer), trusting `trusted` publishers, with the admin token when `token`;
/// returns once it consumes.
pub async fn start_mail(names: &Names, trusted: &str, token: Option<&str>) -> (Running, PgPool) {
    let mut args = vec![
        "mail-svc".to_owned(),
        "--grpc-addr=127.0.0.1:0".into(),
        "--metrics-addr=127.0.0.1:0".into(),
        format!("--database-url={}", names.mail_db),
        format!("--amqp-url={}", outbox_testkit::amqp_url()),
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
    let grpc_addr = app.grpc_addr();
    let pool = app.pool().clone();
    let mut consuming = app.consuming();
    let task = tokio::spawn(app.run());
    tokio::time::timeout(Duration::from_secs(60), consuming.wait_for(|c| *c))
        .await
        .expect("mail-svc consumes within 60s")
        .expect("consumer state");
    (
        Running {
            grpc_addr,
            shutdown,
            task,
        },
        pool,
    )
}

impl Stack {
    /// The whole stack; relay and mail with the admin token.
    pub async fn start() -> Self {
        let names = Names::new();
        let (orders, orders_pool, orders_client) = start_orders(&names).await;
        let relay = start_relay(&names, Some(TOKEN)).await;
        let (mail, mail_pool) = start_mail(&names, "guest", Some(TOKEN)).await;
        Self {
            names,
            orders,
            orders_client,
            orders_pool,
            relay,
            mail,
            mail_pool,
        }
    }

    /// Stops mail-svc and starts it again trusting `trusted` (a deploy with another setting).
    pub async fn redeploy_mail(&mut self, trusted: &str) {
        let (mail, pool) = start_mail(&self.names, trusted, Some(TOKEN)).await;
        let old = std::mem::replace(&mut self.mail, mail);
        self.mail_pool = pool;
        old.stop().await;
    }

    /// Stops mail-svc; its queue keeps what the relay publishes meanwhile.
    pub async fn stop_mail(&mut self) {
        self.mail.stop_in_place().await;
    }

    /// Stops relay-svc: what orders-svc writes meanwhile stays in the outbox.
    pub async fn stop_relay(&mut self) {
        self.relay.stop_in_place().await;
    }

    /// Removes the test's queues, exchanges and databases, mail-svc stopped first (a running one
    /// declares its queues again once they are deleted).
    pub async fn cleanup(mut self) {
        self.stop_mail().await;
        self.stop_relay().await;
        self.names.cleanup().await;
    }

    /// Starts mail-svc again (trusting `guest`) after [`Stack::stop_mail`].
    pub async fn start_mail_again(&mut self) {
        let (mail, pool) = start_mail(&self.names, "guest", Some(TOKEN)).await;
        self.mail = mail;
        self.mail_pool = pool;
    }

    pub fn ctl(&self) -> Ctl {
        Ctl {
            orders: self.orders.grpc_addr.to_string(),
            relay: self.relay.grpc_addr.to_string(),
            mail: self.mail.grpc_addr.to_string(),
            orders_db: self.names.orders_db.clone(),
            mail_db: self.names.mail_db.clone(),
        }
    }

    /// Upserts through gRPC; the seq of the appended event.
    pub async fn upsert(&self, id: i64, status: OrderStatus) -> i64 {
        let seq = outbox_testkit::orders::upsert(&self.orders_client, id, status).await;
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
        .bind(outbox_testkit::orders::payload(
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
        wait_until(what, || async { self.mails(order_id).await == want }).await;
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

/// The addresses the binary is pointed at.
#[derive(Debug, Clone)]
pub struct Ctl {
    pub orders: String,
    pub relay: String,
    pub mail: String,
    /// The databases the audit and the trace read.
    pub orders_db: String,
    pub mail_db: String,
}

/// What one run of the binary gave.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }

    #[track_caller]
    pub fn ok(self) -> Self {
        assert_eq!(self.code, 0, "outboxctl failed: {self:?}");
        self
    }
}

impl Ctl {
    /// Runs the change `outboxctl <args> --reason <reason>` with the admin token.
    pub async fn change(&self, args: &[&str], reason: &str) -> Run {
        let args: Vec<&str> = args.iter().copied().chain(["--reason", reason]).collect();
        self.run(Some(TOKEN), &args).await
    }

    /// Runs the change, asserting that it succeeded and said `says`.
    pub async fn change_says(&self, args: &[&str], reason: &str, says: &str) -> Run {
        let run = self.change(args, reason).await.ok();
        assert!(run.stdout.contains(says), "{run:?}");
        run
    }

    /// Runs the change `outboxctl --json <args> --reason <reason>`, asserting that it
    /// succeeded; its JSON answer.
    pub async fn change_json(&self, args: &[&str], reason: &str) -> Value {
        let args: Vec<&str> = ["--json"].into_iter().chain(args.iter().copied()).collect();
        self.change(&args, reason).await.ok().json()
    }

    /// Runs `outboxctl --json <args>` without the token, asserting that it succeeded; its JSON
    /// answer.
    pub async fn json(&self, args: &[&str]) -> Value {
        let args: Vec<&str> = ["--json"].into_iter().chain(args.iter().copied()).collect();
        self.run(None, &args).await.ok().json()
    }

    /// [`Ctl::json`] for a wait: `None` while the command fails.
    pub async fn try_json(&self, args: &[&str]) -> Option<Value> {
        let args: Vec<&str> = ["--json"].into_iter().chain(args.iter().copied()).collect();
        let run = self.run(None, &args).await;
        (run.code == 0).then(|| run.json())
    }

    /// Runs `outboxctl <args>` with the operator `test-operator` and, when given, the token.
    pub async fn run(&self, token: Option<&str>, args: &[&str]) -> Run {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_outboxctl"));
        cmd.env_remove("OUTBOXCTL_ADMIN_TOKEN")
            .env("OUTBOXCTL_ORDERS_ADDR", &self.orders)
            .env("OUTBOXCTL_RELAY_ADDR", &self.relay)
            .env("OUTBOXCTL_MAIL_ADDR", &self.mail)
            .env("OUTBOXCTL_ORDERS_DB", &self.orders_db)
            .env("OUTBOXCTL_MAIL_DB", &self.mail_db)
            .arg("--operator=test-operator")
            .args(args);
        if let Some(t) = token {
            cmd.env("OUTBOXCTL_ADMIN_TOKEN", t);
        }
        let out = cmd.output().await.expect("outboxctl runs");
        let run = Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        eprintln!(
            "$ outboxctl {}\n{}{}",
            args.join(" "),
            run.stdout,
            run.stderr
        );
        run
    }
}

/// Polls `check` until it is true (30 s at most).
pub async fn wait_until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The audit rows: (action, ids, reason, operator, detail).
pub async fn audit(pool: &PgPool) -> Vec<(String, Vec<i64>, String, Option<String>, Value)> {
    sqlx::query_as("select action, ids, reason, operator, detail from admin_actions order by id")
        .fetch_all(pool)
        .await
        .expect("admin_actions")
}

/// Empties `queue` (an operator's mistake); how many messages it held.
pub async fn purge(queue: &str) -> u32 {
    let conn = Connection::connect(&outbox_testkit::amqp_url(), ConnectionProperties::default())
        .await
        .expect("broker");
    let ch = conn.create_channel().await.expect("channel");
    let purged = ch
        .queue_purge(queue.into(), lapin::options::QueuePurgeOptions::default())
        .await
        .expect("purge");
    let _ = conn.close(200, "purged".into()).await;
    purged
}
