//! Test harness: a real mail-svc on port 0 against a fresh database and unique RabbitMQ names, a
//! publisher that sends events exactly as relay-svc does (and the hand-published JSON shape), a dead-letter
//! reader, and a tiny real SMTP server that records what it receives.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use lapin::{
    BasicProperties, Channel, Connection, ConnectionProperties,
    options::{BasicAckOptions, BasicGetOptions, BasicPublishOptions},
    types::{AMQPValue, FieldTable, LongString},
};
use mail_svc::{App, Config, config::MailerKind};
use outbox_proto::{
    mail::{
        admin::v1::mail_admin_client::MailAdminClient,
        v1::{
            GetStatusRequest, ListMailsRequest, Mail, MailStatus,
            mail_service_client::MailServiceClient,
        },
    },
    orders::{
        events::v1::{ORDER_CREATED, ORDER_STATUS_CHANGED, OrderEvent, OrderPayload},
        v1::OrderStatus,
    },
};
use prost::Message;
use sqlx::PgPool;
use tokio::{
    io::{AsyncBufReadExt, AsyncWriteExt, BufReader},
    net::TcpListener,
};
use tokio_util::sync::CancellationToken;
use tonic::transport::Channel as GrpcChannel;

/// Names used by one test: its own database, exchange and queue, removed with the names (the
/// test's end, passing or failing) or by [`Names::cleanup`].
#[derive(Debug)]
pub struct Names {
    pub database_url: String,
    pub exchange: String,
    pub queue: String,
    made: outbox_testkit::Made,
}

impl Names {
    pub fn new() -> Self {
        let names = Self {
            database_url: outbox_testkit::fresh_database_url("mail_test"),
            exchange: outbox_testkit::unique("mail_test_ex"),
            queue: outbox_testkit::unique("mail_test_q"),
            made: outbox_testkit::Made::new(),
        };
        names
            .made
            .database(&names.database_url)
            .mail_topology(&names.exchange, &names.queue);
        names
    }

    pub fn dead_letter_queue(&self) -> String {
        format!("{}.dead-letter", self.queue)
    }

    /// Declares mail-svc's topology for these names before any instance runs (so that the
    /// queue fills before one consumes), on a connection returned for more work.
    pub async fn declare(&self) -> (Connection, Channel) {
        let conn =
            Connection::connect(&outbox_testkit::amqp_url(), ConnectionProperties::default())
                .await
                .expect("connect");
        let ch = conn.create_channel().await.expect("channel");
        mail_svc::amqp::topology(&self.exchange, &self.queue)
            .declare(&ch)
            .await
            .expect("declare");
        (conn, ch)
    }

    /// Removes the test's queues, exchanges and database now (the services using them
    /// stopped first).
    pub async fn cleanup(&self) {
        self.made.remove().await.expect("the test's names removed");
    }
}

/// mail-svc's shipped defaults, with the test's database, broker, exchange and queue, port 0 and
/// a smaller pool.
pub fn config(names: &Names) -> Config {
    let mut cfg = <Config as clap::Parser>::parse_from(["mail-svc"]);
    cfg.database_url = names.database_url.clone().into();
    cfg.db_max_connections = 8;
    cfg.amqp_url = outbox_testkit::amqp_url().into();
    cfg.amqp_exchange = names.exchange.clone();
    cfg.mail_queue = names.queue.clone();
    cfg.prefetch = 64;
    cfg.consumer_concurrency = 8;
    cfg.mailer_concurrency = 2;
    cfg.smtp_url = "smtp://127.0.0.1:1".into();
    cfg.server = outbox_kit::settings::ServerSettings::on_free_ports();
    cfg
}

/// [`config`] with MAILER=smtp, sending to the plain SMTP server at `server`.
pub fn smtp_config(names: &Names, server: std::net::SocketAddr) -> Config {
    let mut cfg = config(names);
    cfg.mailer = MailerKind::Smtp;
    cfg.smtp_url = format!("smtp://{server}").into();
    cfg
}

pub struct TestMail {
    pub client: MailServiceClient<GrpcChannel>,
    pub pool: PgPool,
    pub grpc_addr: std::net::SocketAddr,
    pub metrics_addr: std::net::SocketAddr,
    pub consuming: tokio::sync::watch::Receiver<bool>,
    pub shutdown: CancellationToken,
    pub running: outbox_testkit::Running,
}

