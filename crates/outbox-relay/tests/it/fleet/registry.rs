//! The registry's statements against a real fleet database: leases bump and check epochs,
//! operator actions are validated and audited, URLs never print their password.

use outbox_relay::fleet::registry::{self, Error, State};

use super::{FleetDb, LEASE, by, new_database};

const URL: &str = "postgres://relay:s3cr3t-pw@127.0.0.1:5432/tenant";

async fn add(fleet: &FleetDb, name: &str, source_id: i32) {
    fleet
        .registry
        .add(
            &new_database(name, source_id, URL, "outbox", "orders.events"),
            &by(),
        )
        .await
        .expect("add");
}

async fn expire_leases(fleet: &FleetDb) {
    sqlx::query("update fleet_databases set lease_until = now() - interval '1 second'")
        .execute(fleet.registry.pool())
        .await
        .expect("expire");
}

#[tokio::test]
async fn a_claim_bumps_the_epoch_and_a_live_lease_is_not_claimable_an_expired_one_is() {
    let fleet = FleetDb::fresh().await;
    let reg = &fleet.registry;
    add(&fleet, "t1", 1).await;
    let first = registry::claim(reg, "a", "t1", LEASE)
        .await
        .expect("claim")
        .expect("free");
    assert_eq!((first.epoch, first.state), (1, State::Active));
    assert_eq!(first.url.expose(), URL, "the owner gets the whole URL");
    assert!(
        registry::claim(reg, "b", "t1", LEASE)
            .await
            .expect("claim")
            .is_none(),
        "a live lease is not claimable"
    );
    assert!(
        registry::overview(reg)
            .await
            .expect("overview")
            .free
            .is_empty()
    );
    expire_leases(&fleet).await;
    assert_eq!(
        registry::overview(reg).await.expect("overview").free,
        vec!["t1".to_owned()]
    );
    let second = registry::claim(reg, "b", "t1", LEASE)
        .await
        .expect("claim")
        .expect("expired");
    assert_eq!(second.epoch, 2, "every claim bumps the epoch");
    let listed = reg.list().await.expect("list");
    assert_eq!(
        (listed[0].owner.as_deref(), listed[0].epoch),
        (Some("b"), 2)
    );
}

#[tokio::test]
async fn renew_release_and_report_at_a_stale_epoch_change_nothing() {
    let fleet = FleetDb::fresh().await;
    let reg = &fleet.registry;
    add(&fleet, "t1", 1).await;
    add(&fleet, "t2", 2).await;
    let a1 = registry::claim(reg, "a", "t1", LEASE)
        .await
        .expect("claim")
        .expect("free");
    let a2 = registry::claim(reg, "a", "t2", LEASE)
        .await
        .expect("claim")
        .expect("free");
    let held = vec![("t1".to_owned(), a1.epoch), ("t2".to_owned(), a2.epoch)];
    let renewed = registry::renew(reg, "a", &held, LEASE)
        .await
        .expect("renew");
    assert_eq!(renewed.len(), 2);
    // t1's lease runs out and b claims it: a's renewal at the old epoch keeps only t2.
    sqlx::query(
        "update fleet_databases set lease_until = now() - interval '1 second' where name = 't1'",
    )
    .execute(reg.pool())
    .await
    .expect("expire");
    let b1 = registry::claim(reg, "b", "t1", LEASE)
        .await
        .expect("claim")
        .expect("expired");
    let renewed = registry::renew(reg, "a", &held, LEASE)
        .await
        .expect("renew");
    assert_eq!(
        renewed.iter().map(|h| h.name.as_str()).collect::<Vec<_>>(),
        ["t2"],
        "renew at a stale epoch fails"
    );
    // Nor can a's release or report touch b's lease.
    assert!(
        !registry::release(reg, "a", "t1", a1.epoch)
            .await
            .expect("release")
    );
    let report = |epoch, error: &str| registry::Report {
        name: "t1".into(),
        epoch,
        backlog: 7,
        oldest_unsent_secs: Some(1.5),
        last_error: Some(error.into()),
    };
    registry::report(reg, "a", &[report(a1.epoch, "stale")])
        .await
        .expect("report");
    let t1 = &reg.list().await.expect("list")[0];
    assert_eq!((t1.owner.as_deref(), t1.backlog), (Some("b"), None));
    registry::report(reg, "b", &[report(b1.epoch, "connection refused")])
        .await
        .expect("report");
    let t1 = &reg.list().await.expect("list")[0];
    assert_eq!(t1.backlog, Some(7));
    assert_eq!(
        t1.last_error.as_ref().map(|(e, _)| e.as_str()),
        Some("connection refused")
    );
    assert!(
        registry::release(reg, "b", "t1", b1.epoch)
            .await
            .expect("release")
    );
    assert_eq!(
        registry::overview(reg).await.expect("overview").free,
        vec!["t1".to_owned()],
        "released: claimable at once"
    );
}

