//! Runs the real service binaries as child processes against fresh databases and unique
//! RabbitMQ names, and lets a test or the chaos checker kill, restart and query them.

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::atomic::{AtomicBool, Ordering},
    sync::{Arc, OnceLock},
    time::{Duration, Instant},
};

use anyhow::{Context, bail};
use outbox_proto::{
    mail::v1::{ListMailsRequest, Mail, mail_service_client::MailServiceClient},
    orders::v1::{OrderStatus, UpsertOrderRequest, order_service_client::OrderServiceClient},
    relay::v1::relay_service_client::RelayServiceClient,
};
use outbox_testkit::rabbit_node::RabbitNode;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tonic::transport::Channel;

/// Where the service binaries are: the `target/<profile>` directory of the running executable
/// (tests run from `target/<profile>/deps`, workspace binaries from `target/<profile>`).
#[derive(Debug, Clone)]
pub struct Binaries {
    dir: PathBuf,
}

impl Binaries {
    /// The directory of the running executable's profile (`target/debug` or `target/release`).
    pub fn locate() -> anyhow::Result<Self> {
        let exe = std::env::current_exe().context("locating the running executable")?;
        let mut dir = exe.parent().map(Path::to_path_buf).unwrap_or_default();
        if dir.ends_with("deps") {
            dir.pop();
        }
        Ok(Self { dir })
    }

    /// The path of one binary; an error says how to build it when it is missing.
    pub fn path(&self, name: &str) -> anyhow::Result<PathBuf> {
        let path = self.dir.join(name);
        if !path.exists() {
            bail!(
                "{} is missing: build the services first (`cargo build --workspace{}`)",
                path.display(),
                if self.dir.ends_with("release") {
                    " --release"
                } else {
                    ""
                }
            );
        }
        Ok(path)
    }
}

/// The database name at the end of a PostgreSQL URL.
pub fn db_name(url: &str) -> String {
    url.rsplit('/').next().unwrap_or_default().to_owned()
}

/// A free local port for a child to take ([`outbox_testkit::free_local_addr`]).
pub fn free_addr() -> anyhow::Result<SocketAddr> {
    outbox_testkit::free_local_addr().context("finding a free port")
}

mod process;

pub use process::ServiceProc;

/// [`StackConfig::db_max_connections`] of the tests' stacks.
pub const TEST_DB_MAX_CONNECTIONS: u32 = 8;

/// Set by [`use_service_default_pools`]: stacks keep the services' own pool sizes.
static SERVICE_DEFAULT_POOLS: AtomicBool = AtomicBool::new(false);

/// From now on [`StackConfig::new`] leaves the services' pools at their defaults, as the `bench`
/// and `chaos` binaries want them (the figures and the faults of a deployment); the tests' stacks
/// keep [`TEST_DB_MAX_CONNECTIONS`], so that several fit one PostgreSQL beside the other tests.
pub fn use_service_default_pools() {
    SERVICE_DEFAULT_POOLS.store(true, Ordering::Relaxed);
}

/// What to start.
#[derive(Debug, Clone)]
pub struct StackConfig {
    pub relays: usize,
    pub mails: usize,
    /// Order databases: more than one sets orders-svc's `SHARDS` and every relay's
    /// `RELAY_SHARDS` to that many fresh databases.
    pub shards: usize,
    /// The relays' fleet database (`FLEET_DATABASE_URL`): set, every relay-svc runs in fleet
    /// mode (instance id its process name, `FLEET_INSTANCE_ID`) and publishes the databases
    /// its registry lists, instead of the order databases (`RELAY_SHARDS`).
    pub fleet_database_url: Option<String>,
    /// `RUST_LOG` for the children.
    pub rust_log: String,
    /// Where each process's log goes (`<name>.log`).
    pub log_dir: PathBuf,
    /// `DB_MAX_CONNECTIONS` of orders-svc and mail-svc (relay-svc's pools are small and fixed);
    /// `None`: the services' defaults.
    pub db_max_connections: Option<u32>,
    /// Extra environment for every service.
    pub env: Vec<(String, String)>,
    /// Extra environment for every relay-svc.
    pub relay_env: Vec<(String, String)>,
    /// Extra environment for every mail-svc.
    pub mail_env: Vec<(String, String)>,
    /// The broker of every service whose `AMQP_URL` the two lists below do not set.
    pub broker: Broker,
    /// `AMQP_URL` of each relay-svc (instance i takes entry i modulo the length; each entry may
    /// be a list of a cluster's nodes); empty: `broker`.
    pub relay_amqp_urls: Vec<String>,
    /// `AMQP_URL` of each mail-svc, as `relay_amqp_urls`; the first also removes the stack's
    /// queues at the end.
    pub mail_amqp_urls: Vec<String>,
}

