//! Sharded writes (`RELAY_SHARDS`): two relay-svc instances, each relaying both shards, hold
//! exactly one leader per shard between them and publish every event of both shards once, each
//! message naming its shard; the status sums the shards.

mod common;

use std::collections::{BTreeMap, HashMap};

use common::*;
use lapin::types::AMQPValue;
use outbox_kit::{telemetry::LogFormat, testing};
use outbox_proto::orders::v1::{OrderStatus, order_service_client::OrderServiceClient};
use relay_svc::App;
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;

fn shard_of(r: &Received) -> String {
    let headers = r.properties.headers().as_ref().expect("headers");
    match headers.inner().get("shard") {
        Some(AMQPValue::LongString(s)) => String::from_utf8_lossy(s.as_bytes()).into_owned(),
        other => panic!("seq {}: shard header {other:?}", r.event.seq),
    }
}

#[tokio::test]
async fn one_leader_per_shard_and_every_event_of_both_shards_once() {
    init_logs();
    let urls = [
        testing::fresh_database_url("relay_shard"),
        testing::fresh_database_url("relay_shard"),
    ];
    let list = urls.join(",");
    let orders_stop = CancellationToken::new();
    let orders = orders_svc::App::build(
        orders_svc::Config {
            grpc_addr: "127.0.0.1:0".parse().expect("addr"),
            metrics_addr: "127.0.0.1:0".parse().expect("addr"),
            database_url: testing::fresh_database_url("relay_unused").into(),
            shards: Some(list.as_str().into()),
            db_max_connections: 8,
            grpc_security: Default::default(),
            log_format: LogFormat::Text,
        },
        orders_stop.clone(),
    )
    .await
    .expect("orders-svc starts");
    let client = OrderServiceClient::connect(format!("http://{}", orders.grpc_addr()))
        .await
        .expect("orders client");
    let orders_task = tokio::spawn(orders.run());

    let exchange = testing::unique("relay_shards_x");
    let consumer = Consumer::start(&exchange, Some("order.#")).await;
    let mut relays = Vec::new();
    for _ in 0..2 {
        let mut cfg = relay_config(&urls[0], &testing::amqp_url(), &exchange);
        cfg.relay_shards = Some(list.as_str().into());
        let stop = CancellationToken::new();
        let app = App::build(cfg, stop.clone()).await.expect("relay starts");
        let statuses = app.shard_statuses().to_vec();
        assert_eq!(statuses.len(), 2);
        relays.push((stop, statuses, tokio::spawn(app.run())));
    }

    // (order, seq) per shard, in commit order.
    let mut committed: HashMap<String, Vec<(i64, u64)>> = HashMap::new();
    for id in 1..=40 {
        let shard = orders_svc::shard::of(id, 2).to_string();
        for status in [
            OrderStatus::Pending,
            OrderStatus::Paid,
            OrderStatus::Shipped,
        ] {
            let seq = upsert_via(&client, id, status).await;
            committed.entry(shard.clone()).or_default().push((id, seq));
        }
    }
    assert_eq!(committed.len(), 2, "both shards got orders");
    let total: usize = committed.values().map(Vec::len).sum();
    wait_until("every event of both shards arrives", || async {
        consumer.snapshot().len() >= total
    })
    .await;
    // Let late duplicates, if any, arrive before counting.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let received = consumer.snapshot();
    let mut by_shard: HashMap<String, Vec<Received>> = HashMap::new();
    for r in received {
        by_shard.entry(shard_of(&r)).or_default().push(r);
    }
    for (shard, events) in &committed {
        let got = &by_shard[shard];
        let mut seqs: Vec<u64> = got.iter().map(|r| r.event.seq).collect();
        seqs.sort_unstable();
        let mut want: Vec<u64> = events.iter().map(|(_, s)| *s).collect();
        want.sort_unstable();
        assert_eq!(seqs, want, "shard {shard}: every event exactly once");
        let chains: BTreeMap<i64, Vec<u64>> = chains_of(events);
        assert_complete_and_ordered(got, &chains);
    }
    // Seqs collide across shards: that is why the header is needed.
    let seqs_of = |s: &str| -> Vec<u64> { committed[s].iter().map(|(_, q)| *q).collect() };
    assert!(seqs_of("0").iter().any(|s| seqs_of("1").contains(s)));

    for shard in 0..2 {
        let leaders = relays
            .iter()
            .filter(|(_, statuses, _)| statuses[shard].snapshot().active)
            .count();
        assert_eq!(leaders, 1, "shard {shard}: exactly one active leader");
    }
    for url in &urls {
        let pool = PgPool::connect(url).await.expect("shard");
        let left: i64 = sqlx::query_scalar("select count(*) from outbox")
            .fetch_one(&pool)
            .await
            .expect("outbox");
        assert_eq!(left, 0, "{url}: outbox drained");
    }

    for (stop, _, task) in relays {
        stop.cancel();
        task.await.expect("join").expect("relay stops");
    }
    orders_stop.cancel();
    orders_task.await.expect("join").expect("orders stops");
    consumer.cleanup().await;
}
