//! The fleet page against a real fleet database (the registry of `outbox_ops::fleet`): add,
//! drain and remove through the page's forms, each recorded in `fleet_actions`; bad input a 400
//! naming the field; a removal of a database not drained refused; a viewer offered nothing and
//! refused; a URL's password on no page. And `db=` on the lists and the audit: a fleet
//! database's name, `shard-N` without a fleet database, an unknown name a 400 naming `db`.

use outbox_proto::orders::v1::OrderStatus;
use outbox_testkit::Made;
use reqwest::StatusCode;
use sqlx::PgPool;

use crate::common::{Answer, Browser, Console, OPERATOR, Stack, VIEWER, form_token};

/// The password every URL of these tests carries (the server trusts local logins, so any
/// password connects): it must appear on no page.
pub const PASSWORD: &str = "s3cr3t-pw-4711";

/// `url` with [`PASSWORD`] in it.
pub fn with_password(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("a URL");
    match rest.split_once('@') {
        Some((user, host)) => format!("{scheme}://{user}:{PASSWORD}@{host}"),
        None => format!("{scheme}://postgres:{PASSWORD}@{rest}"),
    }
}

/// A fresh, empty database named by the harness (`unique`, so `deploy/test.sh` knows it),
/// registered with `made` before it exists: dropped when `made` goes, passed or failed.
pub async fn fresh_database(made: &Made, prefix: &str) -> String {
    let url = outbox_testkit::fresh_database_url(prefix);
    made.database(&url);
    let name = outbox_testkit::database_name(&url).to_owned();
    let admin = PgPool::connect(&format!("{}/postgres", outbox_testkit::pg_server_url()))
        .await
        .expect("admin connection");
    sqlx::query(sqlx::AssertSqlSafe(format!("create database \"{name}\"")))
        .execute(&admin)
        .await
        .expect("create database");
    admin.close().await;
    url
}

/// The operators' audit rows: (actor, action, database, reason).
async fn fleet_actions(pool: &PgPool) -> Vec<(String, String, String, String)> {
    sqlx::query_as("select actor, action, database, reason from fleet_actions order by id")
        .fetch_all(pool)
        .await
        .expect("fleet_actions")
}

/// (name, state) of every registered database, by name.
async fn registered(pool: &PgPool) -> Vec<(String, String)> {
    sqlx::query_as("select name, state from fleet_databases order by name")
        .fetch_all(pool)
        .await
        .expect("fleet_databases")
}

#[track_caller]
fn refused(r: &Answer, status: StatusCode, text: &str) {
    assert_eq!(r.status, status, "{text}: {}", r.body);
    assert!(r.body.contains(text), "expected {text:?} in: {}", r.body);
}

/// Posts the fleet form `path` of `page` with `fields` (and the form's token).
async fn act(b: &Browser, page: &str, path: &str, fields: &[(&str, &str)]) -> Answer {
    let token = form_token(page, path);
    let mut all = vec![("csrf", token.as_str())];
    all.extend_from_slice(fields);
    b.post(path, &all).await
}

