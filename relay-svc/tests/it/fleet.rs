//! Fleet mode as processes: two relay-svc instances share two outbox databases through a
//! registry; one of them is frozen (SIGSTOP) past its lease, the other takes its database over,
//! and once the frozen one wakes (SIGCONT) it publishes nothing more: no message after the wake
//! repeats one delivered before it, every committed event arrives, in chain order. Only a real
//! process keeps its own timers frozen too and wakes up believing it still holds its lease.
//! (The fence itself, which turns a late delete of a woken owner into no change, is tested in
//! the relay crate: crates/outbox-relay/tests/it/fleet/fence.rs.)

use std::{
    collections::HashSet,
    io::{BufRead, BufReader},
    process::{Child, Command, Stdio},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use outbox_proto::{
    orders::v1::OrderStatus, relay::admin::v1::relay_admin_client::RelayAdminClient,
};
use outbox_relay::fleet::registry::{By, NewDatabase, Registry};
use outbox_support::secret::SecretUrl;
use tokio_util::sync::CancellationToken;

use crate::common::*;

/// Short, so the test waits seconds.
const LEASE: &str = "2s";

/// A relay-svc process in fleet mode; killed when dropped.
struct Process {
    id: String,
    child: Child,
    log: Arc<Mutex<Vec<String>>>,
}

impl Process {
    fn spawn(fleet_url: &str, id: &str) -> Self {
        Self::spawn_with(fleet_url, id, &[])
    }

    /// With `env` set besides the fleet's settings.
    fn spawn_with(fleet_url: &str, id: &str, env: &[(&str, &str)]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_relay-svc"))
            .env("FLEET_DATABASE_URL", fleet_url)
            .env("FLEET_INSTANCE_ID", id)
            .env("FLEET_LEASE", LEASE)
            .env("FLEET_POLL_INTERVAL", "500ms")
            .env("AMQP_URL", outbox_testkit::amqp_url())
            .env("GRPC_ADDR", "127.0.0.1:0")
            .env("METRICS_ADDR", "127.0.0.1:0")
            .env("LOG_FORMAT", "json")
            .env("RUST_LOG", "info")
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("relay-svc binary starts");
        let log = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take().expect("stderr");
        let lines = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                lines.lock().expect("log").push(line);
            }
        });
        Self {
            id: id.into(),
            child,
            log,
        }
    }

    fn signal(&self, sig: &str) {
        let ok = Command::new("kill")
            .args([format!("-{sig}"), self.child.id().to_string()])
            .status()
            .expect("kill runs")
            .success();
        assert!(ok, "kill -{sig}");
    }

    fn logged(&self, needle: &str) -> bool {
        self.log
            .lock()
            .expect("log")
            .iter()
            .any(|l| l.contains(needle))
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One outbox database (orders-svc's) of the fleet and the consumer of its exchange.
struct Tenant {
    name: String,
    orders: Orders,
    consumer: Consumer,
}

/// A fleet database with the registry's tables, and one orders database per `(name, source id)`
/// registered in it, each with an exchange of its own and a consumer of it.
struct FleetOf {
    url: String,
    registry: Registry,
    tenants: Vec<Tenant>,
    /// The fleet database, dropped when the test ends, passing or failing (after the instances,
    /// which the test starts later and so drops first).
    made: outbox_testkit::Made,
}

impl FleetOf {
    async fn new(prefix: &str, databases: &[(&str, i32)]) -> Self {
        let url = outbox_testkit::fresh_database_url(prefix);
        let made = outbox_testkit::Made::new();
        made.database(&url);
        let pool = outbox_kit::db::connect(&url, 4).await.expect("fleet db");
        let registry = Registry::new(pool);
        registry.migrate().await.expect("migrate");
        let by = By {
            who: "test".into(),
            reason: String::new(),
        };
        let mut tenants = Vec::new();
        for &(name, source_id) in databases {
            let (orders, exchange, consumer) = orders_and_consumer().await;
            let new = NewDatabase {
                name: name.into(),
                source_id,
                url: SecretUrl::new(orders.database_url.clone()),
                table: "outbox".into(),
                exchange,
            };
            registry.add(&new, &by).await.expect("add");
            tenants.push(Tenant {
                name: name.into(),
                orders,
                consumer,
            });
        }
        Self {
            url,
            registry,
            tenants,
            made,
        }
    }
}

async fn owner(registry: &Registry, name: &str) -> (Option<String>, i64) {
    let list = registry.list().await.expect("list");
    let e = list.iter().find(|e| e.name == name).expect("listed");
    (e.owner.clone(), e.epoch)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_frozen_instance_whose_lease_ran_out_publishes_nothing_after_it_wakes() {
    let FleetOf {
        url: fleet_url,
        registry,
        tenants,
        made,
    } = FleetOf::new("relay_fleet", &[("t0", 0), ("t1", 1)]).await;
    let a = Process::spawn(&fleet_url, &outbox_testkit::unique("a"));
    let b = Process::spawn(&fleet_url, &outbox_testkit::unique("b"));
    wait_until("each instance owns one database", || async {
        let owners: HashSet<Option<String>> = [
            owner(&registry, "t0").await.0,
            owner(&registry, "t1").await.0,
        ]
        .into();
        owners == HashSet::from([Some(a.id.clone()), Some(b.id.clone())])
    })
    .await;
    let t = &tenants[0];
    let (frozen, other) = match owner(&registry, &t.name).await.0 {
        Some(id) if id == a.id => (&a, &b),
        _ => (&b, &a),
    };
    let mut events = Vec::new();
    // First a stream through the owner, then the freeze between batches (a process frozen
    // in the middle of handing a wave to its socket sends that wave when it wakes: the window
    // this test does not cover).
    let stop = CancellationToken::new();
    let writer = keep_writing(&t.orders.client, 1, stop.clone());
    wait_until("the stream flows", || async {
        t.consumer.seqs().len() > 20
    })
    .await;
    stop.cancel();
    events.extend(writer.await.expect("writer"));
    all_arrive("before the freeze", &t.consumer, &t.orders, &events).await;
    let epoch_before = owner(&registry, &t.name).await.1;

    frozen.signal("STOP");
    let frozen_at = Instant::now();
    let stop = CancellationToken::new();
    let writer = keep_writing(&t.orders.client, 100_000, stop.clone());
    wait_until("the other instance takes the database over", || async {
        owner(&registry, &t.name).await == (Some(other.id.clone()), epoch_before + 1)
    })
    .await;
    println!(
        "frozen: taken over after {:.1}s (lease {LEASE})",
        frozen_at.elapsed().as_secs_f64()
    );
    // The new owner publishes what commits meanwhile.
    let seen = t.consumer.seqs().len();
    wait_until("the new owner publishes", || async {
        t.consumer.seqs().len() > seen + 10
    })
    .await;
    let before_wake = t.consumer.seqs();

    frozen.signal("CONT");
    wait_until("the woken instance finds its lease gone", || async {
        frozen.logged("lost the lease of db=") || frozen.logged("fenced")
    })
    .await;
    // Writes go on with both awake.
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop.cancel();
    events.extend(writer.await.expect("writer"));
    all_arrive("after the wake", &t.consumer, &t.orders, &events).await;
    let after = t.consumer.seqs();
    let delivered_before: HashSet<u64> = before_wake.iter().copied().collect();
    let mut seen_after = HashSet::new();
    let repeated: Vec<u64> = after[before_wake.len()..]
        .iter()
        .copied()
        .filter(|s| delivered_before.contains(s) || !seen_after.insert(*s))
        .collect();
    assert!(
        repeated.is_empty(),
        "after the wake, messages repeated (published by the woken instance): {repeated:?}"
    );
    assert_complete_and_ordered(&t.consumer.snapshot(), &chains_of(&events));

    drop((a, b));
    for t in tenants {
        t.consumer.cleanup().await;
    }
    registry.pool().close().await;
    drop(made);
}

/// The admin service of a fleet instance serves every database of the registry, each by its
/// source id as its shard, whether the instance owns it or not: the listings name each row's
/// database by it, a move acts on the database it names (audited there), a replay goes through
/// that database's exchange, and a source id the registry does not have is refused by name.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_admin_service_serves_every_registered_database_by_its_source_id() {
    use outbox_proto::relay::admin::v1::{
        ListQuarantinedRequest, QuarantineSelector, ReplayRequest, RequeueQuarantinedRequest,
    };

    use crate::replay::{TOKEN, with_token};

    let FleetOf {
        url: fleet_url,
        registry,
        tenants,
        made,
    } = FleetOf::new("relay_fleet_admin", &[("main", 0), ("other", 3)]).await;
    let addr = outbox_testkit::free_local_addr().expect("a port");
    let metrics_addr = outbox_testkit::free_local_addr().expect("a port");
    let instance = Process::spawn_with(
        &fleet_url,
        &outbox_testkit::unique("admin"),
        &[
            ("GRPC_ADDR", &addr.to_string()),
            ("METRICS_ADDR", &metrics_addr.to_string()),
            ("ADMIN_TOKEN", TOKEN),
        ],
    );
    wait_until("the instance owns both databases", || async {
        owner(&registry, "main").await.0.as_deref() == Some(instance.id.as_str())
            && owner(&registry, "other").await.0.as_deref() == Some(instance.id.as_str())
    })
    .await;
    wait_until("the admin service answers", || async {
        RelayAdminClient::connect(format!("http://{addr}"))
            .await
            .is_ok()
    })
    .await;
    // The instance's own figures: what it holds, and that it reaches the registry.
    wait_until("the instance's gauges", || async {
        let Ok(text) = outbox_testkit::scrape(metrics_addr).await else {
            return false;
        };
        let m = outbox_testkit::Exposition::parse(&text);
        m.value("relay_fleet_owned_databases") == Some(2.0)
            && m.value("relay_fleet_registry_up") == Some(1.0)
            && m.declared_problems(outbox_relay::status::FLEET_METRICS)
                .is_empty()
    })
    .await;
    let mut admin = RelayAdminClient::connect(format!("http://{addr}"))
        .await
        .expect("admin client");

    // A row `other`'s relay cannot encode: quarantined there.
    let other = &tenants[1];
    let bad: i64 = sqlx::query_scalar(
        "insert into outbox (aggregate_id, event_type, prev_seq, payload) \
         values (8801, 'OrderCreatd', null, '\\x00') returning seq",
    )
    .fetch_one(&other.orders.pool)
    .await
    .expect("insert");
    wait_until("the row quarantined in other", || async {
        sqlx::query_scalar::<_, i64>("select count(*) from outbox_quarantine where seq = $1")
            .bind(bad)
            .fetch_one(&other.orders.pool)
            .await
            .expect("count")
            == 1
    })
    .await;
    let listed = admin
        .list_quarantined(ListQuarantinedRequest {
            limit: 10,
            order_id: 0,
        })
        .await
        .expect("list")
        .into_inner();
    let rows: Vec<(u32, u64)> = listed.rows.iter().map(|r| (r.shard, r.seq)).collect();
    assert_eq!(rows, [(3, bad as u64)], "{listed:?}");

    let requeue = |shard: u32| RequeueQuarantinedRequest {
        shard,
        select: Some(QuarantineSelector {
            seqs: vec![bad as u64],
            order_id: 0,
        }),
        reason: "fixed the consumer".into(),
    };
    let e = admin
        .requeue_quarantined(with_token(requeue(9), Some(TOKEN)))
        .await
        .expect_err("no source id 9");
    assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
    assert!(
        e.message()
            .starts_with("shard: no database of the fleet has source id 9"),
        "{e:?}"
    );
    let e = admin
        .requeue_quarantined(with_token(requeue(0), Some(TOKEN)))
        .await
        .expect_err("not in main");
    assert_eq!(e.code(), tonic::Code::NotFound, "{e:?}");
    let done = admin
        .requeue_quarantined(with_token(requeue(3), Some(TOKEN)))
        .await
        .expect("requeued in other")
        .into_inner();
    assert_eq!(done.requeued, [bad as u64]);
    let audited: Vec<(String, Vec<i64>, String)> =
        sqlx::query_as("select action, ids, reason from admin_actions order by id")
            .fetch_all(&other.orders.pool)
            .await
            .expect("audit");
    assert_eq!(
        audited,
        [(
            "RequeueQuarantined".to_owned(),
            vec![bad],
            "fixed the consumer".to_owned()
        )]
    );

    // A replay of `other`'s order goes out through other's exchange, to the queue named.
    let seq = other.orders.upsert(8802, OrderStatus::Pending).await;
    all_arrive(
        "other's event",
        &other.consumer,
        &other.orders,
        &[(8802, seq)],
    )
    .await;
    let replayed = admin
        .replay(with_token(
            ReplayRequest {
                order_id: 8802,
                shard: 3,
                from_seq: 0,
                to_seq: 0,
                queue: other.consumer.queue.clone(),
                reason: "lost downstream".into(),
            },
            Some(TOKEN),
        ))
        .await
        .expect("replayed")
        .into_inner();
    assert_eq!(replayed.seqs, [seq as i64]);
    wait_until("the replayed event arrives again", || async {
        other.consumer.seqs().iter().filter(|s| **s == seq).count() == 2
    })
    .await;

    drop(instance);
    for t in tenants {
        t.consumer.cleanup().await;
    }
    registry.pool().close().await;
    drop(made);
}
