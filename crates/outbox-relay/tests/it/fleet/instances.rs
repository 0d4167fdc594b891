//! Fleet instances publishing many outbox databases, against the real PostgreSQL and
//! RabbitMQ: a database added is taken, a drained one finished and released, a removed one
//! left intact; a joining instance gets its share, a killed one's databases are taken over, a
//! database that is down is reported while the others flow. Every committed event arrives, in
//! chain order (each database publishes to an exchange of its own, observed by a queue bound
//! to it).

use std::time::{Duration, Instant};

use outbox_relay::{
    Settings,
    fleet::{Fleet, FleetSettings, FleetStatus, registry::Registry},
};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::{FleetDb, LEASE, by, new_database};
use crate::support::{
    all_arrive, assert_complete_and_ordered, broker::Consumer, chains_of, db::Db, wait_until,
};

/// One outbox database of the fleet and the consumer of its exchange.
struct Tenant {
    name: String,
    db: Db,
    consumer: Consumer,
}

impl Tenant {
    /// A fresh database added to the fleet as `name`.
    async fn add(fleet: &FleetDb, name: &str, source_id: i32) -> Self {
        let db = Db::fresh("fleet_tenant").await;
        let consumer = Consumer::start("#").await;
        fleet
            .registry
            .add(
                &new_database(
                    name,
                    source_id,
                    &db.database_url,
                    crate::support::db::TABLE,
                    &consumer.exchange,
                ),
                &by(),
            )
            .await
            .expect("add");
        Self {
            name: name.into(),
            db,
            consumer,
        }
    }

    /// Every one of `events` arrived, in chain order, and the outbox is empty.
    async fn all_arrived(&self, events: &[(i64, i64)]) {
        all_arrive(&self.name, &self.consumer, &self.db, events).await;
        assert_complete_and_ordered(&self.consumer.envelopes(), &chains_of(events));
    }
}

/// One running fleet instance.
struct Instance {
    id: String,
    status: FleetStatus,
    shutdown: CancellationToken,
    task: JoinHandle<()>,
}

impl Instance {
    fn start(registry: &Registry, id: &str) -> Self {
        let mut relay = Settings::new(outbox_testkit::amqp_url(), "set per database");
        relay.batch_size = 64;
        relay.backoff_min = Duration::from_millis(50);
        relay.backoff_max = Duration::from_secs(1);
        relay.confirm_timeout = Duration::from_secs(5);
        let mut settings = FleetSettings::new(id, relay);
        settings.lease = LEASE;
        settings.poll_interval = Duration::from_millis(500);
        let shutdown = CancellationToken::new();
        let fleet = Fleet::new(registry.clone(), settings, shutdown.clone());
        let status = fleet.status();
        Self {
            id: id.into(),
            status,
            shutdown,
            task: tokio::spawn(fleet.run()),
        }
    }

    /// Stops it as SIGTERM would, and waits.
    async fn stop(self) {
        self.shutdown.cancel();
        self.task.await.expect("instance stops");
    }
}

/// The owner of each database, by name.
async fn owners(registry: &Registry) -> Vec<(String, Option<String>)> {
    registry
        .list()
        .await
        .expect("list")
        .into_iter()
        .map(|e| (e.name, e.owner))
        .collect()
}