#[tokio::test]
async fn the_fleet_page_adds_drains_and_removes_and_db_scopes_the_lists() {
    let made = Made::new();
    let mut stack = Stack::start().await;
    let fleet_url = with_password(&fresh_database(&made, "console_fleet").await);
    let empty = with_password(&fresh_database(&made, "console_fleet_empty").await);
    let main_db = with_password(&stack.names.orders_db);
    // An order mailed, then one whose event stays in the outbox (the relay stopped): it lags.
    let mailed = stack.upsert(1, OrderStatus::Pending).await;
    stack.wait_until_sent("order 1 mailed", 1, &[mailed]).await;
    stack.stop_relay().await;
    stack.upsert(2, OrderStatus::Pending).await;
    let fleet_flag = format!("--fleet-database-url={fleet_url}");
    let console = Console::start(&stack, "1ms", &[&fleet_flag]).await;
    let fleet = PgPool::connect(&fleet_url).await.expect("fleet database");
    let op = console.signed_in(OPERATOR).await;
    let mut pages: Vec<String> = Vec::new();

    // The navigation links it; nothing registered yet.
    let page = op.page("/fleet").await;
    assert!(page.contains(r#"href="/fleet""#), "{page}");
    assert!(page.contains("No database in the fleet yet"), "{page}");
    let add = |name: &'static str, id: &'static str, url: String| {
        vec![
            ("name", name.to_owned()),
            ("source_id", id.to_owned()),
            ("url", url),
            ("table", "outbox".to_owned()),
            ("exchange", "orders.events".to_owned()),
            ("reason", "into the fleet".to_owned()),
        ]
    };
    let post = |fields: Vec<(&'static str, String)>| {
        let (op, page) = (op.clone(), page.clone());
        async move {
            let f: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
            act(&op, &page, "/fleet/add", &f).await
        }
    };

    // Bad input: a 400 naming the field, nothing registered. The stack's orders database
    // stamps no shard header (shard 0): another id disagrees with it.
    let r = post(add("main", "5", main_db.clone())).await;
    refused(&r, StatusCode::BAD_REQUEST, "source_id: 5 disagrees");
    pages.push(r.body);
    let r = post(add("Main DB", "0", main_db.clone())).await;
    refused(&r, StatusCode::BAD_REQUEST, "name: ");
    let r = post(add("main", "x", main_db.clone())).await;
    refused(&r, StatusCode::BAD_REQUEST, "source_id: not a whole number");
    let r = post(add("main", "-1", main_db.clone())).await;
    refused(&r, StatusCode::BAD_REQUEST, "source_id: -1 is negative");
    let r = post(add("main", "0", "mysql://x@y/z".into())).await;
    refused(&r, StatusCode::BAD_REQUEST, "url: ");
    let mut no_reason = add("main", "0", main_db.clone());
    no_reason.retain(|(k, _)| *k != "reason");
    let r = post(no_reason).await;
    refused(&r, StatusCode::BAD_REQUEST, "reason: ");
    pages.push(r.body);
    assert_eq!(registered(&fleet).await, []);

    // Added: listed with the redacted URL; a name or an id taken twice is a 400 naming it.
    let r = post(add("main", "0", main_db.clone())).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(r.body.contains("Added <strong>main</strong>"), "{}", r.body);
    pages.push(r.body);
    let r = post(add("tenant", "9", empty.clone())).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let r = post(add("main", "8", empty.clone())).await;
    refused(
        &r,
        StatusCode::BAD_REQUEST,
        "name: a database with this name",
    );
    let r = post(add("other", "9", empty.clone())).await;
    refused(
        &r,
        StatusCode::BAD_REQUEST,
        "source_id: a database with this source_id",
    );
    let page = op.page("/fleet").await;
    for row in [
        r#"data-db="main" data-state="active""#,
        r#"data-db="tenant" data-state="active""#,
        "postgres:***@",
        "orders.events",
    ] {
        assert!(page.contains(row), "{row:?} in {page}");
    }
    pages.push(page.clone());

    // Drain: draining. Remove without force refuses it, naming it; with force it goes.
    let r = act(
        &op,
        &page,
        "/fleet/drain",
        &[("name", "tenant"), ("reason", "tenant leaves")],
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(r.body.contains("draining"), "{}", r.body);
    let page = op.page("/fleet").await;
    assert!(
        page.contains(r#"data-db="tenant" data-state="draining""#),
        "{page}"
    );
    let r = act(
        &op,
        &page,
        "/fleet/remove",
        &[("name", "tenant"), ("reason", "gone")],
    )
    .await;
    refused(&r, StatusCode::CONFLICT, "is draining, not drained");
    assert!(r.body.contains("tenant"), "{}", r.body);
    let r = act(
        &op,
        &page,
        "/fleet/remove",
        &[("name", "nope"), ("reason", "gone")],
    )
    .await;
    refused(&r, StatusCode::NOT_FOUND, "in the fleet");
    assert!(r.body.contains("nope"), "{}", r.body);
    let r = act(
        &op,
        &page,
        "/fleet/remove",
        &[
            ("name", "tenant"),
            ("force", "on"),
            ("reason", "gone for good"),
        ],
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(
        r.body.contains("removed from the fleet, was draining"),
        "{}",
        r.body
    );
    pages.push(r.body);
    let page = op.page("/fleet").await;
    assert!(!page.contains(r#"data-db="tenant""#), "{page}");
    assert_eq!(registered(&fleet).await, [("main".into(), "active".into())]);

    // Each action is recorded with the signed-in user and the reason; refusals are not.
    let recorded = fleet_actions(&fleet).await;
    let summary: Vec<(&str, &str, &str)> = recorded
        .iter()
        .map(|(who, what, db, _)| (who.as_str(), what.as_str(), db.as_str()))
        .collect();
    assert_eq!(
        summary,
        [
            ("alice", "add", "main"),
            ("alice", "add", "tenant"),
            ("alice", "drain", "tenant"),
            ("alice", "remove --force", "tenant"),
        ]
    );
    assert_eq!(recorded[2].3, "tenant leaves");

    // A viewer sees the fleet and no form; a forged write is refused and changes nothing.
    let viewer = console.signed_in(VIEWER).await;
    let seen = viewer.page("/fleet").await;
    assert!(seen.contains(r#"data-db="main""#), "{seen}");
    for path in ["/fleet/add", "/fleet/drain", "/fleet/remove"] {
        assert!(
            !seen.contains(&format!(r#"action="{path}""#)),
            "{path}: {seen}"
        );
        let token = "0".repeat(64);
        let mut fields = add("forged", "4", empty.clone());
        fields.extend([("csrf", token), ("force", "on".into())]);
        fields.retain(|(k, _)| *k != "name");
        fields.push(("name", "main".into()));
        let f: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let r = viewer.post(path, &f).await;
        refused(&r, StatusCode::FORBIDDEN, "viewer");
    }
    pages.push(seen);
    assert_eq!(registered(&fleet).await, [("main".into(), "active".into())]);
    assert_eq!(fleet_actions(&fleet).await.len(), 4);

    // db=: the fleet database by name; an unknown name is a 400 naming db, with the names.
    for path in [
        "/quarantine?db=nope",
        "/audit?db=nope",
        "/where?db=nope&order=2",
        "/replay?db=nope&order=1",
    ] {
        let r = viewer.get(path).await;
        refused(&r, StatusCode::BAD_REQUEST, "db: no database");
        assert!(
            r.body.contains("nope") && r.body.contains("in the fleet: main"),
            "{}",
            r.body
        );
    }
    let q = viewer.page("/quarantine?db=main").await;
    assert!(q.contains("No quarantined row"), "{q}");
    // The audit of one database: order 2 waits in main's outbox, its links name main.
    let audit = viewer.page("/audit?db=main").await;
    assert!(audit.contains(r#"data-db="main""#), "{audit}");
    assert!(audit.contains("/where?db=main&amp;order=2"), "{audit}");
    let traced = viewer.page("/where?db=main&order=2").await;
    assert!(traced.contains("not published yet"), "{traced}");
    pages.extend([q, audit, traced]);

    for p in &pages {
        assert!(!p.contains(PASSWORD), "the password was shown: {p}");
    }

    fleet.close().await;
    console.stop().await;
    stack.cleanup().await;
    made.remove().await.expect("the fleet's databases dropped");
}

#[tokio::test]
async fn without_a_fleet_db_names_the_shards_and_an_unreachable_registry_is_a_503() {
    let stack = Stack::start().await;
    // No fleet database: the page says so; db= names orders-svc's shards.
    let console = Console::start(&stack, "1h", &[]).await;
    let viewer = console.signed_in(VIEWER).await;
    let page = viewer.page("/fleet").await;
    assert!(page.contains("no fleet database configured"), "{page}");
    assert!(page.contains("shard-0"), "{page}");
    viewer.page("/quarantine?db=shard-0").await;
    viewer.page("/audit?db=shard-0").await;
    for path in ["/quarantine?db=shard-1", "/audit?db=tenant-acme"] {
        let r = viewer.get(path).await;
        refused(&r, StatusCode::BAD_REQUEST, "db: no database");
        assert!(
            r.body.contains("among the orders shards: shard-0"),
            "{}",
            r.body
        );
    }
    let op = console.signed_in(OPERATOR).await;
    let page = op.page("/fleet").await;
    assert!(!page.contains(r#"action="/fleet/add""#), "{page}");
    console.stop().await;

    // A fleet database that cannot be reached: the fleet page and db= say so (503), and the
    // password is not shown; the other pages work.
    let down = format!("postgres://postgres:{PASSWORD}@127.0.0.1:1/fleet");
    let console = Console::start(&stack, "1h", &[&format!("--fleet-database-url={down}")]).await;
    let viewer = console.signed_in(VIEWER).await;
    for path in ["/fleet", "/quarantine?db=main"] {
        let r = viewer.get(path).await;
        refused(
            &r,
            StatusCode::SERVICE_UNAVAILABLE,
            "cannot reach the fleet database",
        );
        assert!(!r.body.contains(PASSWORD), "{}", r.body);
    }
    viewer.page("/quarantine").await;
    viewer.page("/").await;
    console.stop().await;
    stack.cleanup().await;
}
