//! Sharded writes (`RELAY_SHARDS`): two relay-svc instances, each relaying both shards, hold
//! exactly one leader per shard between them and publish every event of both shards once, each
//! message naming its shard; the status sums the shards. The admin service lists every shard's
//! rows, each naming its shard, and moves rows of the one shard a request names.

use std::collections::{BTreeMap, HashMap};

use lapin::types::AMQPValue;
use outbox_kit::admin::AdminToken;
use outbox_proto::{
    orders::v1::{OrderStatus, order_service_client::OrderServiceClient},
    relay::admin::v1::{
        DropQuarantinedRequest, ListBacklogRequest, ListBacklogResponse, ListQuarantinedRequest,
        ListQuarantinedResponse, QuarantineSelector, RequeueQuarantinedRequest,
        relay_admin_client::RelayAdminClient,
    },
};
use relay_svc::App;
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;
use tonic::{Code, Request, metadata::MetadataValue, transport::Channel};

use crate::common::*;

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
        outbox_testkit::fresh_database_url("relay_shard"),
        outbox_testkit::fresh_database_url("relay_shard"),
    ];
    let unused = outbox_testkit::fresh_database_url("relay_unused");
    let made = outbox_testkit::Made::new();
    made.database(&urls[0]).database(&urls[1]).database(&unused);
    let list = urls.join(",");
    let orders_stop = CancellationToken::new();
    let orders = orders_svc::App::build(
        orders_svc::Config {
            database_url: unused.into(),
            shards: Some(list.as_str().into()),
            db_max_connections: 8,
            server: outbox_kit::settings::ServerSettings::on_free_ports(),
        },
        orders_stop.clone(),
    )
    .await
    .expect("orders-svc starts");
    let client = OrderServiceClient::connect(format!("http://{}", orders.grpc_addr()))
        .await
        .expect("orders client");
    let orders_task = tokio::spawn(orders.run());

    let exchange = outbox_testkit::unique("relay_shards_x");
    let consumer = Consumer::start(&exchange, Some("order.#")).await;
    let mut relays = Vec::new();
    for _ in 0..2 {
        let mut cfg = relay_config(&urls[0], &outbox_testkit::amqp_url(), &exchange);
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
            let seq = upsert(&client, id, status).await;
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

const TOKEN: &str = "shard-admin-token-0123456789";

fn authed<T>(msg: T) -> Request<T> {
    let mut r = Request::new(msg);
    r.metadata_mut().insert(
        "authorization",
        MetadataValue::try_from(format!("Bearer {TOKEN}")).expect("metadata"),
    );
    r
}

/// Puts a row straight into quarantine, as the relay would after failing to encode it.
async fn quarantine(pool: &PgPool, seq: i64, order: i64, reason: &str) {
    sqlx::query(
        "insert into outbox_quarantine (seq, aggregate_id, event_type, routing_key, payload,
                                        created_at, reason)
         values ($1, $2, 'OrderCreated', 'order.created', $3, now(), $4)",
    )
    .bind(seq)
    .bind(order)
    .bind(payload(
        order,
        OrderStatus::Pending,
        OrderStatus::Unspecified,
    ))
    .bind(reason)
    .execute(pool)
    .await
    .expect("quarantine a row");
}

/// (seq, order) of a table of one shard, by seq.
async fn rows_of(pool: &PgPool, table: &str) -> Vec<(i64, i64)> {
    sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "select seq, aggregate_id from {table} order by seq"
    )))
    .fetch_all(pool)
    .await
    .expect("read rows")
}

/// (action, ids) of a shard's audit rows, oldest first.
async fn audit_of(pool: &PgPool) -> Vec<(String, Vec<i64>)> {
    sqlx::query_as("select action, ids from admin_actions order by id")
        .fetch_all(pool)
        .await
        .expect("read admin_actions")
}

async fn admin_client(relay: &Relay) -> RelayAdminClient<Channel> {
    RelayAdminClient::connect(format!("http://{}", relay.grpc_addr))
        .await
        .expect("admin client")
}

