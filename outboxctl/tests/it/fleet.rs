//! `outboxctl fleet` through the real binary against a real fleet database and real outbox
//! databases written by the real orders-svc (two shards, so shard 1's events carry `shard: 1`):
//! add (its source-id check against what the producer stamps), drain, remove, list, each
//! recorded in `fleet_actions` with its reason, a URL's password never printed; and `--db NAME`
//! scoping the audit and the trace to one database of the fleet (or of a fixed deployment).

use outbox_ops::fleet::{Registry, registry};
use outbox_proto::orders::v1::OrderStatus;
use serde_json::Value;
use sqlx::PgPool;

use crate::common::{Ctl, Run, Stack, StackCtl as _};

/// The password every URL of these tests carries (the server trusts local logins, so any
/// password connects): it must appear in no output.
const PASSWORD: &str = "s3cr3t-pw-4711";

/// `url` with [`PASSWORD`] in it.
fn with_password(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("a URL");
    match rest.split_once('@') {
        Some((user, host)) => format!("{scheme}://{user}:{PASSWORD}@{host}"),
        None => format!("{scheme}://postgres:{PASSWORD}@{rest}"),
    }
}

/// A database made for a test and dropped by [`Databases::drop_all`].
#[derive(Default)]
pub struct Databases(Vec<String>);

impl Databases {
    /// A fresh, empty database; its URL.
    pub async fn create(&mut self, prefix: &str) -> String {
        let url = outbox_testkit::fresh_database_url(prefix);
        let name = outbox_testkit::database_name(&url).to_owned();
        let admin = PgPool::connect(&format!("{}/postgres", outbox_testkit::pg_server_url()))
            .await
            .expect("admin connection");
        sqlx::query(sqlx::AssertSqlSafe(format!("create database \"{name}\"")))
            .execute(&admin)
            .await
            .expect("create database");
        admin.close().await;
        self.0.push(name);
        url
    }

    /// Remembers a database another party created (orders-svc).
    fn adopt(&mut self, url: &str) {
        self.0.push(outbox_testkit::database_name(url).to_owned());
    }

    pub async fn drop_all(&self) {
        for name in &self.0 {
            let _ = outbox_testkit::drop_database(name).await;
        }
    }
}

/// orders-svc on two shards (`SHARDS`), as a producer writes them: orders 1..=8 spread over
/// both, then stopped. The shards' URLs.
async fn two_shards(dbs: &mut Databases) -> [String; 2] {
    let shards = [
        outbox_testkit::fresh_database_url("relay_ctl_fleet_s0"),
        outbox_testkit::fresh_database_url("relay_ctl_fleet_s1"),
    ];
    for url in &shards {
        dbs.adopt(url);
    }
    let (mut orders, _, client) =
        outbox_testkit::stack::start_orders_on(&format!("--shards={}", shards.join(","))).await;
    for id in 1..=8 {
        outbox_testkit::orders::upsert(&client, id, OrderStatus::Pending).await;
    }
    orders.stop_in_place().await;
    shards
}

async fn outbox_rows(url: &str) -> i64 {
    let pool = PgPool::connect(url).await.expect("connect");
    let n = sqlx::query_scalar("select count(*) from outbox")
        .fetch_one(&pool)
        .await
        .expect("count");
    pool.close().await;
    n
}

/// A Ctl for commands that reach no service (the fleet's), pointed at the fleet database.
fn fleet_ctl(fleet_url: &str) -> (Ctl, String) {
    let ctl = Ctl {
        orders: "127.0.0.1:1".into(),
        relay: "127.0.0.1:1".into(),
        mail: "127.0.0.1:1".into(),
        orders_db: String::new(),
        mail_db: String::new(),
    };
    (ctl, format!("--fleet-database-url={fleet_url}"))
}

#[track_caller]
fn fails(r: &Run, code: i32, text: &str) {
    assert_eq!(r.code, code, "{r:?}");
    assert!(r.stderr.contains(text), "expected {text:?} in: {r:?}");
}