impl StackConfig {
    /// One relay, one mail service on the machine's broker, logs in a fresh temporary directory,
    /// and small database pools unless [`use_service_default_pools`] was called: in the suite
    /// several stacks run at once beside the other packages' tests, all on one PostgreSQL (100
    /// connections by default).
    pub fn new(tag: &str) -> Self {
        let log_dir = std::env::temp_dir().join(outbox_testkit::unique(tag));
        Self {
            relays: 1,
            mails: 1,
            shards: 1,
            fleet_database_url: None,
            rust_log: "info".into(),
            log_dir,
            db_max_connections: (!SERVICE_DEFAULT_POOLS.load(Ordering::Relaxed))
                .then_some(TEST_DB_MAX_CONNECTIONS),
            env: Vec::new(),
            relay_env: Vec::new(),
            mail_env: Vec::new(),
            broker: Broker::machine(),
            relay_amqp_urls: Vec::new(),
            mail_amqp_urls: Vec::new(),
        }
    }
}

/// A single broker node (not a cluster's): the machine's, or a node of a test's own
/// ([`RabbitNode`]), which a test may restart without disturbing the tests beside it.
#[derive(Debug, Clone)]
pub struct Broker {
    /// Its AMQP URL with the tests' credentials.
    pub url: String,
    /// Its Erlang node name for `rabbitmqctl -n`; `None`: the machine's broker.
    pub node: Option<String>,
}

impl Broker {
    /// The machine's broker (`TEST_AMQP_URL`).
    pub fn machine() -> Self {
        Self {
            url: outbox_testkit::amqp_url(),
            node: None,
        }
    }

    /// A node of the test's own.
    pub fn node(node: &RabbitNode) -> Self {
        Self {
            url: node.url(),
            node: Some(node.name().to_owned()),
        }
    }

    /// Runs `rabbitmqctl <command>` on this broker and waits for it (`stop_app`, `start_app`).
    pub async fn ctl(&self, command: &str) -> anyhow::Result<()> {
        let mut cmd = tokio::process::Command::new("rabbitmqctl");
        if let Some(node) = &self.node {
            cmd.args(["-n", node]);
        }
        let status = cmd
            .args(["-q", command])
            .stdout(std::process::Stdio::null())
            .status()
            .await
            .with_context(|| format!("running rabbitmqctl {command}"))?;
        anyhow::ensure!(status.success(), "rabbitmqctl {command} failed: {status}");
        Ok(())
    }
}

/// The whole system: orders-svc, relay-svc instances and mail-svc instances, sharing fresh
/// databases (`orders_db`, `mail_db`) and a unique exchange and queue.
#[derive(Debug)]
pub struct Stack {
    pub orders: ServiceProc,
    pub relays: Vec<ServiceProc>,
    pub mails: Vec<ServiceProc>,
    pub orders_db_url: String,
    /// Every order database, shard 0 (`orders_db_url`) first.
    pub orders_shard_urls: Vec<String>,
    pub mail_db_url: String,
    pub exchange: String,
    pub queue: String,
    pub log_dir: PathBuf,
    /// The broker (or brokers) the stack's queues live on.
    pub admin_amqp_url: String,
    /// The broker of the services that were given no URL list.
    pub broker: Broker,
    /// This stack's share of [`SERVICES_AT_ONCE`] (a test stack's; `None` for the binaries').
    _turn: Option<OwnedSemaphorePermit>,
    /// The databases, queues and exchanges of the machine's broker named for this stack,
    /// removed when it goes (after the processes, which drop first and are killed on drop).
    _made: outbox_testkit::Made,
}