fn requeue(shard: u32, seqs: &[u64]) -> RequeueQuarantinedRequest {
    RequeueQuarantinedRequest {
        select: Some(QuarantineSelector {
            seqs: seqs.to_vec(),
            order_id: 0,
        }),
        reason: "cause fixed".into(),
        shard,
    }
}

/// Seq 7 is quarantined on both shards (seqs are per shard), for different orders. The listings
/// show both, each with its shard; a requeue or drop naming shard 1 changes shard 1's tables and
/// audit only, one naming shard 0 shard 0's; a shard the relay does not have is refused, and an
/// unsharded relay knows shard 0 only. (The broker is unreachable: requeued rows stay in the
/// outbox to be looked at.)
#[tokio::test]
async fn admin_lists_every_shard_and_moves_rows_of_the_named_shard_only() {
    let shard0 = Orders::start().await;
    let shard1 = Orders::start().await;
    let (p0, p1) = (&shard0.pool, &shard1.pool);
    let backlog0 = shard0.upsert(1, OrderStatus::Pending).await;
    let backlog1 = [
        shard1.upsert(2, OrderStatus::Pending).await,
        shard1.upsert(3, OrderStatus::Pending).await,
    ];
    quarantine(p0, 7, 100, "zero").await;
    quarantine(p1, 7, 200, "one").await;
    quarantine(p1, 8, 201, "one more").await;

    let no_broker = "amqp://guest:guest@127.0.0.1:1/%2f";
    let exchange = outbox_testkit::unique("relay_shards_admin_x");
    let mut cfg = relay_config(&shard0.database_url, no_broker, &exchange);
    let list = format!("{},{}", shard0.database_url, shard1.database_url);
    cfg.relay_shards = Some(list.as_str().into());
    cfg.server.admin.admin_token = AdminToken::new(Some(TOKEN.into()));
    let relay = Relay::start(cfg).await;
    let mut c = admin_client(&relay).await;

    let backlog = list_backlog(c.clone())
        .await
        .expect("ListBacklog")
        .into_inner();
    assert_eq!((backlog.count, backlog.quarantined), (3, 3));
    assert_eq!(
        listed(&backlog.rows, |r| (r.shard, r.seq, r.order_id)),
        [(0, backlog0, 1), (1, backlog1[0], 2), (1, backlog1[1], 3)]
    );

    let quarantined = list_quarantined(c.clone())
        .await
        .expect("ListQuarantined")
        .into_inner();
    assert_eq!(quarantined.count, 3);
    assert_eq!(
        listed(&quarantined.rows, |r| (
            r.shard,
            r.seq,
            r.order_id,
            r.reason.as_str()
        )),
        [
            (0, 7, 100, "zero"),
            (1, 7, 200, "one"),
            (1, 8, 201, "one more")
        ]
    );

    // Shard 1's seq 7: shard 1 only.
    let r = c
        .requeue_quarantined(authed(requeue(1, &[7])))
        .await
        .expect("requeue on shard 1")
        .into_inner();
    assert_eq!((r.requeued, r.already_requeued), (vec![7], vec![]));
    assert!(rows_of(p1, "outbox").await.contains(&(7, 200)));
    assert_eq!(rows_of(p1, "outbox_quarantine").await, [(8, 201)]);
    assert_eq!(rows_of(p0, "outbox_quarantine").await, [(7, 100)]);
    assert!(!rows_of(p0, "outbox").await.iter().any(|(s, _)| *s == 7));
    assert_eq!(
        audit_of(p1).await,
        [("RequeueQuarantined".to_owned(), vec![7])]
    );
    assert!(audit_of(p0).await.is_empty(), "no audit row on shard 0");

    // An order of shard 1 by its id; shard 0 untouched.
    let r = c
        .drop_quarantined(authed(DropQuarantinedRequest {
            select: Some(QuarantineSelector {
                seqs: vec![],
                order_id: 201,
            }),
            reason: "test event".into(),
            shard: 1,
        }))
        .await
        .expect("drop on shard 1")
        .into_inner();
    assert_eq!(r.dropped, [8]);
    assert!(rows_of(p1, "outbox_quarantine").await.is_empty());
    assert_eq!(rows_of(p0, "outbox_quarantine").await, [(7, 100)]);
    assert!(audit_of(p0).await.is_empty(), "no audit row on shard 0");

    // Shard 0's seq 7 is its own row: requeued now, not "already requeued" by shard 1's call.
    let r = c
        .requeue_quarantined(authed(requeue(0, &[7])))
        .await
        .expect("requeue on shard 0")
        .into_inner();
    assert_eq!((r.requeued, r.already_requeued), (vec![7], vec![]));
    assert!(rows_of(p0, "outbox").await.contains(&(7, 100)));
    assert_eq!(
        audit_of(p0).await,
        [("RequeueQuarantined".to_owned(), vec![7])]
    );
    assert_eq!(audit_of(p1).await.len(), 2, "shard 1's audit: its own two");

    // A seq unknown on the named shard: NOT_FOUND naming the shard.
    let e = c
        .requeue_quarantined(authed(requeue(1, &[99])))
        .await
        .expect_err("unknown seq");
    assert_eq!(e.code(), Code::NotFound);
    assert!(e.message().starts_with("shard 1: "), "{}", e.message());

    // A shard the relay does not have: refused, naming the field; nothing changes.
    quarantine(p1, 9, 202, "again").await;
    let e = c
        .requeue_quarantined(authed(requeue(2, &[9])))
        .await
        .expect_err("shard 2");
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().starts_with("shard: 2 "), "{}", e.message());
    let e = c
        .drop_quarantined(authed(DropQuarantinedRequest {
            select: Some(QuarantineSelector {
                seqs: vec![9],
                order_id: 0,
            }),
            reason: "test event".into(),
            shard: 2,
        }))
        .await
        .expect_err("shard 2");
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_eq!(rows_of(p1, "outbox_quarantine").await, [(9, 202)]);
    assert_eq!(audit_of(p1).await.len(), 2);

    // Unsharded, on shard 0's database: shard 0 only, every row shard 0.
    let mut cfg = relay_config(&shard0.database_url, no_broker, &exchange);
    cfg.server.admin.admin_token = AdminToken::new(Some(TOKEN.into()));
    let single = Relay::start(cfg).await;
    let mut c = admin_client(&single).await;
    let e = c
        .requeue_quarantined(authed(requeue(1, &[9])))
        .await
        .expect_err("shard 1 unsharded");
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().starts_with("shard: 1 "), "{}", e.message());
    let backlog = c
        .list_backlog(ListBacklogRequest { limit: 10 })
        .await
        .expect("ListBacklog")
        .into_inner();
    assert_eq!(backlog.count, 2, "shard 0's backlog only");
    assert!(backlog.rows.iter().all(|r| r.shard == 0));
    assert_eq!(rows_of(p1, "outbox_quarantine").await, [(9, 202)]);
}