#[track_caller]
fn no_password(runs: &[&Run]) {
    for r in runs {
        assert!(
            !r.stdout.contains(PASSWORD) && !r.stderr.contains(PASSWORD),
            "the password was printed: {r:?}"
        );
    }
}

/// The operators' audit rows: (actor, action, database, reason, detail), oldest first.
async fn actions(pool: &PgPool) -> Vec<(String, String, String, String, String)> {
    sqlx::query_as("select actor, action, database, reason, detail from fleet_actions order by id")
        .fetch_all(pool)
        .await
        .expect("fleet_actions")
}

fn names_and_states(list: &Value) -> Vec<(String, String)> {
    list["databases"]
        .as_array()
        .expect("databases")
        .iter()
        .map(|d| {
            (
                d["name"].as_str().expect("name").to_owned(),
                d["state"].as_str().expect("state").to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fleet_add_drain_remove_and_list_change_the_registry_and_record_each_action() {
    let mut dbs = Databases::default();
    let fleet_url = with_password(&dbs.create("relay_ctl_fleet").await);
    let [s0, s1] = two_shards(&mut dbs).await;
    let empty = dbs.create("relay_ctl_fleet_empty").await;
    let before = (outbox_rows(&s0).await, outbox_rows(&s1).await);
    assert!(
        before.0 > 0 && before.1 > 0,
        "both shards have events: {before:?}"
    );
    let (ctl, fleet) = fleet_ctl(&fleet_url);
    let mut runs = Vec::new();
    let add = |name: &str, id: &str, url: &str| {
        [
            fleet.clone(),
            "fleet".into(),
            "add".into(),
            "--name".into(),
            name.into(),
            "--source-id".into(),
            id.into(),
            "--url".into(),
            with_password(url),
            "--exchange".into(),
            "orders.events".into(),
        ]
    };
    let run = |args: Vec<String>| {
        let ctl = ctl.clone();
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            ctl.run(None, &args).await
        }
    };
    let change = |args: Vec<String>, reason: &str| {
        let mut args = args;
        args.extend(["--reason".to_owned(), reason.to_owned()]);
        run(args)
    };
    let list = || {
        run(vec![
            "--json".into(),
            fleet.clone(),
            "fleet".into(),
            "list".into(),
        ])
    };

    // Nothing registered yet; no fleet database named is a clear error.
    let empty_list = list().await.ok();
    assert_eq!(names_and_states(&empty_list.json()), []);
    let no_fleet = ctl.run(None, &["fleet", "list"]).await;
    fails(
        &no_fleet,
        1,
        "--fleet-database-url or set FLEET_DATABASE_URL",
    );

    // Shard 1's events carry shard 1: any other id is refused, naming the flag, and nothing
    // is registered or recorded.
    let wrong = change(add("orders-1", "2", &s1).to_vec(), "shard 1 in").await;
    fails(
        &wrong,
        1,
        "--source-id: 2 disagrees with the shard its producer stamps",
    );
    assert!(wrong.stderr.contains("shard \"1\""), "{wrong:?}");
    // Shard 0 of several stamps 0.
    let wrong0 = change(add("orders-0", "1", &s0).to_vec(), "shard 0 in").await;
    fails(&wrong0, 1, "--source-id: 1 disagrees");
    assert!(wrong0.stderr.contains("shard \"0\""), "{wrong0:?}");
    let no_reason = change(add("orders-1", "1", &s1).to_vec(), " ").await;
    fails(&no_reason, 2, "--reason <REASON>': required");
    let bad_name = change(add("Orders 1", "1", &s1).to_vec(), "x").await;
    fails(&bad_name, 1, "--name:");
    assert_eq!(names_and_states(&list().await.ok().json()), []);

    // The ids the producer stamps are taken; so is any id of a database without events.
    let added = change(add("orders-1", "1", &s1).to_vec(), "shard 1 into the fleet")
        .await
        .ok();
    assert!(
        added.stdout.contains("added orders-1 (source id 1"),
        "{added:?}"
    );
    change(add("orders-0", "0", &s0).to_vec(), "shard 0 into the fleet")
        .await
        .ok();
    change(add("tenant-new", "9", &empty).to_vec(), "a new tenant")
        .await
        .ok();
    let dup_name = change(add("orders-1", "5", &empty).to_vec(), "again").await;
    fails(
        &dup_name,
        1,
        "--name: a database with this name is in the fleet already",
    );
    let dup_id = change(add("other", "9", &empty).to_vec(), "again").await;
    fails(
        &dup_id,
        1,
        "--source-id: a database with this source_id is in the fleet already",
    );
    runs.extend([wrong, wrong0, no_reason, bad_name, added, dup_name, dup_id]);

    let listed = list().await.ok();
    let doc = listed.json();
    assert_eq!(
        names_and_states(&doc),
        [
            ("orders-0".into(), "active".into()),
            ("orders-1".into(), "active".into()),
            ("tenant-new".into(), "active".into())
        ]
    );
    let first = &doc["databases"][0];
    assert_eq!(first["source_id"], 0);
    assert_eq!(first["owner"], Value::Null);
    assert_eq!(first["epoch"], 0);
    assert!(
        first["url"].as_str().expect("url").contains("***"),
        "{first}"
    );
    runs.push(listed);

    // An instance claims orders-1 and reports an error that quotes its URL: the list shows the
    // owner and the epoch, and the error without the password.
    let pool = PgPool::connect(&fleet_url).await.expect("fleet database");
    let reg = Registry::new(pool.clone());
    let lease = std::time::Duration::from_secs(60);
    let claimed = registry::claim(&reg, "relay-a", "orders-1", lease)
        .await
        .expect("claim")
        .expect("free");
    let error = format!("cannot connect to {}: refused", with_password(&s1));
    registry::report(
        &reg,
        "relay-a",
        &[registry::Report {
            name: "orders-1".into(),
            epoch: claimed.epoch,
            backlog: 12,
            oldest_unsent_secs: Some(3.5),
            last_error: Some(error),
        }],
    )
    .await
    .expect("report");
    let human = run(vec![fleet.clone(), "fleet".into(), "list".into()])
        .await
        .ok();
    let row = human
        .stdout
        .lines()
        .find(|l| l.starts_with("orders-1"))
        .expect("orders-1's row");
    for cell in ["relay-a", "12", "3s", "refused"] {
        assert!(row.contains(cell), "{cell:?} in {row:?}");
    }
    assert!(
        human
            .stdout
            .contains("3 database(s), 2 without an owner, 1 failing"),
        "{human:?}"
    );
    let doc = list().await.ok();
    let one = &doc.json()["databases"][1];
    assert_eq!(
        (one["owner"].as_str(), one["epoch"].as_i64()),
        (Some("relay-a"), Some(1))
    );
    assert_eq!(one["backlog"], 12);
    assert_eq!(one["oldest_unsent_age_ms"], 3500);
    assert!(
        one["last_error"].as_str().expect("error").contains("***"),
        "{one}"
    );
    runs.extend([human, doc]);

    // Drain: draining; again: no change. Remove refuses a database not drained...
    let name = |n: &str| n.to_owned();
    let drain = change(
        vec![
            fleet.clone(),
            "fleet".into(),
            "drain".into(),
            name("orders-1"),
        ],
        "leaves",
    )
    .await
    .ok();
    assert!(drain.stdout.contains("orders-1: draining"), "{drain:?}");
    let again = change(
        vec![
            "--json".into(),
            fleet.clone(),
            "fleet".into(),
            "drain".into(),
            name("orders-1"),
        ],
        "leaves",
    )
    .await
    .ok();
    assert_eq!(again.json()["was"], "draining");
    let early = change(
        vec![
            fleet.clone(),
            "fleet".into(),
            "remove".into(),
            name("orders-1"),
        ],
        "gone",
    )
    .await;
    fails(&early, 1, "is draining, not drained");
    let unknown = change(
        vec![fleet.clone(), "fleet".into(), "drain".into(), name("nope")],
        "x",
    )
    .await;
    fails(&unknown, 4, "no database \"nope\" in the fleet");
    // ...until its owner finished it; then it goes. tenant-new goes by force.
    assert!(
        registry::mark_drained(&reg, "relay-a", "orders-1", claimed.epoch)
            .await
            .expect("drained")
    );
    let removed = change(
        vec![
            "--json".into(),
            fleet.clone(),
            "fleet".into(),
            "remove".into(),
            name("orders-1"),
        ],
        "drained, gone",
    )
    .await
    .ok();
    assert_eq!(
        (
            removed.json()["was"].as_str(),
            removed.json()["forced"].as_bool()
        ),
        (Some("drained"), Some(false))
    );
    let forced = change(
        vec![
            fleet.clone(),
            "fleet".into(),
            "remove".into(),
            name("tenant-new"),
            "--force".into(),
        ],
        "never used",
    )
    .await
    .ok();
    assert!(
        forced.stdout.contains("was active (it was not drained"),
        "{forced:?}"
    );
    assert_eq!(
        names_and_states(&list().await.ok().json()),
        [("orders-0".into(), "active".into())]
    );
    runs.extend([drain, again, early, unknown, removed, forced]);

    // Every action is recorded with its reason and effect, refusals not at all; the outbox
    // databases are as they were.
    let recorded = actions(&pool).await;
    let summary: Vec<(&str, &str, &str)> = recorded
        .iter()
        .map(|(who, what, db, _, _)| (who.as_str(), what.as_str(), db.as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            ("test-operator", "add", "orders-1"),
            ("test-operator", "add", "orders-0"),
            ("test-operator", "add", "tenant-new"),
            ("test-operator", "drain", "orders-1"),
            ("test-operator", "drain", "orders-1"),
            ("test-operator", "remove", "orders-1"),
            ("test-operator", "remove --force", "tenant-new"),
        ]
    );
    assert_eq!(recorded[0].3, "shard 1 into the fleet");
    assert!(recorded[0].4.contains("source_id=1"), "{:?}", recorded[0]);
    assert_eq!(recorded[3].4, "was active");
    assert!(
        recorded.iter().all(|r| !r.4.contains(PASSWORD)),
        "{recorded:?}"
    );
    assert_eq!((outbox_rows(&s0).await, outbox_rows(&s1).await), before);
    no_password(&runs.iter().collect::<Vec<_>>());

    pool.close().await;
    dbs.drop_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn db_scopes_the_audit_and_the_trace_to_one_database_of_the_fleet() {
    let mut stack = Stack::start().await;
    let mut dbs = Databases::default();
    let fleet_url = dbs.create("relay_ctl_fleet").await;
    // A second orders database, quiet (orders-svc creates its schema).
    let quiet = outbox_testkit::fresh_database_url("relay_ctl_fleet_quiet");
    dbs.adopt(&quiet);
    let (mut orders, _, _) =
        outbox_testkit::stack::start_orders_on(&format!("--database-url={quiet}")).await;
    orders.stop_in_place().await;
    // An order mailed, then one whose event stays in the outbox (the relay stopped): it lags.
    let mailed = stack.upsert(7301, OrderStatus::Pending).await;
    stack.wait_until_sent("7301's mail", 7301, &[mailed]).await;
    stack.stop_relay().await;
    stack.upsert(7302, OrderStatus::Pending).await;

    let ctl = stack.ctl();
    let fleet = format!("--fleet-database-url={fleet_url}");
    let main_db = stack.names.orders_db.clone();
    // An unsharded orders-svc stamps no shard header: its events are shard 0's.
    let wrong = ctl
        .change(
            &[
                &fleet,
                "fleet",
                "add",
                "--name",
                "main",
                "--source-id",
                "5",
                "--url",
                &main_db,
                "--exchange",
                "orders.events",
            ],
            "the orders database",
        )
        .await;
    fails(&wrong, 1, "--source-id: 5 disagrees");
    assert!(wrong.stderr.contains("no shard header: 0"), "{wrong:?}");
    for (name, id, url) in [
        ("main", "0", main_db.as_str()),
        ("quiet", "3", quiet.as_str()),
    ] {
        ctl.change(
            &[
                &fleet,
                "fleet",
                "add",
                "--name",
                name,
                "--source-id",
                id,
                "--url",
                url,
                "--exchange",
                "orders.events",
            ],
            "the orders databases",
        )
        .await
        .ok();
    }

    // Across the fleet: 7302 lags in main, none in quiet, per database.
    let all = ctl
        .run(None, &["--json", &fleet, "audit", "--grace", "1ms"])
        .await;
    assert_eq!(all.code, i32::from(outboxctl::Failure::LAGGING), "{all:?}");
    let doc = all.json();
    let lagging: Vec<(&str, i64)> = doc["lagging"]
        .as_array()
        .expect("lagging")
        .iter()
        .map(|l| {
            (
                l["db"].as_str().expect("db"),
                l["order_id"].as_i64().expect("id"),
            )
        })
        .collect();
    assert_eq!(lagging, [("main", 7302)]);
    assert_eq!(
        doc["databases"],
        serde_json::json!([
            {"db": "main", "shard": 0, "lagging": 1},
            {"db": "quiet", "shard": 3, "lagging": 0},
        ])
    );
    let human = ctl.run(None, &[&fleet, "audit", "--grace", "1ms"]).await;
    assert!(
        human
            .stdout
            .contains("lagging per database: main=1 quiet=0"),
        "{human:?}"
    );

    // One database: quiet has nothing; an unknown name is refused with the names there are.
    let one = ctl
        .run(
            None,
            &["--json", &fleet, "audit", "--grace", "1ms", "--db", "quiet"],
        )
        .await
        .ok();
    assert_eq!(one.json()["lagging"], serde_json::json!([]));
    assert_eq!(one.json()["databases"][0]["db"], "quiet");
    let unknown = ctl.run(None, &[&fleet, "audit", "--db", "nope"]).await;
    fails(
        &unknown,
        1,
        "--db: no database \"nope\" in the fleet: main, quiet",
    );

    // The trace reads the database named.
    let traced = ctl
        .run(
            None,
            &["--json", &fleet, "trace", "--db", "main", "--order", "7302"],
        )
        .await
        .ok();
    assert_eq!(traced.json()["db"], "main");
    assert_eq!(
        traced.json()["events"][0]["stopped_at"],
        "not published yet"
    );
    let elsewhere = ctl
        .run(None, &[&fleet, "trace", "--db", "quiet", "--order", "7302"])
        .await;
    fails(&elsewhere, 4, "no event of order 7302 in quiet's outbox");

    // A fixed deployment: `shard-N` (or N) names orders-svc's shard N; a shard it does not
    // have is refused, as is a fleet name without the fleet database.
    let fixed = ctl
        .run(
            None,
            &["--json", "audit", "--grace", "1ms", "--db", "shard-0"],
        )
        .await;
    assert_eq!(
        fixed.code,
        i32::from(outboxctl::Failure::LAGGING),
        "{fixed:?}"
    );
    assert_eq!(fixed.json()["lagging"][0]["db"], "shard-0");
    let missing = ctl.run(None, &["audit", "--db", "1"]).await;
    fails(
        &missing,
        1,
        "--db: no database \"1\" among the orders shards: shard-0",
    );
    let requeue = ctl
        .change(
            &["quarantine", "requeue", "--db", "main", "--seq", "1"],
            "x",
        )
        .await;
    fails(&requeue, 1, "--db: \"main\" is not an orders shard");

    stack.cleanup().await;
    dbs.drop_all().await;
}
