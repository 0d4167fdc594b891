//! The test command's sweep (`deploy/test.sh --sweep-only`) against the real PostgreSQL and
//! RabbitMQ: it passes on a machine with nothing to sweep (the regression of a `grep` that found
//! nothing failing the whole command), drops exactly the leftovers of test processes that are gone,
//! keeps those of live ones, and is skipped with a note when psql/rabbitmqctl are not installed.

use std::{path::PathBuf, process::Command};

use lapin::{Connection, ConnectionProperties, options::QueueDeclareOptions, types::FieldTable};
use outbox_kit::testing;
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
    PgConnection::connect(&format!("{}/postgres", testing::pg_server_url()))
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
    let live_db = testing::unique("relay_test");
    let live_queue = testing::unique("mail_test_q");

    let mut db = pg().await;
    for name in [&gone_db, &live_db] {
        sqlx::query(sqlx::AssertSqlSafe(format!("create database \"{name}\"")))
            .execute(&mut db)
            .await
            .expect("create database");
    }
    let amqp = Connection::connect(&testing::amqp_url(), ConnectionProperties::default())
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

    assert_ok(&sweep(None));

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

    sqlx::query(sqlx::AssertSqlSafe(format!(
        "drop database \"{live_db}\" with (force)"
    )))
    .execute(&mut db)
    .await
    .expect("drop database");
    channel
        .queue_delete(live_queue.as_str().into(), Default::default())
        .await
        .expect("delete queue");
}

#[test]
fn sweep_without_psql_or_rabbitmqctl_is_skipped_with_a_note() {
    // A PATH with only what the script itself needs besides the two clients.
    let bin = std::env::temp_dir().join(testing::unique("e2e_path"));
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
    let run_dir = std::env::temp_dir().join(testing::unique("e2e_local"));
    let free = || e2e::stack::free_addr().expect("free port").to_string();
    let tag = testing::unique("e2e_test");
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
    let (orders, relay, mail) = (free(), free(), free());
    let configure = |cmd: &mut Command| {
        cmd.env("ORDERS_GRPC_ADDR", &orders)
            .env("RELAY_GRPC_ADDR", &relay)
            .env("MAIL_GRPC_ADDR", &mail)
            .env("ORDERS_METRICS_ADDR", free())
            .env("RELAY_METRICS_ADDR", free())
            .env("MAIL_METRICS_ADDR", free())
            .env(
                "ORDERS_DATABASE_URL",
                format!("{}/{tag}_orders", testing::pg_server_url()),
            )
            .env(
                "MAIL_DATABASE_URL",
                format!("{}/{tag}_mail", testing::pg_server_url()),
            )
            .env("RELAY_AMQP_URL", testing::amqp_url())
            .env("MAIL_AMQP_URL", testing::amqp_url())
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
    for addr in [&relay, &mail] {
        assert!(
            tokio::net::TcpStream::connect(addr.as_str()).await.is_err(),
            "{addr} closed after stop"
        );
    }

    let mut db = pg().await;
    for suffix in ["orders", "mail"] {
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "drop database if exists \"{tag}_{suffix}\" with (force)"
        )))
        .execute(&mut db)
        .await
        .ok();
    }
    let amqp = Connection::connect(&testing::amqp_url(), ConnectionProperties::default())
        .await
        .expect("connect to RabbitMQ");
    let channel = amqp.create_channel().await.expect("channel");
    for queue in [format!("{tag}.mail"), format!("{tag}.mail.dead-letter")] {
        channel
            .queue_delete(queue.as_str().into(), Default::default())
            .await
            .ok();
    }
    std::fs::remove_dir_all(&run_dir).ok();
}

/// `deploy/rabbit-cluster.sh`: `up` twice is fine and gives one cluster of three nodes on their
/// own ports (the machine's broker untouched), `kill-node` kills only that node's VM,
/// `restart-node` brings it back into the cluster, bad arguments are refused, and `down` leaves
/// nothing behind.
#[test]
fn rabbit_cluster_script_is_idempotent_and_kills_only_its_own_node() {
    use e2e::cluster;
    let base = std::env::temp_dir().join(testing::unique("outbox_cluster_script"));
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