/// Closes a shard's database as for maintenance (`allow_connections false`, its sessions ended),
/// or opens it again.
async fn set_open(database: &str, open: bool) {
    let admin = PgPool::connect(&format!("{}/postgres", outbox_testkit::pg_server_url()))
        .await
        .expect("maintenance connection");
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "alter database \"{database}\" allow_connections {open}"
    )))
    .execute(&admin)
    .await
    .expect("alter database");
    if !open {
        sqlx::query(
            "select pg_terminate_backend(pid) from pg_stat_activity
              where datname = $1 and pid <> pg_backend_pid()",
        )
        .bind(database)
        .execute(&admin)
        .await
        .expect("end the shard's sessions");
    }
    admin.close().await;
}

/// The `key`s of listed rows (e.g. their (shard, seq)), sorted.
fn listed<'r, R, K: Ord>(rows: &'r [R], key: impl Fn(&'r R) -> K) -> Vec<K> {
    let mut keys: Vec<_> = rows.iter().map(key).collect();
    keys.sort_unstable();
    keys
}

/// The first ten backlog rows, of every shard that answers.
async fn list_backlog(
    mut c: RelayAdminClient<Channel>,
) -> Result<tonic::Response<ListBacklogResponse>, tonic::Status> {
    c.list_backlog(ListBacklogRequest { limit: 10 }).await
}

