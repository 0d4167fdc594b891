//! The real stack in-process (orders-svc, relay-svc, mail-svc on port 0, fresh databases, unique
//! RabbitMQ names), the console in-process against it, and a browser-like HTTP client (a session
//! cookie, `Origin` on posts, the forms' tokens read from the pages).

use std::{future::Future, net::SocketAddr, path::PathBuf, time::Duration};

use clap::Parser as _;
use lapin::{
    Connection, ConnectionProperties,
    options::{ExchangeDeleteOptions, QueueDeleteOptions},
};
use outbox_kit::telemetry::LogFormat;
use outbox_proto::orders::v1::{OrderStatus, order_service_client::OrderServiceClient};
use outbox_testkit as testing;
use reqwest::{StatusCode, header};
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
            orders_db: testing::fresh_database_url("relay_console_orders"),
            mail_db: testing::fresh_database_url("mail_console"),
            exchange: testing::unique("mail_console_ex"),
            queue: testing::unique("mail_console_q"),
        }
    }

    /// Removes the queues, exchanges and databases (called by a test that passed).
    pub async fn cleanup(&self) {
        let Ok(conn) =
            Connection::connect(&testing::amqp_url(), ConnectionProperties::default()).await
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
            let _ = testing::drop_database(testing::database_name(url)).await;
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
        format!("--amqp-url={}", testing::amqp_url()),
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
        format!("--amqp-url={}", testing::amqp_url()),
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

    /// Upserts through gRPC; the seq of the appended event.
    pub async fn upsert(&self, id: i64, status: OrderStatus) -> i64 {
        let seq = testing::orders::upsert(&self.orders_client, id, status).await;
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
        .bind(testing::orders::payload(
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

/// Empties `queue` (an operator's mistake); how many messages it held.
pub async fn purge(queue: &str) -> u32 {
    let conn = Connection::connect(&testing::amqp_url(), ConnectionProperties::default())
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

/// The operator's token (name `alice`) and the viewer's (name `victor`).
pub const OPERATOR: &str = "operator-token-0123456789abcdef";
pub const VIEWER: &str = "viewer-token-0123456789abcdef";

/// The console, running in-process against a stack.
pub struct Console {
    pub addr: SocketAddr,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
    files: Vec<PathBuf>,
}

impl Console {
    /// The console against `stack`, with the audit's grace `grace`, a replay and redrive rate
    /// fast enough for a test, and `extra` flags.
    pub async fn start(stack: &Stack, grace: &str, extra: &[&str]) -> Self {
        let dir = std::env::temp_dir();
        let viewers = dir.join(testing::unique("console_viewers"));
        let operators = dir.join(testing::unique("console_operators"));
        std::fs::write(&viewers, format!("victor {VIEWER}\n")).expect("viewer tokens");
        std::fs::write(&operators, format!("alice {OPERATOR}\n")).expect("operator tokens");
        let mut args: Vec<String> = vec![
            "outbox-console".into(),
            "--addr=127.0.0.1:0".into(),
            format!("--viewer-tokens-file={}", viewers.display()),
            format!("--operator-tokens-file={}", operators.display()),
            format!("--orders-db={}", stack.names.orders_db),
            format!("--mail-db={}", stack.names.mail_db),
            format!("--orders-addr={}", stack.orders.grpc_addr),
            format!("--relay-addr={}", stack.relay.grpc_addr),
            format!("--mail-addr={}", stack.mail.grpc_addr),
            format!("--admin-token={TOKEN}"),
            format!("--replay-queue={}", stack.names.queue),
            format!("--audit-grace={grace}"),
            "--refresh=300ms".into(),
            "--replay-rate=20".into(),
            "--redrive-rate=20".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let cfg = outbox_console::config::Config::try_parse_from(args).expect("console config");
        let shutdown = CancellationToken::new();
        let app = outbox_console::App::build(cfg, shutdown.clone())
            .await
            .expect("the console starts");
        let addr = app.addr();
        let task = tokio::spawn(app.run());
        Self {
            addr,
            shutdown,
            task,
            files: vec![viewers, operators],
        }
    }

    /// A browser without a session.
    pub fn browser(&self) -> Browser {
        Browser {
            base: format!("http://{}", self.addr),
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("client"),
            cookie: None,
        }
    }

    /// A browser signed in with `token`.
    pub async fn signed_in(&self, token: &str) -> Browser {
        let mut b = self.browser();
        let r = b.post("/sign-in", &[("token", token)]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "sign-in: {}", r.body);
        let cookie = r.cookie.expect("a session cookie");
        b.cookie = Some(cookie.split(';').next().expect("name=value").to_owned());
        b
    }

    pub async fn stop(self) {
        self.shutdown.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(10), self.task).await;
        for f in self.files {
            let _ = std::fs::remove_file(f);
        }
    }
}

/// An answer: status, body, the `Set-Cookie` and `Location` headers.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub body: String,
    pub cookie: Option<String>,
    pub location: Option<String>,
}

/// What a browser does: keeps the session cookie, sends `Origin` with a post.
#[derive(Debug, Clone)]
pub struct Browser {
    pub base: String,
    client: reqwest::Client,
    pub cookie: Option<String>,
}

impl Browser {
    pub async fn get(&self, path: &str) -> Answer {
        let mut r = self.client.get(format!("{}{path}", self.base));
        if let Some(c) = &self.cookie {
            r = r.header(header::COOKIE, c);
        }
        answer(r.send().await.expect("GET")).await
    }

    /// A form post from the console's own page.
    pub async fn post(&self, path: &str, fields: &[(&str, &str)]) -> Answer {
        let origin = self.base.clone();
        self.post_from(path, fields, Some(&origin)).await
    }

    /// A form post with `Origin: origin` (none: no Origin header).
    pub async fn post_from(
        &self,
        path: &str,
        fields: &[(&str, &str)],
        origin: Option<&str>,
    ) -> Answer {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(fields)
            .finish();
        let mut r = self
            .client
            .post(format!("{}{path}", self.base))
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(body);
        if let Some(o) = origin {
            r = r.header(header::ORIGIN, o);
        }
        if let Some(c) = &self.cookie {
            r = r.header(header::COOKIE, c);
        }
        answer(r.send().await.expect("POST")).await
    }

    /// GETs `path`, asserting a 200; the page.
    pub async fn page(&self, path: &str) -> String {
        let a = self.get(path).await;
        assert_eq!(a.status, StatusCode::OK, "GET {path}: {}", a.body);
        a.body
    }
}

async fn answer(r: reqwest::Response) -> Answer {
    let status = r.status();
    let h = |name| {
        r.headers()
            .get(name)
            .and_then(|v: &header::HeaderValue| v.to_str().ok())
            .map(str::to_owned)
    };
    let cookie = h(header::SET_COOKIE);
    let location = h(header::LOCATION);
    Answer {
        status,
        body: r.text().await.expect("body"),
        cookie,
        location,
    }
}

/// The per-form token of the form posting to `action` in `page`.
#[track_caller]
pub fn form_token(page: &str, action: &str) -> String {
    let at = page
        .find(&format!("action=\"{action}\""))
        .unwrap_or_else(|| panic!("no form posting to {action} in the page: {page}"));
    let rest = &page[at..];
    let marker = "name=\"csrf\" value=\"";
    let v = rest.find(marker).expect("the form's token") + marker.len();
    rest[v..v + 64].to_owned()
}

/// Every admin_actions row: (action, ids, reason, operator).
pub async fn actions(pool: &PgPool) -> Vec<(String, Vec<i64>, String, Option<String>)> {
    sqlx::query_as("select action, ids, reason, operator from admin_actions order by id")
        .fetch_all(pool)
        .await
        .expect("admin_actions")
}