/// How many services the tests' stacks of one process run at once: each holds a small pool of
/// database connections ([`TEST_DB_MAX_CONNECTIONS`]), and the suite's stacks run beside the
/// other packages' tests on one PostgreSQL (100 connections by default). A stack waits for its
/// services' turn before it starts any.
pub const SERVICES_AT_ONCE: u32 = 8;

fn services_at_once() -> Arc<Semaphore> {
    static TURNS: OnceLock<Arc<Semaphore>> = OnceLock::new();
    TURNS
        .get_or_init(|| Arc::new(Semaphore::new(SERVICES_AT_ONCE as usize)))
        .clone()
}

impl Stack {
    /// Starts orders-svc first (it migrates the outbox), then the relays and mail services.
    pub async fn start(cfg: StackConfig) -> anyhow::Result<Self> {
        let turn = match cfg.db_max_connections {
            Some(_) => {
                let services = (1 + cfg.relays + cfg.mails) as u32;
                let wanted = services.min(SERVICES_AT_ONCE);
                Some(services_at_once().acquire_many_owned(wanted).await?)
            }
            None => None,
        };
        let bins = Binaries::locate()?;
        std::fs::create_dir_all(&cfg.log_dir)?;
        let tag = outbox_testkit::unique("e2e_test");
        let orders_db_url = format!("{}/{tag}_orders", outbox_testkit::pg_server_url());
        let mail_db_url = format!("{}/{tag}_mail", outbox_testkit::pg_server_url());
        let orders_shard_urls: Vec<String> = std::iter::once(orders_db_url.clone())
            .chain((1..cfg.shards).map(|i| format!("{orders_db_url}_s{i}")))
            .collect();
        let sharded = |setting: &str| {
            (cfg.shards > 1).then(|| (setting.to_owned(), orders_shard_urls.join(",")))
        };
        let exchange = format!("{tag}.events");
        let queue = format!("{tag}.mail");
        let made = outbox_testkit::Made::new();
        for url in orders_shard_urls.iter().chain([&mail_db_url]) {
            made.database(url);
        }
        made.mail_topology(&exchange, &queue);
        let amqp = cfg.broker.url.clone();
        let amqp_of = |urls: &[String], i: usize| {
            if urls.is_empty() {
                amqp.clone()
            } else {
                urls[i % urls.len()].clone()
            }
        };
        let common = |db: &str| {
            let mut env = vec![
                ("DATABASE_URL".to_string(), db.to_string()),
                ("RUST_LOG".to_string(), cfg.rust_log.clone()),
                ("LOG_FORMAT".to_string(), "text".to_string()),
                ("NO_COLOR".to_string(), "1".to_string()),
            ];
            env.extend(
                cfg.db_max_connections
                    .map(|n| ("DB_MAX_CONNECTIONS".to_string(), n.to_string())),
            );
            env.extend(cfg.env.iter().cloned());
            env
        };
        let mut orders_env = common(&orders_db_url);
        orders_env.extend(sharded("SHARDS"));
        let mut orders = ServiceProc::new(
            "orders-svc".into(),
            bins.path("orders-svc")?,
            orders_env,
            &cfg.log_dir,
        )?;
        orders.start().await?;

        let mut relays = Vec::new();
        for i in 0..cfg.relays {
            let name = format!("relay-svc-{}", i + 1);
            let mut env = common(&orders_db_url);
            env.push(("AMQP_URL".into(), amqp_of(&cfg.relay_amqp_urls, i)));
            env.push(("AMQP_EXCHANGE".into(), exchange.clone()));
            match &cfg.fleet_database_url {
                Some(fleet) => {
                    // The registry says what to publish: no order database of its own.
                    env.retain(|(k, _)| k != "DATABASE_URL");
                    env.push(("FLEET_DATABASE_URL".into(), fleet.clone()));
                    env.push(("FLEET_INSTANCE_ID".into(), name.clone()));
                }
                None => env.extend(sharded("RELAY_SHARDS")),
            }
            env.extend(cfg.relay_env.iter().cloned());
            let mut relay = ServiceProc::new(name, bins.path("relay-svc")?, env, &cfg.log_dir)?;
            relay.start().await?;
            relays.push(relay);
        }
        let mut mails = Vec::new();
        for i in 0..cfg.mails {
            let mut env = common(&mail_db_url);
            env.push(("AMQP_URL".into(), amqp_of(&cfg.mail_amqp_urls, i)));
            env.push(("AMQP_EXCHANGE".into(), exchange.clone()));
            env.push(("MAIL_QUEUE".into(), queue.clone()));
            env.extend(cfg.mail_env.iter().cloned());
            let mut mail = ServiceProc::new(
                format!("mail-svc-{}", i + 1),
                bins.path("mail-svc")?,
                env,
                &cfg.log_dir,
            )?;
            mail.start().await?;
            mails.push(mail);
        }
        Ok(Self {
            orders,
            relays,
            mails,
            orders_db_url,
            orders_shard_urls,
            mail_db_url,
            exchange,
            queue,
            log_dir: cfg.log_dir,
            admin_amqp_url: amqp_of(&cfg.mail_amqp_urls, 0),
            broker: cfg.broker,
            _turn: turn,
            _made: made,
        })
    }

