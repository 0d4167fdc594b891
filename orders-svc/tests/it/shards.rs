//! Sharded writes (`SHARDS`): every order, its events and its outbox rows live in its own shard's
//! database only, GetOrder reads it there, each event names its shard, and a bad list is refused
//! naming the setting without showing a password.

use orders_svc::{App, shard};
use outbox_proto::orders::v1::{GetOrderRequest, OrderStatus};
use outbox_testkit::{
    on_free_ports,
    secrets::{PASSWORD, assert_binary_refuses, assert_error_names_setting},
};
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;

use crate::common;

/// The order ids and `(seq, shard header)` of every outbox row of one shard.
async fn outbox_rows(pool: &PgPool) -> Vec<(i64, i64, Option<String>)> {
    sqlx::query_as("select aggregate_id, seq, headers->>'shard' from outbox order by seq")
        .fetch_all(pool)
        .await
        .expect("outbox")
}

#[tokio::test]
async fn each_order_is_written_and_read_in_its_own_shard_only() {
    let urls = [
        outbox_testkit::fresh_database_url("orders_shard"),
        outbox_testkit::fresh_database_url("orders_shard"),
    ];
    let mut cfg = common::config(outbox_testkit::fresh_database_url("orders_unused"));
    cfg.shards = Some(urls.join(",").into());
    let t = common::start_with(cfg).await;
    let pools = [
        PgPool::connect(&urls[0]).await.expect("shard 0"),
        PgPool::connect(&urls[1]).await.expect("shard 1"),
    ];

    let ids: Vec<i64> = (1..=40).collect();
    for &id in &ids {
        common::upsert(&t, id, OrderStatus::Pending, "a@example.com")
            .await
            .expect("create");
        common::upsert(&t, id, OrderStatus::Paid, "")
            .await
            .expect("pay");
    }
    // Both shards are used: the test would prove nothing with every order in one of them.
    let in_shard = |s: usize| -> Vec<i64> {
        ids.iter()
            .copied()
            .filter(|&id| shard::of(id, 2) == s)
            .collect()
    };
    assert!(!in_shard(0).is_empty() && !in_shard(1).is_empty());

    for (s, pool) in pools.iter().enumerate() {
        let orders: Vec<i64> = sqlx::query_scalar("select id from orders order by id")
            .fetch_all(pool)
            .await
            .expect("orders");
        assert_eq!(orders, in_shard(s), "orders of shard {s}");
        let rows = outbox_rows(pool).await;
        let mut event_orders: Vec<i64> = rows.iter().map(|(id, _, _)| *id).collect();
        event_orders.sort_unstable();
        event_orders.dedup();
        assert_eq!(event_orders, in_shard(s), "outbox of shard {s}");
        assert_eq!(rows.len(), 2 * in_shard(s).len(), "two events per order");
        let tag = s.to_string();
        assert!(
            rows.iter()
                .all(|(_, _, h)| h.as_deref() == Some(tag.as_str())),
            "every event of shard {s} says so: {rows:?}"
        );
    }
    for &id in &ids {
        let order = t
            .client
            .clone()
            .get_order(GetOrderRequest { id })
            .await
            .expect("read from its shard")
            .into_inner();
        assert_eq!(order.status, OrderStatus::Paid as i32, "order {id}");
    }
    t.shutdown.cancel();
    t.app.await.expect("join").expect("clean stop");
}

#[tokio::test]
async fn one_shard_writes_the_events_of_today() {
    let t = common::start().await;
    common::upsert(&t, 7, OrderStatus::Pending, "a@example.com")
        .await
        .expect("create");
    let rows = outbox_rows(&t.pool).await;
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].2, None, "no shard header without SHARDS");
    t.shutdown.cancel();
    t.app.await.expect("join").expect("clean stop");
}

#[tokio::test]
async fn a_bad_shard_list_names_the_setting_and_hides_the_password() {
    let good = outbox_testkit::fresh_database_url("orders_shard");
    let bad = [
        format!("{good},postgres://app:{PASSWORD}@127.0.0.1:notaport/orders"),
        format!("{good},postgres://app:{PASSWORD}@127.0.0.1:1/orders"),
        format!("{good},,postgres://app:{PASSWORD}@db/orders"),
    ];
    for list in bad {
        let mut cfg = common::config(good.clone());
        cfg.shards = Some(list.as_str().into());
        let debug = format!("{cfg:?}");
        assert!(!debug.contains(PASSWORD), "Debug of Config: {debug}");
        let err = App::build(cfg, CancellationToken::new())
            .await
            .expect_err("cannot start");
        assert_error_names_setting(&err, "SHARDS", &list);
        assert_binary_refuses(
            on_free_ports(env!("CARGO_BIN_EXE_orders-svc"))
                .env("SHARDS", &list)
                .env("RUST_LOG", "debug"),
            "SHARDS",
            &list,
        );
    }
}