/// The first ten quarantined rows of every order, of every shard that answers.
async fn list_quarantined(
    mut c: RelayAdminClient<Channel>,
) -> Result<tonic::Response<ListQuarantinedResponse>, tonic::Status> {
    c.list_quarantined(ListQuarantinedRequest {
        limit: 10,
        order_id: 0,
    })
    .await
}

/// Shard 1's database closes: the listings answer from shard 0, naming shard 1 as left out (its
/// rows and figures not counted); with both closed they are UNAVAILABLE; once shard 1 opens again
/// it is listed again.
#[tokio::test]
async fn admin_listings_answer_from_the_shards_that_answer() {
    let shard0 = Orders::start().await;
    let shard1 = Orders::start().await;
    let backlog0 = shard0.upsert(1, OrderStatus::Pending).await;
    let backlog1 = shard1.upsert(2, OrderStatus::Pending).await;
    quarantine(&shard0.pool, 7, 100, "zero").await;
    quarantine(&shard1.pool, 7, 200, "one").await;

    let no_broker = "amqp://guest:guest@127.0.0.1:1/%2f";
    let exchange = outbox_testkit::unique("relay_shards_down_x");
    let mut cfg = relay_config(&shard0.database_url, no_broker, &exchange);
    cfg.relay_shards = Some(format!("{},{}", shard0.database_url, shard1.database_url).into());
    let relay = Relay::start(cfg).await;
    let c = admin_client(&relay).await;
    let b = list_backlog(c.clone())
        .await
        .expect("ListBacklog")
        .into_inner();
    assert_eq!(
        listed(&b.rows, |r| (r.shard, r.seq)),
        [(0, backlog0), (1, backlog1)]
    );
    assert!(b.unavailable_shards.is_empty());

    set_open(&shard1.database, false).await;
    let b = list_backlog(c.clone())
        .await
        .expect("ListBacklog, shard 1 closed")
        .into_inner();
    assert_eq!(listed(&b.rows, |r| (r.shard, r.seq)), [(0, backlog0)]);
    assert_eq!((b.count, b.quarantined), (1, 1), "shard 0's figures only");
    let left_out: Vec<u32> = b.unavailable_shards.iter().map(|u| u.shard).collect();
    assert_eq!(left_out, [1]);
    assert!(
        b.unavailable_shards[0].error.contains("unavailable"),
        "{:?}",
        b.unavailable_shards
    );
    let q = list_quarantined(c.clone())
        .await
        .expect("ListQuarantined, shard 1 closed")
        .into_inner();
    assert_eq!(
        (listed(&q.rows, |r| (r.shard, r.seq)), q.count),
        (vec![(0, 7)], 1)
    );
    let left_out: Vec<u32> = q.unavailable_shards.iter().map(|u| u.shard).collect();
    assert_eq!(left_out, [1]);

    set_open(&shard0.database, false).await;
    let e = list_backlog(c.clone()).await.expect_err("no shard answers");
    assert_eq!(e.code(), Code::Unavailable, "{e:?}");
    let e = list_quarantined(c.clone())
        .await
        .expect_err("no shard answers");
    assert_eq!(e.code(), Code::Unavailable, "{e:?}");

    set_open(&shard0.database, true).await;
    set_open(&shard1.database, true).await;
    let b = list_backlog(c.clone())
        .await
        .expect("ListBacklog, reopened")
        .into_inner();
    assert_eq!(
        listed(&b.rows, |r| (r.shard, r.seq)),
        [(0, backlog0), (1, backlog1)]
    );
    assert!(b.unavailable_shards.is_empty());
    let q = list_quarantined(c)
        .await
        .expect("ListQuarantined, reopened")
        .into_inner();
    assert_eq!(listed(&q.rows, |r| (r.shard, r.seq)), [(0, 7), (1, 7)]);
}
