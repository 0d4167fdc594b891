//! Health that tells the truth: SERVING only while the database answers and the consumer is
//! consuming (each cut for real through a proxy), NOT_SERVING from the moment shutdown starts;
//! mail-svc starts while its database is down and waits for it; and the binary's `healthcheck`.

use std::{net::SocketAddr, time::Duration};

use mail_svc::App;
use outbox_proto::mail::v1::{GetStatusRequest, mail_service_client::MailServiceClient};
use outbox_testkit::{Proxy, health, pg_server_url, unique};
use tokio_util::sync::CancellationToken;
use tonic_health::pb::health_check_response::ServingStatus::{self, NotServing, Serving};

use crate::common::{Names, Publisher, TestMail, config, created, eventually, start};

const SERVICES: [&str; 2] = ["", "mail.v1.MailService"];

async fn is(addr: SocketAddr, want: ServingStatus) -> bool {
    health::all_are(addr, &SERVICES, want).await
}

async fn wait_for(addr: SocketAddr, want: ServingStatus, what: &str) {
    let start = std::time::Instant::now();
    eventually(what, 60, || async { is(addr, want).await.then_some(()) }).await;
    println!("{what}: {:?}", start.elapsed());
}

/// mail-svc on `names`, reaching the broker through `broker`, once it is SERVING.
async fn serving_via(names: &Names, broker: &Proxy) -> TestMail {
    let mut cfg = config(names);
    cfg.amqp_url = outbox_testkit::amqp_url_via(broker.addr()).into();
    let svc = start(cfg).await;
    wait_for(svc.grpc_addr, Serving, "SERVING once consuming").await;
    svc
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn health_follows_the_database_and_the_broker() {
    let db = Proxy::start(&outbox_testkit::pg_addr())
        .await
        .expect("db proxy");
    let broker = Proxy::start(&outbox_testkit::amqp_addr())
        .await
        .expect("broker proxy");
    let mut names = Names::new();
    names.database_url = outbox_testkit::pg_url_via(db.addr(), &unique("mail_test"));
    let svc = serving_via(&names, &broker).await;

    db.cut();
    wait_for(svc.grpc_addr, NotServing, "database cut -> NOT_SERVING").await;
    db.restore();
    wait_for(svc.grpc_addr, Serving, "database back -> SERVING").await;

    broker.cut();
    wait_for(svc.grpc_addr, NotServing, "broker cut -> NOT_SERVING").await;
    broker.restore();
    wait_for(svc.grpc_addr, Serving, "broker back -> SERVING").await;

    svc.stop().await;
    names.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn not_serving_as_soon_as_shutdown_starts() {
    let names = Names::new();
    let svc = start(config(&names)).await;
    wait_for(svc.grpc_addr, Serving, "SERVING once consuming").await;
    health::assert_not_serving_once_shutdown_starts(
        svc.grpc_addr,
        "mail.v1.MailService",
        &svc.shutdown,
    )
    .await;
    // Stops once the watcher left.
    svc.stop().await;
    names.cleanup().await;
}

/// The promise of the README: mail-svc starts while its database is down, reports NOT_SERVING,
/// retries, and processes events once the database is back.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn starts_while_its_database_is_down_and_catches_up() {
    let db = Proxy::start(&outbox_testkit::pg_addr())
        .await
        .expect("db proxy");
    db.cut();
    let name = unique("mail_test");
    let mut names = Names::new();
    names.database_url = outbox_testkit::pg_url_via(db.addr(), &name);
    let shutdown = CancellationToken::new();
    let app = tokio::time::timeout(
        Duration::from_secs(30),
        App::build(config(&names), shutdown.clone()),
    )
    .await
    .expect("start-up does not wait for the database")
    .expect("starts although the database is down");
    let grpc_addr = app.grpc_addr();
    let mut consuming = app.consuming();
    let app = tokio::spawn(app.run());

    assert!(is(grpc_addr, NotServing).await);
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert!(
        !app.is_finished(),
        "still running, waiting for its database"
    );
    assert!(is(grpc_addr, NotServing).await);
    assert!(
        !*consuming.borrow(),
        "no consuming before the database is ready"
    );

    db.restore();
    let restored = std::time::Instant::now();
    tokio::time::timeout(Duration::from_secs(60), consuming.wait_for(|c| *c))
        .await
        .expect("consuming within 60s of the database coming back")
        .expect("consumer state");
    println!("database back -> consuming in {:?}", restored.elapsed());
    wait_for(grpc_addr, Serving, "database back -> SERVING").await;

    let publisher = Publisher::connect(&names.exchange).await;
    publisher.proto(&created(1, 7, "hana@example.jp")).await;
    let status = MailServiceClient::connect(format!("http://{grpc_addr}"))
        .await
        .expect("client");
    eventually("the event is processed", 60, || {
        let mut status = status.clone();
        async move {
            let s = status
                .get_status(GetStatusRequest {})
                .await
                .ok()?
                .into_inner();
            (s.processed == 1).then_some(())
        }
    })
    .await;
    // Straight from the database, not through the service.
    let direct = sqlx::PgPool::connect(&format!("{}/{name}", pg_server_url()))
        .await
        .expect("direct");
    let mails: i64 = sqlx::query_scalar("select count(*) from mails")
        .fetch_one(&direct)
        .await
        .expect("count");
    assert_eq!(mails, 1);

    shutdown.cancel();
    app.await.expect("join").expect("clean stop");
    names.cleanup().await;
}

/// Runs `mail-svc healthcheck` with the service's own environment, whose database, broker and
/// SMTP server lead nowhere: the check must not need them.
async fn healthcheck(grpc_addr: String) -> (bool, String) {
    health::healthcheck(
        env!("CARGO_BIN_EXE_mail-svc"),
        grpc_addr,
        &[
            (
                "DATABASE_URL",
                "postgres://app:pw@nowhere.invalid:5432/mail",
            ),
            ("AMQP_URL", "amqp://app:pw@nowhere.invalid:5672/%2f"),
            ("MAILER", "smtp"),
            ("SMTP_URL", "smtp://app:pw@nowhere.invalid:25"),
        ],
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn healthcheck_subcommand_exits_0_only_when_serving() {
    let broker = Proxy::start(&outbox_testkit::amqp_addr())
        .await
        .expect("broker proxy");
    let names = Names::new();
    let svc = serving_via(&names, &broker).await;

    let any = format!("0.0.0.0:{}", svc.grpc_addr.port());
    let (ok, line) = healthcheck(any).await;
    assert!(ok, "exit 0 while serving: {line}");

    broker.cut();
    wait_for(svc.grpc_addr, NotServing, "broker cut -> NOT_SERVING").await;
    let addr = svc.grpc_addr.to_string();
    let (ok, line) = healthcheck(addr).await;
    assert!(!ok, "exit 1 while the broker is away: {line}");
    assert!(line.contains("NOT_SERVING"), "{line}");
    broker.restore();

    let addr = svc.grpc_addr.to_string();
    svc.stop().await;
    let (ok, line) = healthcheck(addr).await;
    assert!(!ok, "exit 1 on a closed port: {line}");
    names.cleanup().await;
}

/// Waiting is for a database that is away, not for one that refuses: a login PostgreSQL rejects
/// stops start-up at once, with an error naming DATABASE_URL.
#[tokio::test]
async fn a_refused_login_stops_start_up() {
    let mut names = Names::new();
    names.database_url = format!(
        "postgres://no_such_role_{}@{}/{}",
        std::process::id(),
        outbox_testkit::pg_addr(),
        unique("mail_test")
    );
    let err = tokio::time::timeout(
        Duration::from_secs(30),
        App::build(config(&names), CancellationToken::new()),
    )
    .await
    .expect("does not wait")
    .expect_err("a refused login is not worth waiting for");
    let text = format!("{err:#}");
    assert!(text.contains("DATABASE_URL"), "{text}");
    println!("{text}");
}