async fn owned_by(registry: &Registry, instance: &str) -> usize {
    owners(registry)
        .await
        .iter()
        .filter(|(_, o)| o.as_deref() == Some(instance))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_database_added_is_taken_drained_after_its_in_flight_work_and_removed_intact() {
    let fleet = FleetDb::fresh().await;
    let a = Instance::start(&fleet.registry, "a");
    let t1 = Tenant::add(&fleet, "t1", 1).await;
    let added = Instant::now();
    wait_until("the instance takes the new database", || async {
        owned_by(&fleet.registry, "a").await == 1
    })
    .await;
    println!(
        "added database taken after {:.1}s (lease {LEASE:?})",
        added.elapsed().as_secs_f64()
    );
    let events = t1
        .db
        .spawn_writers(3, 10, Duration::from_millis(5))
        .await
        .expect("writers");
    t1.all_arrived(&events).await;

    // Drain under a stream of writes: what the relay deleted was delivered, then it stops.
    let stop = CancellationToken::new();
    let writers = t1.db.spawn_writers_until(3, stop.clone());
    wait_until("the stream flows", || async {
        t1.consumer.seqs().len() > events.len() + 20
    })
    .await;
    fleet.registry.drain("t1", &by()).await.expect("drain");
    wait_until("the database is drained", || async {
        fleet.registry.list().await.expect("list")[0].state
            == outbox_relay::fleet::registry::State::Drained
    })
    .await;
    stop.cancel();
    let during = writers.await.expect("writers");
    let entry = &fleet.registry.list().await.expect("list")[0];
    assert_eq!(entry.owner, None, "drained: released");
    assert!(
        a.status.databases().is_empty(),
        "no relay of a drained database"
    );
    // Nothing deleted was lost: every row gone from the outbox arrived.
    t1.consumer.drained().await;
    let unsent: std::collections::HashSet<i64> = t1.db.unsent().await.into_iter().collect();
    let gone: Vec<(i64, i64)> = during
        .iter()
        .copied()
        .filter(|(_, s)| !unsent.contains(s))
        .collect();
    assert!(
        t1.consumer
            .has_all(&gone.iter().map(|(_, s)| *s).collect::<Vec<_>>())
    );
    // Nothing more is published: a new row stays.
    let later = t1
        .db
        .append(&[crate::support::db::event(999_999, "created")])
        .await;
    tokio::time::sleep(2 * LEASE).await;
    assert!(
        t1.db.unsent().await.contains(&later[0]),
        "a drained database is not published"
    );

    fleet
        .registry
        .remove("t1", false, &by())
        .await
        .expect("remove drained");
    assert!(fleet.registry.list().await.expect("list").is_empty());
    assert!(
        t1.db.unsent().await.contains(&later[0]),
        "a removed database's outbox is left intact"
    );
    a.stop().await;
    t1.consumer.cleanup().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_joining_instance_gets_its_share_and_a_killed_ones_databases_are_taken_over() {
    let fleet = FleetDb::fresh().await;
    let mut tenants = Vec::new();
    for i in 0..4 {
        tenants.push(Tenant::add(&fleet, &format!("t{i}"), i).await);
    }
    let a = Instance::start(&fleet.registry, "a");
    wait_until("a takes every database", || async {
        owned_by(&fleet.registry, "a").await == 4
    })
    .await;
    let stop = CancellationToken::new();
    let writers: Vec<_> = tenants
        .iter()
        .map(|t| t.db.spawn_writers_until(2, stop.clone()))
        .collect();

    let joined = Instant::now();
    let b = Instance::start(&fleet.registry, "b");
    wait_until("b gets its share (2 of 4)", || async {
        owned_by(&fleet.registry, "b").await == 2 && owned_by(&fleet.registry, "a").await == 2
    })
    .await;
    println!(
        "join: share taken after {:.1}s (lease {LEASE:?})",
        joined.elapsed().as_secs_f64()
    );

    // Killed: its task aborted, its connections dropped, its leases left to run out.
    let killed = Instant::now();
    a.task.abort();
    wait_until("b takes over a's databases", || async {
        owned_by(&fleet.registry, "b").await == 4
    })
    .await;
    println!(
        "kill: taken over after {:.1}s (lease {LEASE:?})",
        killed.elapsed().as_secs_f64()
    );
    assert_eq!(b.status.databases().len(), 4);
    wait_until("the stream flows after the takeover", || async {
        tenants.iter().all(|t| t.consumer.seqs().len() > 40)
    })
    .await;
    stop.cancel();
    for (t, w) in tenants.iter().zip(writers) {
        let events = w.await.expect("writers");
        t.all_arrived(&events).await;
    }
    let _ = a.id;
    b.stop().await;
    for t in tenants {
        t.consumer.cleanup().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_database_that_is_down_is_reported_and_the_others_keep_flowing() {
    let fleet = FleetDb::fresh().await;
    let t1 = Tenant::add(&fleet, "t1", 1).await;
    let t2 = Tenant::add(&fleet, "t2", 2).await;
    // Nothing listens there: every connect is refused.
    let down = outbox_testkit::free_local_addr().expect("a free port");
    fleet
        .registry
        .add(
            &new_database(
                "down",
                3,
                &format!("postgres://relay:s3cr3t-pw@{down}/gone"),
                "outbox",
                &t1.consumer.exchange,
            ),
            &by(),
        )
        .await
        .expect("add");
    let a = Instance::start(&fleet.registry, "a");
    let events = [
        t1.db.spawn_writers(2, 10, Duration::from_millis(5)),
        t2.db.spawn_writers(2, 10, Duration::from_millis(5)),
    ];
    let [e1, e2] = events;
    let (e1, e2) = (e1.await.expect("writers"), e2.await.expect("writers"));
    t1.all_arrived(&e1).await;
    t2.all_arrived(&e2).await;
    wait_until("the database down shows its error in the list", || async {
        let list = fleet.registry.list().await.expect("list");
        let down = list.iter().find(|e| e.name == "down").expect("listed");
        down.owner.as_deref() == Some("a") && down.last_error.is_some()
    })
    .await;
    let list = fleet.registry.list().await.expect("list");
    let entry = list.iter().find(|e| e.name == "down").expect("listed");
    let (error, _) = entry.last_error.as_ref().expect("error");
    println!("down: {error}");
    assert!(!error.contains("s3cr3t"), "{error}");
    a.stop().await;
    t1.consumer.cleanup().await;
    t2.consumer.cleanup().await;
}