#[tokio::test]
async fn remove_refuses_a_database_that_is_not_drained_unless_forced_and_audits_every_action() {
    let fleet = FleetDb::fresh().await;
    let reg = &fleet.registry;
    add(&fleet, "t1", 1).await;
    add(&fleet, "t2", 2).await;
    match reg.remove("t1", false, &by()).await {
        Err(Error::NotDrained {
            state: State::Active,
            ..
        }) => {}
        other => panic!("remove of an active database: {other:?}"),
    }
    assert_eq!(reg.drain("t1", &by()).await.expect("drain"), State::Active);
    match reg.remove("t1", false, &by()).await {
        Err(Error::NotDrained {
            state: State::Draining,
            ..
        }) => {}
        other => panic!("remove of a draining database: {other:?}"),
    }
    // The owner finishes the drain at its epoch.
    let c = registry::claim(reg, "a", "t1", LEASE)
        .await
        .expect("claim")
        .expect("free");
    assert_eq!(c.state, State::Draining);
    assert!(
        !registry::mark_drained(reg, "a", "t1", c.epoch - 1)
            .await
            .expect("stale epoch")
    );
    assert!(
        registry::mark_drained(reg, "a", "t1", c.epoch)
            .await
            .expect("mark")
    );
    assert!(
        registry::claim(reg, "b", "t1", LEASE)
            .await
            .expect("claim")
            .is_none(),
        "a drained database is never claimed"
    );
    assert_eq!(
        reg.remove("t1", false, &by()).await.expect("remove"),
        State::Drained
    );
    assert_eq!(
        reg.remove("t2", true, &by()).await.expect("forced"),
        State::Active
    );
    assert!(reg.list().await.expect("list").is_empty());
    assert!(matches!(
        reg.remove("t2", true, &by()).await,
        Err(Error::NotFound(_))
    ));
    let actions: Vec<(String, String, String)> =
        sqlx::query_as("select action, database, actor from fleet_actions order by id")
            .fetch_all(reg.pool())
            .await
            .expect("audit");
    let actions: Vec<(&str, &str)> = actions
        .iter()
        .map(|(a, d, who)| {
            assert_eq!(who, "test");
            (a.as_str(), d.as_str())
        })
        .collect();
    assert_eq!(
        actions,
        [
            ("add", "t1"),
            ("add", "t2"),
            ("drain", "t1"),
            ("remove", "t1"),
            ("remove --force", "t2")
        ],
        "refused actions leave no audit row"
    );
}

#[tokio::test]
async fn add_refuses_bad_fields_and_duplicates_naming_the_field() {
    let fleet = FleetDb::fresh().await;
    let reg = &fleet.registry;
    add(&fleet, "t1", 1).await;
    for (new, field) in [
        (new_database("T1!", 5, URL, "outbox", "x"), "name"),
        (new_database("t5", -1, URL, "outbox", "x"), "source_id"),
        (new_database("t5", 5, "mysql://nope", "outbox", "x"), "url"),
        (new_database("t5", 5, URL, "out box", "x"), "table"),
        (new_database("t5", 5, URL, "outbox", ""), "exchange"),
    ] {
        match reg.add(&new, &by()).await {
            Err(Error::InvalidArgument { field: f, .. }) => assert_eq!(f, field),
            other => panic!("{field}: {other:?}"),
        }
    }
    match reg
        .add(&new_database("t1", 9, URL, "outbox", "x"), &by())
        .await
    {
        Err(Error::AlreadyExists { field: "name", .. }) => {}
        other => panic!("same name: {other:?}"),
    }
    match reg
        .add(&new_database("t9", 1, URL, "outbox", "x"), &by())
        .await
    {
        Err(Error::AlreadyExists {
            field: "source_id", ..
        }) => {}
        other => panic!("same source id: {other:?}"),
    }
    // Migrating again changes nothing.
    reg.migrate().await.expect("idempotent");
    assert_eq!(reg.list().await.expect("list").len(), 1);
}

#[tokio::test]
async fn the_url_password_never_appears_in_list_output_debug_or_the_audit() {
    let fleet = FleetDb::fresh().await;
    let reg = &fleet.registry;
    add(&fleet, "t1", 1).await;
    let new = new_database("t2", 2, URL, "outbox", "orders.events");
    assert!(!format!("{new:?}").contains("s3cr3t"), "{new:?}");
    let listed = reg.list().await.expect("list");
    let shown = format!("{listed:?} {}", listed[0].url);
    assert!(!shown.contains("s3cr3t"), "{shown}");
    assert!(shown.contains("relay:***@127.0.0.1"), "{shown}");
    let claimed = registry::claim(reg, "a", "t1", LEASE)
        .await
        .expect("claim")
        .expect("free");
    assert!(!format!("{claimed:?}").contains("s3cr3t"));
    let details: Vec<String> = sqlx::query_scalar("select detail from fleet_actions")
        .fetch_all(reg.pool())
        .await
        .expect("audit");
    assert!(details.iter().all(|d| !d.contains("s3cr3t")), "{details:?}");
    let err = reg
        .add(
            &new_database("t3", 3, "postgres://u:s3cr3t@h:99999/x", "outbox", "e"),
            &by(),
        )
        .await
        .expect_err("bad port");
    assert!(!err.to_string().contains("s3cr3t"), "{err}");
}

#[tokio::test]
async fn heartbeat_lists_the_live_instances() {
    let fleet = FleetDb::fresh().await;
    let reg = &fleet.registry;
    assert_eq!(
        registry::heartbeat(reg, "a", LEASE).await.expect("hb"),
        ["a"]
    );
    assert_eq!(
        registry::heartbeat(reg, "b", LEASE).await.expect("hb"),
        ["a", "b"]
    );
    sqlx::query("update fleet_instances set seen_at = now() - interval '1 minute' where id = 'a'")
        .execute(reg.pool())
        .await
        .expect("age");
    assert_eq!(
        registry::heartbeat(reg, "b", LEASE).await.expect("hb"),
        ["b"],
        "a is silent"
    );
}