/// Starts mail-svc and waits until its consumer is consuming (so the queue exists and is bound).
pub async fn start(cfg: Config) -> TestMail {
    outbox_testkit::init_tracing();
    let shutdown = CancellationToken::new();
    let app = App::build(cfg, shutdown.clone())
        .await
        .expect("mail-svc starts");
    let grpc_addr = app.grpc_addr();
    let metrics_addr = app.metrics_addr();
    let pool = app.pool().clone();
    let mut consuming = app.consuming();
    let running = outbox_testkit::Running::spawn(grpc_addr, shutdown.clone(), app.run());
    tokio::time::timeout(Duration::from_secs(60), consuming.wait_for(|c| *c))
        .await
        .expect("consumer starts within 60s")
        .expect("consumer state");
    let client = MailServiceClient::connect(format!("http://{grpc_addr}"))
        .await
        .expect("client connects");
    TestMail {
        client,
        pool,
        grpc_addr,
        metrics_addr,
        consuming,
        shutdown,
        running,
    }
}

impl TestMail {
    /// Waits until `total` events are processed and `duplicates` deliveries skipped, none held,
    /// and checks that none was dead-lettered.
    pub async fn handled_all(&self, total: usize, duplicates: usize) -> MailStatus {
        let status = eventually("every delivery handled", 240, || async {
            let s = self.status().await;
            (s.processed as usize == total && s.skipped as usize == duplicates && s.held == 0)
                .then_some(s)
        })
        .await;
        assert_eq!(status.dead_lettered, 0);
        status
    }

    /// A client of the service's admin API (`mail.admin.v1`).
    pub async fn admin(&self) -> MailAdminClient<GrpcChannel> {
        MailAdminClient::new(
            GrpcChannel::from_shared(format!("http://{}", self.grpc_addr))
                .expect("uri")
                .connect()
                .await
                .expect("admin connects"),
        )
    }

    pub async fn mails(&self, order_id: i64) -> Vec<Mail> {
        self.client
            .clone()
            .list_mails(ListMailsRequest { order_id })
            .await
            .expect("ListMails")
            .into_inner()
            .mails
    }

    /// Order `order_id`'s mails once `done` holds for them; `what` names the wait when it
    /// never does.
    pub async fn mails_once(
        &self,
        what: &str,
        order_id: i64,
        done: impl Fn(&[Mail]) -> bool,
    ) -> Vec<Mail> {
        eventually(what, 60, || async {
            let m = self.mails(order_id).await;
            done(&m).then_some(m)
        })
        .await
    }

    /// The service's status once `done` holds for it; `what` names the wait when it never does.
    pub async fn status_once(&self, what: &str, done: impl Fn(&MailStatus) -> bool) -> MailStatus {
        eventually(what, 60, || async {
            let s = self.status().await;
            done(&s).then_some(s)
        })
        .await
    }

    pub async fn status(&self) -> MailStatus {
        self.client
            .clone()
            .get_status(GetStatusRequest {})
            .await
            .expect("GetStatus")
            .into_inner()
    }

    /// The seqs of the order's mails, in ListMails order.
    pub async fn seqs(&self, order_id: i64) -> Vec<u64> {
        self.mails(order_id).await.iter().map(|m| m.seq).collect()
    }

    pub async fn stop(mut self) {
        self.running.stop().await.expect("clean stop");
    }
}

/// The body of the service's `GET /metrics` answer.
pub async fn metrics_text(addr: std::net::SocketAddr) -> String {
    outbox_testkit::scrape(addr).await.expect("GET /metrics")
}

pub use outbox_testkit::eventually;

pub fn created(seq: u64, order: i64, email: &str) -> OrderEvent {
    OrderEvent {
        seq,
        r#type: ORDER_CREATED.into(),
        aggregate_id: order,
        prev_seq: None,
        payload: Some(OrderPayload {
            id: order,
            status: OrderStatus::Pending as i32,
            customer_email: email.into(),
            previous_status: 0,
        }),
        ts_ms: 1_792_076_127_301,
    }
}

pub fn changed(seq: u64, prev: u64, order: i64, status: OrderStatus, email: &str) -> OrderEvent {
    OrderEvent {
        seq,
        r#type: ORDER_STATUS_CHANGED.into(),
        aggregate_id: order,
        prev_seq: Some(prev),
        payload: Some(OrderPayload {
            id: order,
            status: status as i32,
            customer_email: email.into(),
            previous_status: 0,
        }),
        ts_ms: 1_792_076_127_301,
    }
}

/// Publishes to the test's exchange as relay-svc does, with publisher confirms.
pub struct Publisher {
    /// Held open for as long as the publisher lives: its channel is one of this connection's.
    _conn: Connection,
    pub ch: Channel,
    pub exchange: String,
}

impl Publisher {
    pub async fn connect(exchange: &str) -> Self {
        let (conn, ch) = outbox_testkit::confirming_channel().await;
        outbox_relay::declare_exchange(&ch, exchange)
            .await
            .expect("declare exchange");
        Self {
            _conn: conn,
            ch,
            exchange: exchange.to_owned(),
        }
    }

