//! A database outage: Upsert answers UNAVAILABLE (no panic, no SQL text), writes nothing, and the
//! service recovers by itself when the database is back.

use outbox_proto::orders::v1::OrderStatus;
use outbox_testkit::{Proxy, pg_server_url, unique};
use tonic::Code;

use crate::common::{config, count, start_with, upsert};

#[tokio::test]
async fn database_outage_test_is_unavailable_then_recovers() {
    let proxy = Proxy::start(&outbox_testkit::pg_addr())
        .await
        .expect("proxy");
    let name = unique("orders_outage_test");
    let via_proxy = outbox_testkit::pg_url_via(proxy.addr(), &name);
    let t = start_with(config(via_proxy)).await;
    upsert(&t, 1, OrderStatus::Pending, "a@example.com")
        .await
        .expect("before outage");

    proxy.cut();
    for status in [OrderStatus::Paid, OrderStatus::Shipped] {
        let err = upsert(&t, 1, status, "")
            .await
            .expect_err("database is down");
        assert_eq!(err.code(), Code::Unavailable, "{err:?}");
        assert!(
            !err.message().to_lowercase().contains("select"),
            "no SQL leaks: {}",
            err.message()
        );
    }
    let err = upsert(&t, 2, OrderStatus::Pending, "b@example.com")
        .await
        .expect_err("down");
    assert_eq!(err.code(), Code::Unavailable);

    proxy.restore();
    // The pool reconnects on its own; the first call after the outage may still meet a dead
    // pooled connection, so allow a few attempts.
    let mut resp = None;
    for _ in 0..20 {
        match upsert(&t, 1, OrderStatus::Paid, "").await {
            Ok(r) => {
                resp = Some(r);
                break;
            }
            Err(e) => {
                assert_eq!(e.code(), Code::Unavailable, "{e:?}");
                tokio::time::sleep(std::time::Duration::from_millis(200)).await;
            }
        }
    }
    let resp = resp.expect("recovered after the outage");
    assert_eq!(resp.order.expect("order").version, 2);

    // Read through a direct connection: the calls during the outage left nothing behind.
    let direct = sqlx::PgPool::connect(&format!("{}/{name}", pg_server_url()))
        .await
        .expect("direct");
    assert_eq!(count(&direct, "outbox").await, 2);
    assert_eq!(count(&direct, "orders").await, 1);
}
