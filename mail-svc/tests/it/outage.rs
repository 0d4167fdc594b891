//! A database outage: deliveries wait unacked (no busy loop, nothing dead-lettered, nothing lost)
//! and are processed once the database is back. Also: health and reflection answer.

use outbox_proto::orders::v1::OrderStatus;
use outbox_testkit::{Proxy, pg_server_url, unique};

use crate::common::{Names, Publisher, changed, config, created, eventually, start};

const EMAIL: &str = "shiro@example.jp";

#[tokio::test]
async fn database_outage_delays_but_loses_nothing() {
    let proxy = Proxy::start(&outbox_testkit::pg_addr())
        .await
        .expect("proxy");
    let db = unique("mail_outage_test");
    let mut names = Names::new();
    names.database_url = outbox_testkit::pg_url_via(proxy.addr(), &db);
    let svc = start(config(&names)).await;
    let publisher = Publisher::connect(&names.exchange).await;
    publisher.proto(&created(1, 5, EMAIL)).await;
    eventually("first event", 60, || async {
        (svc.status().await.processed == 1).then_some(())
    })
    .await;

    proxy.cut();
    publisher
        .proto(&changed(2, 1, 5, OrderStatus::Paid, EMAIL))
        .await;
    publisher
        .proto(&changed(3, 2, 5, OrderStatus::Shipped, EMAIL))
        .await;
    let direct = sqlx::PgPool::connect(&format!("{}/{db}", pg_server_url()))
        .await
        .expect("direct connection");
    // Give the consumer time to meet the outage (several failed attempts), then bring it back.
    let connections = proxy.connections();
    tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    assert_eq!(
        proxy.connections(),
        connections,
        "no connection got through while cut"
    );
    proxy.restore();

    eventually("processed after the outage", 120, || async {
        let n: i64 = sqlx::query_scalar("select count(*) from mails")
            .fetch_one(&direct)
            .await
            .ok()?;
        (n == 3).then_some(())
    })
    .await;
    let s = eventually("status answers again", 60, || async {
        svc.client
            .clone()
            .get_status(outbox_proto::mail::v1::GetStatusRequest {})
            .await
            .ok()
            .map(|r| r.into_inner())
    })
    .await;
    assert_eq!(
        (s.processed, s.skipped, s.dead_lettered, s.held),
        (3, 0, 0, 0)
    );
    assert_eq!(svc.seqs(5).await, vec![1, 2, 3]);
    svc.stop().await;
    names.cleanup().await;
}

#[tokio::test]
async fn health_and_reflection_answer() {
    use outbox_testkit::{health, reflection};
    let names = Names::new();
    let svc = start(config(&names)).await;
    for service in ["", "mail.v1.MailService"] {
        // SERVING follows "consuming" within a probe; poll rather than race it.
        eventually(&format!("{service:?} is SERVING"), 10, || async move {
            (health::status(svc.grpc_addr, service).await == 1).then_some(())
        })
        .await;
    }

    let services = reflection::services_v1(svc.grpc_addr).await;
    assert!(
        services.iter().any(|s| s == "mail.v1.MailService"),
        "{services:?}"
    );
    assert!(
        !services.iter().any(|s| s == "orders.v1.OrderService"),
        "{services:?}"
    );
    svc.stop().await;
    names.cleanup().await;
}