    /// The properties relay-svc sets.
    pub fn relay_properties(ev: &OrderEvent, traceparent: Option<&str>) -> BasicProperties {
        let mut headers = FieldTable::default();
        headers.insert(
            "aggregate_id".into(),
            AMQPValue::LongLongInt(ev.aggregate_id),
        );
        if let Some(p) = ev.prev_seq {
            headers.insert("prev_seq".into(), AMQPValue::LongLongInt(p as i64));
        }
        if let Some(tp) = traceparent {
            headers.insert(
                "traceparent".into(),
                AMQPValue::LongString(LongString::from(tp)),
            );
        }
        BasicProperties::default()
            .with_content_type("application/x-protobuf".into())
            .with_message_id(ev.seq.to_string().into())
            .with_type(ev.r#type.as_str().into())
            .with_delivery_mode(2)
            .with_headers(headers)
    }

    /// The properties relay-svc sets for an event of a sharded orders-svc: `shard` named.
    pub fn sharded_properties(ev: &OrderEvent, shard: &str) -> BasicProperties {
        let props = Self::relay_properties(ev, None);
        let mut headers = props.headers().clone().unwrap_or_default();
        headers.insert("shard".into(), AMQPValue::LongString(shard.into()));
        props
            .with_message_id(format!("shard-{shard}-{}", ev.seq).into())
            .with_headers(headers)
    }

    /// Publishes `ev` as an event of shard `shard` and waits for the confirm.
    pub async fn sharded(&self, ev: &OrderEvent, shard: &str) {
        let key = Self::routing_key(&ev.r#type);
        self.raw(
            key,
            &ev.encode_to_vec(),
            Self::sharded_properties(ev, shard),
        )
        .await;
    }

    pub fn routing_key(event_type: &str) -> &'static str {
        if event_type == ORDER_CREATED {
            "order.created"
        } else {
            "order.status_changed"
        }
    }

    /// Publishes without waiting for the confirm (call `confirm_all` after a batch).
    pub async fn send_raw(&self, routing_key: &str, body: &[u8], props: BasicProperties) {
        let confirm = self
            .ch
            .basic_publish(
                self.exchange.as_str().into(),
                routing_key.into(),
                BasicPublishOptions {
                    mandatory: true,
                    ..BasicPublishOptions::default()
                },
                body,
                props,
            )
            .await
            .expect("publish");
        drop(confirm);
    }

    pub async fn confirm_all(&self) {
        let returned = tokio::time::timeout(Duration::from_secs(60), self.ch.wait_for_confirms())
            .await
            .expect("the broker confirms within 60 s")
            .expect("confirms");
        assert!(
            returned.is_empty(),
            "unroutable messages: {}",
            returned.len()
        );
    }

    pub async fn raw(&self, routing_key: &str, body: &[u8], props: BasicProperties) {
        self.send_raw(routing_key, body, props).await;
        self.confirm_all().await;
    }

    pub async fn proto(&self, ev: &OrderEvent) {
        self.proto_traced(ev, None).await
    }

    /// Publishes `events` back to back, in this order, then waits for the broker's confirms.
    pub async fn pipelined(&self, events: &[OrderEvent]) {
        for ev in events {
            self.send_raw(
                Self::routing_key(&ev.r#type),
                &ev.encode_to_vec(),
                Self::relay_properties(ev, None),
            )
            .await;
        }
        self.confirm_all().await;
    }

    /// Publishes `events` one after another, in this order.
    pub async fn protos(&self, events: &[OrderEvent]) {
        for ev in events {
            self.proto(ev).await;
        }
    }

    pub async fn proto_traced(&self, ev: &OrderEvent, traceparent: Option<&str>) {
        self.raw(
            Self::routing_key(&ev.r#type),
            &ev.encode_to_vec(),
            Self::relay_properties(ev, traceparent),
        )
        .await
    }

    pub async fn json(&self, routing_key: &str, body: &str) {
        self.raw(
            routing_key,
            body.as_bytes(),
            BasicProperties::default()
                .with_content_type("application/json".into())
                .with_delivery_mode(2),
        )
        .await
    }
}

/// A message taken from the dead-letter queue.
#[derive(Debug, Clone)]
pub struct DeadLetter {
    pub message_id: Option<String>,
    pub reason: String,
    pub body: Vec<u8>,
}

/// Takes (and acks) everything in `queue` until `n` messages were read, within 60 s.
pub async fn take_dead_letters(queue: &str, n: usize) -> Vec<DeadLetter> {
    let conn = Connection::connect(&outbox_testkit::amqp_url(), ConnectionProperties::default())
        .await
        .expect("connect");
    let ch = conn.create_channel().await.expect("channel");
    let mut out = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while out.len() < n {
        match ch
            .basic_get(queue.into(), BasicGetOptions::default())
            .await
            .expect("basic.get")
        {
            Some(msg) => {
                let props = &msg.delivery.properties;
                let reason = match props
                    .headers()
                    .as_ref()
                    .and_then(|h| h.inner().get("x-death-reason"))
                {
                    Some(AMQPValue::LongString(s)) => {
                        String::from_utf8_lossy(s.as_bytes()).into_owned()
                    }
                    other => panic!("dead letter without a reason header: {other:?}"),
                };
                out.push(DeadLetter {
                    message_id: props.message_id().as_ref().map(|m| m.to_string()),
                    reason,
                    body: msg.delivery.data.clone(),
                });
                msg.delivery
                    .ack(BasicAckOptions::default())
                    .await
                    .expect("ack");
            }
            None => {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "only {} of {n} dead letters arrived: {out:?}",
                    out.len()
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    outbox_support::amqp::close(&conn, "bye").await;
    out
}

/// One message received by the sink.
#[derive(Debug, Clone)]
pub struct SinkMail {
    pub to: Vec<String>,
    pub data: String,
}

impl SinkMail {
    /// A header's value (unfolded headers only; enough for Message-ID).
    pub fn header(&self, name: &str) -> Option<String> {
        self.data
            .split("\r\n")
            .take_while(|l| !l.is_empty())
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
            })
    }
}

/// A tiny real SMTP server (EHLO/HELO, MAIL, RCPT, DATA, RSET, NOOP, QUIT) that records every
/// message it accepts, and rejects recipients containing "bounce" with a permanent 550.
#[derive(Debug, Clone)]
pub struct SmtpSink {
    pub addr: std::net::SocketAddr,
    pub received: Arc<Mutex<Vec<SinkMail>>>,
}

impl SmtpSink {
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind sink");
        let addr = listener.local_addr().expect("addr");
        let received = Arc::new(Mutex::new(Vec::new()));
        let store = received.clone();
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let store = store.clone();
                tokio::spawn(async move {
                    let _ = session(sock, store).await;
                });
            }
        });
        Self { addr, received }
    }

