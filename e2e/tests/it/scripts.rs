//! The test command's sweep (`deploy/test.sh --sweep-only`) against the real PostgreSQL and
//! RabbitMQ: it passes on a machine with nothing to sweep (the regression of a `grep` that found
//! nothing failing the whole command), drops exactly the leftovers of test processes that are gone,
//! keeps those of live ones, and is skipped with a note when psql/rabbitmqctl are not installed.

use std::{path::PathBuf, process::Command};

use lapin::{
    Connection, ConnectionProperties, ExchangeKind,
    options::{ExchangeDeclareOptions, QueueDeclareOptions},
    types::FieldTable,
};
use sqlx::{Connection as _, PgConnection};

fn repo_root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
}

fn sweep(path: Option<&str>) -> std::process::Output {
    let mut cmd = Command::new("/bin/bash");
    cmd.arg(repo_root().join("deploy/test.sh"))
        .arg("--sweep-only");
    if let Some(path) = path {
        cmd.env("PATH", path);
    }
    cmd.output().expect("bash runs deploy/test.sh")
}

fn assert_ok(out: &std::process::Output) {
    assert!(
        out.status.success(),
        "sweep failed ({}): stdout={} stderr={}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A pid that no process has now (so a name carrying it belongs to a finished test process).
fn dead_pid() -> u32 {
    let max: u32 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(32768);
    (1000..max)
        .rev()
        .find(|pid| !std::path::Path::new(&format!("/proc/{pid}")).exists())
        .expect("a free pid")
}

async fn pg() -> PgConnection {
    PgConnection::connect(&format!("{}/postgres", outbox_testkit::pg_server_url()))
        .await
        .expect("connect to PostgreSQL")
}

async fn database_exists(conn: &mut PgConnection, name: &str) -> bool {
    sqlx::query_scalar::<_, bool>("select exists(select 1 from pg_database where datname = $1)")
        .bind(name)
        .fetch_one(conn)
        .await
        .expect("query pg_database")
}

async fn exchange_exists(conn: &Connection, name: &str) -> bool {
    let channel = conn.create_channel().await.expect("channel");
    let passive = ExchangeDeclareOptions {
        passive: true,
        ..Default::default()
    };
    channel
        .exchange_declare(
            name.into(),
            ExchangeKind::Topic,
            passive,
            FieldTable::default(),
        )
        .await
        .is_ok()
}

async fn queue_exists(conn: &Connection, name: &str) -> bool {
    let channel = conn.create_channel().await.expect("channel");
    let passive = QueueDeclareOptions {
        passive: true,
        ..Default::default()
    };
    channel
        .queue_declare(name.into(), passive, FieldTable::default())
        .await
        .is_ok()
}

#[tokio::test]
async fn sweep_passes_twice_in_a_row_when_there_is_nothing_to_sweep() {
    // The second run finds no leftover of a finished process at all: the case that used to fail.
    assert_ok(&sweep(None));
    assert_ok(&sweep(None));
}

#[tokio::test]
async fn sweep_drops_leftovers_of_finished_test_processes_only() {
    let dead = dead_pid();
    let gone_db = format!("orders_test_{dead}_1_0");
    let gone_queue = format!("mail_test_q_{dead}_1_0");
    let gone_dlq = format!("mail_test_q_{dead}_1_1.dead-letter");
    let gone_exchange = format!("relay_ex_{dead}_1_0");
    let live_db = outbox_testkit::unique("relay_test");
    let live_queue = outbox_testkit::unique("mail_test_q");
    let live_exchange = outbox_testkit::unique("relay_ex");
    // Whatever the sweep leaves, the test removes (also when it fails).
    let made = outbox_testkit::Made::new();
    made.database(&gone_db)
        .database(&live_db)
        .queue(&gone_queue)
        .queue(&gone_dlq)
        .queue(&live_queue)
        .exchange(&gone_exchange)
        .exchange(&live_exchange);

    let mut db = pg().await;
    for name in [&gone_db, &live_db] {
        sqlx::query(sqlx::AssertSqlSafe(format!("create database \"{name}\"")))
            .execute(&mut db)
            .await
            .expect("create database");
    }
    let amqp = Connection::connect(&outbox_testkit::amqp_url(), ConnectionProperties::default())
        .await
        .expect("connect to RabbitMQ");
    let channel = amqp.create_channel().await.expect("channel");
    let durable = QueueDeclareOptions {
        durable: true,
        ..Default::default()
    };
    for name in [&gone_queue, &gone_dlq, &live_queue] {
        channel
            .queue_declare(name.as_str().into(), durable, FieldTable::default())
            .await
            .expect("declare queue");
    }
    for name in [&gone_exchange, &live_exchange] {
        channel
            .exchange_declare(
                name.as_str().into(),
                ExchangeKind::Topic,
                ExchangeDeclareOptions {
                    durable: true,
                    ..Default::default()
                },
                FieldTable::default(),
            )
            .await
            .expect("declare exchange");
    }

    drop(channel);
    amqp.close(0, "declared".into()).await.ok();
    // A connection held across the sweep could miss its heartbeats while this thread waits
    // for the script (rabbitmqctl takes seconds on a busy machine): the checks connect anew.
    assert_ok(
        &tokio::task::spawn_blocking(|| sweep(None))
            .await
            .expect("sweep"),
    );
    let amqp = Connection::connect(&outbox_testkit::amqp_url(), ConnectionProperties::default())
        .await
        .expect("connect to RabbitMQ");

    assert!(
        !database_exists(&mut db, &gone_db).await,
        "{gone_db} dropped"
    );
    assert!(database_exists(&mut db, &live_db).await, "{live_db} kept");
    assert!(
        !queue_exists(&amqp, &gone_queue).await,
        "{gone_queue} deleted"
    );
    assert!(!queue_exists(&amqp, &gone_dlq).await, "{gone_dlq} deleted");
    assert!(queue_exists(&amqp, &live_queue).await, "{live_queue} kept");
    assert!(
        !exchange_exists(&amqp, &gone_exchange).await,
        "{gone_exchange} deleted"
    );
    assert!(
        exchange_exists(&amqp, &live_exchange).await,
        "{live_exchange} kept"
    );
    amqp.close(0, "checked".into()).await.ok();
    db.close().await.ok();
    made.remove().await.expect("the test's names removed");
}

#[test]
fn sweep_without_psql_or_rabbitmqctl_is_skipped_with_a_note() {
    // A PATH with only what the script itself needs besides the two clients.
    let bin = std::env::temp_dir().join(outbox_testkit::unique("e2e_path"));
    std::fs::create_dir_all(&bin).expect("temp dir");
    for tool in ["dirname", "sed", "head"] {
        let found = ["/usr/bin", "/bin"]
            .iter()
            .map(|dir| PathBuf::from(dir).join(tool))
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("{tool} is installed"));
        std::os::unix::fs::symlink(found, bin.join(tool)).expect("symlink");
    }
    let out = sweep(Some(bin.to_str().expect("utf-8 path")));
    std::fs::remove_dir_all(&bin).ok();
    assert_ok(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("psql not installed"), "{stderr}");
    assert!(stderr.contains("rabbitmqctl not installed"), "{stderr}");
}

/// Every variable deploy/local.sh reads (`${NAME…}`) is listed by `deploy/local.sh --help`.
#[test]
fn local_sh_help_lists_every_variable_it_reads() {
    let script = std::fs::read_to_string(repo_root().join("deploy/local.sh")).expect("local.sh");
    let out = Command::new("/bin/bash")
        .arg(repo_root().join("deploy/local.sh"))
        .arg("--help")
        .output()
        .expect("local.sh --help runs");
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    let mut read = std::collections::BTreeSet::new();
    for piece in script.split("${").skip(1) {
        let name: String = piece
            .chars()
            .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        // Upper-case names are settings, except the service list and the generated passwords.
        if name.len() > 1
            && !["SERVICES", "RELAY_PASSWORD", "MAIL_PASSWORD"].contains(&name.as_str())
        {
            read.insert(name);
        }
    }
    assert!(
        read.contains("RELAY_AMQP_URL"),
        "found the settings: {read:?}"
    );
    for name in read {
        assert!(help.contains(&name), "--help lists {name}:\n{help}");
    }
}

/// deploy/local.sh against the real services: starts the three binaries, reports each one's own
/// health, refuses a shared setting rather than override it, never signals a pid that no longer
/// runs its binary, and stops exactly what it started.
#[tokio::test]
async fn local_sh_starts_reports_and_stops_only_its_own_processes() {
    let bin_dir = e2e::stack::Binaries::locate()
        .expect("binaries")
        .path("orders-svc")
        .expect("the services are built")
        .parent()
        .expect("bin dir")
        .to_path_buf();
    let run_dir = std::env::temp_dir().join(outbox_testkit::unique("e2e_local"));
    let free = || e2e::stack::free_addr().expect("free port").to_string();
    let tag = outbox_testkit::unique("e2e_test");
    // What the local stack makes for `tag`, removed when the test ends, passing or failing.
    let made = outbox_testkit::Made::new();
    made.database(&format!("{tag}_orders"))
        .database(&format!("{tag}_mail"))
        .mail_topology(&format!("{tag}.events"), &format!("{tag}.mail"));
    let local = |command: &str| {
        let mut cmd = Command::new("/bin/bash");
        cmd.arg(repo_root().join("deploy/local.sh"))
            .arg(command)
            .env("NO_BUILD", "1")
            .env("BIN_DIR", &bin_dir)
            .env("RUN_DIR", &run_dir)
            .env_remove("GRPC_ADDR")
            .env_remove("METRICS_ADDR")
            .env_remove("DATABASE_URL")
            .env_remove("AMQP_URL");
        cmd
    };
    let (orders, relay, mail, console) = (free(), free(), free(), free());
    let configure = |cmd: &mut Command| {
        cmd.env("ORDERS_GRPC_ADDR", &orders)
            .env("CONSOLE_ADDR", &console)
            .env("RELAY_GRPC_ADDR", &relay)
            .env("MAIL_GRPC_ADDR", &mail)
            .env("ORDERS_METRICS_ADDR", free())
            .env("RELAY_METRICS_ADDR", free())
            .env("MAIL_METRICS_ADDR", free())
            .env(
                "ORDERS_DATABASE_URL",
                format!("{}/{tag}_orders", outbox_testkit::pg_server_url()),
            )
            .env(
                "MAIL_DATABASE_URL",
                format!("{}/{tag}_mail", outbox_testkit::pg_server_url()),
            )
            .env("RELAY_AMQP_URL", outbox_testkit::amqp_url())
            .env("MAIL_AMQP_URL", outbox_testkit::amqp_url())
            .env("AMQP_EXCHANGE", format!("{tag}.events"))
            .env("MAIL_QUEUE", format!("{tag}.mail"));
    };

    // A shared setting is refused, not silently replaced by per-service values.
    let mut refused = local("start");
    configure(&mut refused);
    let out = refused
        .env("GRPC_ADDR", "127.0.0.1:1")
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("ORDERS_GRPC_ADDR"));

    let mut start = local("start");
    configure(&mut start);
    let out = start.output().expect("local.sh start runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "start: {out:?}");
    assert!(
        stdout.contains(&format!("outbox-console up on http://{console}")),
        "{stdout}"
    );
    for addr in [&orders, &relay, &mail] {
        assert!(stdout.contains(&format!("up on {addr}")), "{stdout}");
    }

    let mut status = local("status");
    configure(&mut status);
    let mut serving = String::new();
    for _ in 0..60 {
        let out = status.output().expect("local.sh status runs");
        serving = String::from_utf8_lossy(&out.stdout).into_owned();
        if serving.matches("SERVING").count() >= 3 && !serving.contains("NOT_SERVING") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    for svc in ["orders-svc", "relay-svc", "mail-svc"] {
        let line = serving
            .lines()
            .find(|l| l.starts_with(svc))
            .unwrap_or_else(|| panic!("{svc} in status:\n{serving}"));
        assert!(
            line.contains("SERVING") && !line.contains("NOT_SERVING"),
            "{line}"
        );
    }

    // orders-svc's pid file now names an unrelated process (a pid the kernel reused).
    let pidfile = run_dir.join("orders-svc.pid");
    let real = std::fs::read_to_string(&pidfile).expect("pid file");
    let real_pid: i32 = real
        .lines()
        .next()
        .and_then(|l| l.parse().ok())
        .expect("pid");
    let mut stranger = Command::new("sleep").arg("60").spawn().expect("sleep");
    std::fs::write(
        &pidfile,
        real.replacen(&real_pid.to_string(), &stranger.id().to_string(), 1),
    )
    .expect("rewrite pid file");
    let out = local("stop").output().expect("local.sh stop runs");
    assert!(out.status.success(), "stop: {out:?}");
    assert!(
        stranger.try_wait().expect("wait").is_none(),
        "the unrelated process was not signalled"
    );
    stranger.kill().ok();
    stranger.wait().ok();
    // The relay and the mail service were stopped; orders-svc (whose pid file was replaced) is
    // still ours to clean up.
    let out = Command::new("kill")
        .arg(real_pid.to_string())
        .status()
        .expect("kill");
    assert!(
        out.success(),
        "orders-svc was left running, as its pid file no longer named it"
    );
    for addr in [&relay, &mail, &console] {
        assert!(
            tokio::net::TcpStream::connect(addr.as_str()).await.is_err(),
            "{addr} closed after stop"
        );
    }

    drop(made);
    std::fs::remove_dir_all(&run_dir).ok();
}

/// `deploy/rabbit-cluster.sh`: `up` twice is fine and gives one cluster of three nodes on their
/// own ports (the machine's broker untouched), `kill-node` kills only that node's VM,
/// `restart-node` brings it back into the cluster, bad arguments are refused, and `down` leaves
/// nothing behind.
#[test]
fn rabbit_cluster_script_is_idempotent_and_kills_only_its_own_node() {
    use e2e::cluster;
    // The cluster's turn: the script starts and kills the nodes `Cluster`'s holders use.
    let _turn = cluster::turn_blocking().expect("the shared cluster down");
    let base = std::env::temp_dir().join(outbox_testkit::unique("outbox_cluster_script"));
    let with_base = |args: &[&str]| {
        let out = Command::new("/bin/bash")
            .arg(repo_root().join("deploy/rabbit-cluster.sh"))
            .args(args)
            .env("OUTBOX_RABBIT_CLUSTER_DIR", &base)
            .output()
            .expect("bash runs the script");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    };
    let machine_broker_pid = || {
        Command::new("rabbitmqctl")
            .args(["-q", "eval", "os:getpid()."])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .unwrap_or_default()
    };
    let broker_before = machine_broker_pid();

    for _ in 0..2 {
        let (ok, text) = with_base(&["up"]);
        assert!(ok, "up: {text}");
    }
    let (_, status) = with_base(&["status"]);
    for n in cluster::NODES {
        let line = status
            .lines()
            .find(|l| l.starts_with(&cluster::node_name(n)))
            .unwrap_or_else(|| panic!("node {n} in {status}"));
        assert!(
            line.contains(&format!("amqp=127.0.0.1:{}", cluster::amqp_port(n))),
            "{line}"
        );
        for m in cluster::NODES {
            assert!(
                line.contains(&cluster::node_name(m)),
                "{n} sees {m}: {line}"
            );
        }
    }
    assert!(
        base.join("node1/mnesia").exists(),
        "files under the given base"
    );

    let pid_of = |status: &str, n: u8| -> Option<String> {
        status
            .lines()
            .find(|l| l.starts_with(&cluster::node_name(n)))
            .and_then(|l| l.split_whitespace().find_map(|w| w.strip_prefix("pid=")))
            .map(str::to_owned)
    };
    let killed = pid_of(&status, 2).expect("node 2 runs");
    let (ok, text) = with_base(&["kill-node", "2"]);
    assert!(ok, "kill-node: {text}");
    assert!(
        !std::path::Path::new(&format!("/proc/{killed}")).exists(),
        "node 2's VM is gone"
    );
    let (_, status) = with_base(&["status"]);
    assert!(
        status.contains(&format!("{} down", cluster::node_name(2))),
        "{status}"
    );
    assert!(
        pid_of(&status, 1).is_some() && pid_of(&status, 3).is_some(),
        "{status}"
    );
    // Killing a node that is down is fine too.
    assert!(with_base(&["kill-node", "2"]).0);

    let (ok, text) = with_base(&["restart-node", "2"]);
    assert!(ok, "restart-node: {text}");
    let (_, status) = with_base(&["status"]);
    let line = status
        .lines()
        .find(|l| l.starts_with(&cluster::node_name(2)))
        .expect("node 2");
    assert!(
        line.contains(&cluster::node_name(1)),
        "node 2 rejoined: {status}"
    );

    for bad in [
        &["kill-node", "4"][..],
        &["restart-node"],
        &["partition-node", "1", "x"],
        &["nope"],
    ] {
        let (ok, text) = with_base(bad);
        assert!(!ok, "{bad:?} is refused: {text}");
    }

    for _ in 0..2 {
        let (ok, text) = with_base(&["down"]);
        assert!(ok, "down: {text}");
    }
    assert!(!base.exists(), "down removes the nodes' files");
    let (_, status) = with_base(&["status"]);
    assert_eq!(status.matches(" down").count(), 3, "{status}");
    assert_eq!(
        machine_broker_pid(),
        broker_before,
        "the machine's broker is untouched"
    );
}

/// The passwords the dev-secrets tests hand the script (fit for a URL, no placeholder).
const RABBITMQ_PASSWORDS: [(&str, &str); 3] = [
    ("RABBITMQ_ADMIN_PASSWORD", "admin-test-password-1"),
    ("RABBITMQ_RELAY_PASSWORD", "relay-test-password-2"),
    ("RABBITMQ_MAIL_PASSWORD", "mail-test-password-3"),
];

fn dev_secrets(dir: &std::path::Path, env: &[(&str, &str)]) -> std::process::Output {
    Command::new("/bin/bash")
        .arg(repo_root().join("deploy/dev-secrets.sh"))
        .arg(dir)
        .env_remove("POSTGRES_PASSWORD")
        .env_remove("GRAFANA_ADMIN_PASSWORD")
        .envs(env.iter().copied())
        .output()
        .expect("bash runs deploy/dev-secrets.sh")
}

fn secrets_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(outbox_testkit::unique(name));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// The environment deploy/compose.yaml gives `service`, with the secrets volume at `secrets`
/// (the variables of .env.example are not needed: only the settings without `${`).
fn compose_env(service: &str, secrets: &std::path::Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(repo_root().join("deploy/compose.yaml")).expect("compose");
    let mut value: serde_yaml::Value = serde_yaml::from_str(&text).expect("compose parses");
    for _ in 0..8 {
        value.apply_merge().expect("merge keys resolve");
    }
    let env = value["services"][service]["environment"]
        .as_mapping()
        .unwrap_or_else(|| panic!("{service} has an environment"));
    env.iter()
        .map(|(k, v)| {
            let v = v
                .as_str()
                .map(str::to_owned)
                .unwrap_or_else(|| format!("{v:?}"));
            (
                k.as_str().expect("key").to_owned(),
                v.replace("/run/outbox-secrets", &secrets.display().to_string()),
            )
        })
        .collect()
}

fn token_of(file: &std::path::Path) -> String {
    let text = std::fs::read_to_string(file).expect("token file");
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .expect("a token line");
    let (name, token) = line.split_once(' ').expect("<name> <token>");
    assert_eq!(name, "operator");
    token.to_owned()
}

/// deploy/dev-secrets.sh into an empty folder makes what compose's services are configured with:
/// orders-svc, started with compose's own TLS and token settings pointing at the generated files,
/// answers a TLS client trusting the generated CA (by every name compose calls it) that sends
/// the generated token, refuses one without it, and its `healthcheck` with compose's
/// `GRPC_CA_FILE` finds it SERVING. Keys and tokens are private; a second run keeps them.
#[tokio::test]
async fn dev_secrets_are_what_the_services_accept_and_are_kept_on_rerun() {
    use clap::Parser;
    use outbox_proto::orders::v1::{
        OrderStatus, UpsertOrderRequest, order_service_client::OrderServiceClient,
    };
    use std::os::unix::fs::PermissionsExt;

    let dir = secrets_dir("dev_secrets");
    let out = dev_secrets(&dir, &RABBITMQ_PASSWORDS);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let grpc = dir.join("grpc");
    for (file, mode) in [
        ("ca.pem", 0o644),
        ("server.pem", 0o644),
        ("ca.key", 0o600),
        ("server.key", 0o600),
        ("auth-tokens", 0o600),
        ("admin-tokens", 0o600),
    ] {
        let meta = std::fs::metadata(grpc.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(meta.permissions().mode() & 0o777, mode, "{file} mode");
    }
    let auth = token_of(&grpc.join("auth-tokens"));
    let admin = token_of(&grpc.join("admin-tokens"));
    assert_ne!(auth, admin, "two different tokens");
    // The files parse as the services read them.
    outbox_kit::auth::Tokens::load("AUTH_TOKENS_FILE", &grpc.join("auth-tokens")).expect("tokens");
    outbox_kit::auth::Tokens::load("ADMIN_TOKENS_FILE", &grpc.join("admin-tokens"))
        .expect("admin tokens");
    // The console's sign-in tokens: one per role, secret, as the console reads them.
    let mut console_tokens = Vec::new();
    for (role, setting) in [
        ("viewer", "CONSOLE_VIEWER_TOKENS_FILE"),
        ("operator", "CONSOLE_OPERATOR_TOKENS_FILE"),
    ] {
        let file = dir.join("console").join(format!("{role}-tokens"));
        let meta = std::fs::metadata(&file).unwrap_or_else(|e| panic!("{role}-tokens: {e}"));
        assert_eq!(
            meta.permissions().mode() & 0o777,
            0o600,
            "{role}-tokens mode"
        );
        let tokens = outbox_kit::auth::Tokens::load(setting, &file).expect("console tokens");
        assert_eq!(tokens.names(), [role]);
        let text = std::fs::read_to_string(&file).expect("console tokens");
        let line = text
            .lines()
            .find(|l| l.starts_with(role))
            .expect("a token line");
        console_tokens.push(line.split_once(' ').expect("<name> <token>").1.to_owned());
    }
    assert_ne!(console_tokens[0], console_tokens[1], "two different tokens");
    assert!(!console_tokens.contains(&admin) && !console_tokens.contains(&auth));

    // orders-svc with compose's settings (its own addresses and database, the rest as compose).
    let mut args = vec!["orders-svc".to_owned()];
    // Its database, dropped when the test ends, passing or failing.
    let made = outbox_testkit::Made::new();
    let command = <outbox_kit::service::Cli<orders_svc::Config> as clap::CommandFactory>::command();
    for (key, value) in compose_env("orders-svc", &dir) {
        let Some(arg) = command
            .get_arguments()
            .find(|a| a.get_env().and_then(|e| e.to_str()) == Some(key.as_str()))
        else {
            continue; // the healthcheck's and the OpenTelemetry SDK's
        };
        let value = match key.as_str() {
            "GRPC_ADDR" | "METRICS_ADDR" => "127.0.0.1:0".to_owned(),
            "DATABASE_URL" => {
                let url = outbox_testkit::fresh_database_url("e2e_dev_secrets");
                made.database(&url);
                url
            }
            _ => value,
        };
        args.push(format!("--{}", arg.get_long().expect("long flag")));
        args.push(value);
    }
    let cli = outbox_kit::service::Cli::<orders_svc::Config>::try_parse_from(&args)
        .expect("compose's settings parse");
    assert!(
        cli.config.server.grpc_security.auth_tokens_file.is_some()
            && cli.config.server.grpc_security.tls.tls_cert_file.is_some(),
        "compose sets TLS and tokens: {args:?}"
    );
    let shutdown = tokio_util::sync::CancellationToken::new();
    let app = orders_svc::App::build(cli.config, shutdown.clone())
        .await
        .expect("orders-svc starts with the generated certificate and tokens");
    let addr = app.grpc_addr();
    let running = tokio::spawn(app.run());

    let ca = std::fs::read_to_string(grpc.join("ca.pem")).expect("ca.pem");
    for name in ["localhost", "orders-svc"] {
        let tls = tonic::transport::ClientTlsConfig::new()
            .ca_certificate(tonic::transport::Certificate::from_pem(&ca))
            .domain_name(name);
        let channel = tonic::transport::Channel::from_shared(format!("https://{addr}"))
            .expect("uri")
            .tls_config(tls)
            .expect("tls config")
            .connect()
            .await
            .unwrap_or_else(|e| panic!("TLS as {name}: {e:?}"));
        let mut client = OrderServiceClient::new(channel);
        let request = |token: Option<&str>| {
            let mut r = tonic::Request::new(UpsertOrderRequest {
                id: 1,
                status: OrderStatus::Pending as i32,
                customer_email: "a@example.com".into(),
            });
            if let Some(t) = token {
                r.metadata_mut()
                    .insert("authorization", format!("Bearer {t}").parse().unwrap());
            }
            r
        };
        let refused = client.upsert(request(None)).await.expect_err("no token");
        assert_eq!(refused.code(), tonic::Code::Unauthenticated);
        client
            .upsert(request(Some(&auth)))
            .await
            .unwrap_or_else(|e| panic!("Upsert with the generated token as {name}: {e}"));
    }

    // `orders-svc healthcheck` as compose runs it: its GRPC_CA_FILE, calling 127.0.0.1.
    let healthcheck = command
        .find_subcommand("healthcheck")
        .expect("a healthcheck subcommand");
    let mut health_args = vec!["orders-svc".to_owned(), "healthcheck".to_owned()];
    for (key, value) in compose_env("orders-svc", &dir) {
        if let Some(arg) = healthcheck
            .get_arguments()
            .find(|a| a.get_env().and_then(|e| e.to_str()) == Some(key.as_str()))
        {
            health_args.push(format!("--{}", arg.get_long().expect("long flag")));
            health_args.push(value);
        }
    }
    let health = outbox_kit::service::Cli::<orders_svc::Config>::try_parse_from(&health_args)
        .expect("healthcheck args");
    let Some(outbox_kit::health::Command::Healthcheck(check)) = health.command else {
        panic!("healthcheck parses as the subcommand: {health_args:?}");
    };
    assert!(check.tls.grpc_ca_file.is_some(), "compose passes the CA");
    assert_eq!(
        outbox_kit::health::query(addr, &check.tls).await,
        Ok(true),
        "the health check over TLS"
    );
    shutdown.cancel();
    running.await.expect("joins").expect("stops cleanly");

    // A second run keeps the CA, the certificate and the tokens.
    let before: Vec<Vec<u8>> = ["ca.pem", "server.pem", "server.key", "auth-tokens"]
        .iter()
        .map(|f| std::fs::read(grpc.join(f)).expect("file"))
        .collect();
    let out = dev_secrets(&dir, &RABBITMQ_PASSWORDS);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let after: Vec<Vec<u8>> = ["ca.pem", "server.pem", "server.key", "auth-tokens"]
        .iter()
        .map(|f| std::fs::read(grpc.join(f)).expect("file"))
        .collect();
    assert!(before == after, "a rerun keeps the certificates and tokens");
    std::fs::remove_dir_all(&dir).expect("cleans up");
}

/// RabbitMQ's definitions: every user of deploy/rabbitmq/definitions.json gets the hash of its
/// RABBITMQ_<USER>_PASSWORD in RabbitMQ's own scheme (base64 of a 4-byte salt and SHA-256 of salt
/// and password), nothing in the file is the password itself, and the permissions come through.
#[test]
fn dev_secrets_hash_the_rabbitmq_passwords_as_rabbitmq_does() {
    use base64::Engine;
    use sha2::{Digest, Sha256};

    let dir = secrets_dir("dev_secrets_rmq");
    let out = dev_secrets(&dir, &RABBITMQ_PASSWORDS);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(dir.join("rabbitmq/definitions.json")).expect("written");
    for (_, password) in RABBITMQ_PASSWORDS {
        assert!(!text.contains(password), "no password in the definitions");
    }
    let written: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    let template: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("deploy/rabbitmq/definitions.json"))
            .expect("template"),
    )
    .expect("template parses");
    assert_eq!(written["permissions"], template["permissions"]);
    assert_eq!(written["vhosts"], template["vhosts"]);
    let users = written["users"].as_array().expect("users");
    assert_eq!(users.len(), RABBITMQ_PASSWORDS.len());
    for user in users {
        let name = user["name"].as_str().expect("name");
        let password = RABBITMQ_PASSWORDS
            .iter()
            .find(|(var, _)| *var == format!("RABBITMQ_{}_PASSWORD", name.to_uppercase()))
            .unwrap_or_else(|| panic!("a password variable for {name}"))
            .1;
        assert_eq!(user["hashing_algorithm"], "rabbit_password_hashing_sha256");
        assert!(
            user.get("password").is_none(),
            "{name}: no plaintext password"
        );
        let hash = base64::engine::general_purpose::STANDARD
            .decode(user["password_hash"].as_str().expect("password_hash"))
            .unwrap_or_else(|e| panic!("{name}: the hash is base64: {e}"));
        assert_eq!(hash.len(), 4 + 32, "{name}: salt and SHA-256");
        let (salt, digest) = hash.split_at(4);
        let expected = Sha256::new()
            .chain_update(salt)
            .chain_update(password.as_bytes())
            .finalize();
        assert_eq!(digest, &expected[..], "{name}: the hash of its password");
    }
    std::fs::remove_dir_all(&dir).expect("cleans up");
}

/// Bad input stops the script before it writes anything, naming the variable: a missing
/// password, the placeholder of .env.example, a password unfit for a URL.
#[test]
fn dev_secrets_refuse_missing_placeholder_and_unsafe_passwords() {
    let cases: [(&str, &str, &str); 4] = [
        (
            "RABBITMQ_RELAY_PASSWORD",
            "",
            "RABBITMQ_RELAY_PASSWORD is not set",
        ),
        (
            "RABBITMQ_MAIL_PASSWORD",
            "change-me-rabbitmq-mail-password",
            "RABBITMQ_MAIL_PASSWORD still has the placeholder",
        ),
        (
            "RABBITMQ_ADMIN_PASSWORD",
            "p@ss/word:12345",
            "RABBITMQ_ADMIN_PASSWORD must be",
        ),
        (
            "POSTGRES_PASSWORD",
            "change-me-postgres-password",
            "POSTGRES_PASSWORD still has",
        ),
    ];
    for (var, value, says) in cases {
        let dir = secrets_dir("dev_secrets_bad");
        let mut env: Vec<(&str, &str)> = RABBITMQ_PASSWORDS
            .iter()
            .copied()
            .filter(|(v, _)| *v != var)
            .collect();
        env.push((var, value));
        let out = dev_secrets(&dir, &env);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{var}={value:?} is refused");
        assert!(stderr.contains(says), "{var}={value:?}: {stderr}");
        assert!(!dir.exists(), "{var}={value:?}: nothing written");
    }
}

/// The docs run the scripts as commands (`deploy/rabbit-cluster.sh up`, `deploy/local.sh`), so
/// every one of them is executable for everyone who may run it.
#[test]
fn every_deploy_script_is_executable() {
    use std::os::unix::fs::PermissionsExt;
    let mut scripts = vec![repo_root().join(".ci/run")];
    for entry in std::fs::read_dir(repo_root().join("deploy")).expect("deploy/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_some_and(|e| e == "sh") {
            scripts.push(path);
        }
    }
    assert!(scripts.len() > 5, "the scripts were not found: {scripts:?}");
    let not_executable: Vec<_> = scripts
        .iter()
        .filter(|p| {
            let mode = std::fs::metadata(p)
                .expect("the script's metadata")
                .permissions()
                .mode();
            mode & 0o111 != 0o111
        })
        .collect();
    assert!(
        not_executable.is_empty(),
        "not executable (chmod +x, then git add): {not_executable:?}"
    );
}