    /// A CPU meter over this stack's running processes and the backends of its databases.
    pub fn cpu_meter(&self) -> crate::cpu::CpuMeter {
        let services = std::iter::once(&self.orders)
            .chain(&self.relays)
            .chain(&self.mails)
            .filter_map(|s| {
                // `relay-svc-2` counts as `relay-svc`: the stage's cost is per kind of service.
                let kind = s
                    .name
                    .rsplit_once('-')
                    .filter(|(_, n)| n.parse::<u32>().is_ok());
                let kind = kind.map_or(s.name.as_str(), |(k, _)| k);
                Some((kind.to_owned(), s.pid()?))
            })
            .collect();
        let databases = self
            .orders_shard_urls
            .iter()
            .chain([&self.mail_db_url])
            .map(|url| db_name(url))
            .collect();
        crate::cpu::CpuMeter::new(services, databases)
    }

    pub async fn orders_client(&self) -> anyhow::Result<OrderServiceClient<Channel>> {
        Ok(OrderServiceClient::new(self.orders.channel().await?))
    }

    /// Upserts order `id` to `status` (customer `customer{id}@example.com`) through orders-svc;
    /// the seq of the event it wrote.
    pub async fn upsert(&self, id: i64, status: OrderStatus) -> anyhow::Result<u64> {
        self.orders_client()
            .await?
            .upsert(UpsertOrderRequest {
                id,
                status: status as i32,
                customer_email: format!("customer{id}@example.com"),
            })
            .await?
            .into_inner()
            .event_seq
            .context("the upsert changed something, so it wrote an event")
    }

