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