    pub fn mails(&self) -> Vec<SinkMail> {
        self.received.lock().expect("lock").clone()
    }
}

async fn session(
    sock: tokio::net::TcpStream,
    store: Arc<Mutex<Vec<SinkMail>>>,
) -> std::io::Result<()> {
    let (read, mut write) = sock.into_split();
    let mut lines = BufReader::new(read);
    write.write_all(b"220 sink.test ESMTP\r\n").await?;
    let mut to = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        if lines.read_line(&mut line).await? == 0 {
            return Ok(());
        }
        let cmd = line.trim_end().to_owned();
        let upper = cmd.to_ascii_uppercase();
        let reply: &[u8] = if upper.starts_with("EHLO") {
            b"250-sink.test\r\n250 8BITMIME\r\n"
        } else if upper.starts_with("HELO") || upper.starts_with("NOOP") {
            b"250 OK\r\n"
        } else if upper.starts_with("MAIL FROM:") {
            to.clear();
            b"250 OK\r\n"
        } else if upper.starts_with("RCPT TO:") && upper.contains("BOUNCE") {
            // A mailbox that does not exist: a permanent rejection.
            b"550 5.1.1 no such user\r\n"
        } else if upper.starts_with("RCPT TO:") {
            to.push(cmd[8..].trim().to_owned());
            b"250 OK\r\n"
        } else if upper.starts_with("RSET") {
            to.clear();
            b"250 OK\r\n"
        } else if upper == "DATA" {
            write.write_all(b"354 end with <CRLF>.<CRLF>\r\n").await?;
            let mut data = String::new();
            loop {
                line.clear();
                if lines.read_line(&mut line).await? == 0 {
                    return Ok(());
                }
                if line == ".\r\n" {
                    break;
                }
                let l = line.strip_prefix('.').unwrap_or(&line);
                data.push_str(l);
            }
            let queued = {
                let mut store = store.lock().expect("lock");
                store.push(SinkMail {
                    to: to.clone(),
                    data,
                });
                // Each mail's own receipt, as a real server names the queue entry.
                format!("250 OK queued as {}\r\n", store.len())
            };
            write.write_all(queued.as_bytes()).await?;
            continue;
        } else if upper.starts_with("QUIT") {
            write.write_all(b"221 bye\r\n").await?;
            return Ok(());
        } else {
            b"502 command not implemented\r\n"
        };
        write.write_all(reply).await?;
    }
}

/// The value of an unlabelled metric on a `/metrics` endpoint, if exported. The recorder is
/// process-wide: tests of one binary that read the same metric must not overlap.
pub async fn metric(addr: std::net::SocketAddr, name: &str) -> Option<f64> {
    metrics_text(addr).await.lines().find_map(|l| {
        let v = l.strip_prefix(name)?.strip_prefix(' ')?;
        v.trim().parse().ok()
    })
}