    /// Polls the first mail-svc's ListMails until order `order_id` has `n` mails, or a minute
    /// passed; the mails it has then.
    pub async fn mails_for(&self, order_id: i64, n: usize) -> anyhow::Result<Vec<Mail>> {
        let mut client = self.mail_client(0).await?;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let mails = client
                .list_mails(ListMailsRequest { order_id })
                .await?
                .into_inner()
                .mails;
            if mails.len() >= n || Instant::now() > deadline {
                return Ok(mails);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub async fn relay_client(&self, i: usize) -> anyhow::Result<RelayServiceClient<Channel>> {
        Ok(RelayServiceClient::new(self.relays[i].channel().await?))
    }

    pub async fn mail_client(&self, i: usize) -> anyhow::Result<MailServiceClient<Channel>> {
        Ok(MailServiceClient::new(self.mails[i].channel().await?))
    }

    /// The console binary on this stack's databases and services (the first relay-svc and
    /// mail-svc), listening on `addr`, its operators' tokens in `operator_tokens`.
    pub fn console_command(
        &self,
        addr: SocketAddr,
        operator_tokens: &Path,
    ) -> anyhow::Result<std::process::Command> {
        let mut cmd = std::process::Command::new(Binaries::locate()?.path("outbox-console")?);
        cmd.env("CONSOLE_ADDR", addr.to_string())
            .env("CONSOLE_OPERATOR_TOKENS_FILE", operator_tokens)
            .env("CONSOLE_ORDERS_DB", &self.orders_db_url)
            .env("CONSOLE_MAIL_DB", &self.mail_db_url)
            .env("CONSOLE_ORDERS_ADDR", self.orders.grpc_addr.to_string())
            .env("CONSOLE_RELAY_ADDR", self.relays[0].grpc_addr.to_string())
            .env("CONSOLE_MAIL_ADDR", self.mails[0].grpc_addr.to_string());
        Ok(cmd)
    }

    /// A tap on the stack's exchange: an exclusive, auto-deleted queue bound with `#` and consumed
    /// without acks, so the caller sees a copy of every event the relay publishes from now on.
    pub async fn tap(&self, ch: &lapin::Channel, name: &str) -> anyhow::Result<lapin::Consumer> {
        use lapin::{options::*, types::FieldTable};
        let queue = format!("{}.{name}", self.exchange);
        let exclusive = QueueDeclareOptions {
            exclusive: true,
            auto_delete: true,
            ..Default::default()
        };
        ch.queue_declare(queue.as_str().into(), exclusive, FieldTable::default())
            .await?;
        ch.queue_bind(
            queue.as_str().into(),
            self.exchange.as_str().into(),
            "#".into(),
            QueueBindOptions::default(),
            FieldTable::default(),
        )
        .await?;
        let no_ack = BasicConsumeOptions {
            no_ack: true,
            ..Default::default()
        };
        Ok(ch
            .basic_consume(
                queue.as_str().into(),
                name.into(),
                no_ack,
                FieldTable::default(),
            )
            .await?)
    }

    /// Everything the processes logged so far, concatenated (for asserting on log lines).
    pub fn logs(&self) -> String {
        let mut all = String::new();
        for p in std::iter::once(&self.orders)
            .chain(&self.relays)
            .chain(&self.mails)
        {
            all.push_str(&std::fs::read_to_string(&p.log_path).unwrap_or_default());
        }
        all
    }

    /// SIGTERM to every process, then removes the stack's queues and exchanges from the broker
    /// (quorum queues are not free to keep around).
    pub async fn stop(&mut self) {
        // All at once: each drains its in-flight work, one after another that adds up.
        let consumers = self.mails.iter_mut().chain(self.relays.iter_mut());
        futures::future::join_all(consumers.map(|p| p.terminate(Duration::from_secs(10)))).await;
        self.orders.terminate(Duration::from_secs(10)).await;
        if let Err(e) = self.remove_topology().await {
            eprintln!("cannot remove the stack's queues and exchanges: {e:#}");
        }
    }

    async fn remove_topology(&self) -> anyhow::Result<()> {
        use lapin::options::{ExchangeDeleteOptions, QueueDeleteOptions};
        let brokers = outbox_support::failover::Failover::new(self.admin_amqp_url.as_str());
        let (conn, _) = brokers
            .connect(async |url| {
                lapin::Connection::connect(url, lapin::ConnectionProperties::default()).await
            })
            .await?;
        let ch = conn.create_channel().await?;
        for queue in [self.queue.clone(), format!("{}.dead-letter", self.queue)] {
            ch.queue_delete(queue.as_str().into(), QueueDeleteOptions::default())
                .await?;
        }
        for exchange in [format!("{}.dlx", self.queue), self.exchange.clone()] {
            ch.exchange_delete(exchange.as_str().into(), ExchangeDeleteOptions::default())
                .await?;
        }
        let _ = conn.close(200, "bye".into()).await;
        Ok(())
    }
}

/// Builds the three service binaries, outboxctl (the audit) and outbox-console in the profile of the running executable, so that
/// `cargo run -p e2e --bin …` never runs stale services. Does nothing outside `cargo run` (no
/// `CARGO` in the environment), e.g. for a copied binary.
pub fn build_services() -> anyhow::Result<()> {
    let Ok(cargo) = std::env::var("CARGO") else {
        return Ok(());
    };
    let release = Binaries::locate()?.dir.ends_with("release");
    let mut cmd = std::process::Command::new(cargo);
    cmd.args([
        "build",
        "--locked",
        "-p",
        "orders-svc",
        "-p",
        "relay-svc",
        "-p",
        "mail-svc",
        "-p",
        "outboxctl",
        "-p",
        "outbox-console",
    ]);
    if release {
        cmd.arg("--release");
    }
    let status = cmd
        .status()
        .context("running cargo build for the services")?;
    anyhow::ensure!(status.success(), "building the services failed");
    Ok(())
}
