//! The relays run as a fleet: both in fleet mode on one fleet database, which a one-shot step
//! creates, and in which another registers the orders database with `outboxctl fleet add`
//! before the relays start.

use clap::CommandFactory;

use super::file::{compose, env_example, env_of, host_of_url, interpolate, service};

#[test]
fn two_relays_run_as_a_fleet_over_the_registered_orders_database() {
    let compose = compose();
    let example = env_example();
    let env = |name: &str| -> std::collections::BTreeMap<String, String> {
        env_of(service(&compose, name))
            .into_iter()
            .map(|(k, v)| (k, interpolate(&v, &example)))
            .collect()
    };
    let (relay1, relay2, orders) = (env("relay-svc-1"), env("relay-svc-2"), env("orders-svc"));
    for relay in [&relay1, &relay2] {
        assert!(
            !relay.contains_key("DATABASE_URL") && !relay.contains_key("RELAY_SHARDS"),
            "a fleet relay has no fixed database: {relay:?}"
        );
    }
    let fleet_url = &relay1["FLEET_DATABASE_URL"];
    assert_eq!(fleet_url, &relay2["FLEET_DATABASE_URL"], "one fleet");
    assert_eq!(host_of_url(fleet_url), "postgres");
    assert!(fleet_url.ends_with("/fleet"), "{fleet_url}");

    // `fleet-db` creates that database, once, before anything uses it.
    let db = service(&compose, "fleet-db");
    assert_eq!(db["restart"].as_str(), Some("no"), "fleet-db runs once");
    let script = format!("{:?}", db["entrypoint"]);
    assert!(script.contains("create database fleet"), "{script}");

    // `fleet-register` is `outboxctl fleet add` of the orders database (its URL from the
    // environment), with arguments outboxctl accepts, into the relays' fleet, on the exchange
    // the relays publish to and mail-svc reads.
    let register = service(&compose, "fleet-register");
    assert_eq!(register["restart"].as_str(), Some("no"), "registers once");
    let renv = env("fleet-register");
    assert_eq!(&renv["FLEET_DATABASE_URL"], fleet_url);
    assert_eq!(renv["ORDERS_DATABASE_URL"], orders["DATABASE_URL"]);
    let command: Vec<&str> = register["command"]
        .as_sequence()
        .expect("command is a list")
        .iter()
        .map(|v| v.as_str().expect("string"))
        .collect();
    assert_eq!(&command[..2], ["sh", "-c"], "{command:?}");
    assert!(
        command[2].contains(r#"outboxctl "$$@" --url "$$ORDERS_DATABASE_URL""#),
        "the script runs outboxctl with its arguments: {}",
        command[2]
    );
    let mut args = vec!["outboxctl".to_owned()];
    args.extend(command[4..].iter().map(|a| (*a).to_owned()));
    args.extend(["--url".to_owned(), renv["ORDERS_DATABASE_URL"].clone()]);
    let matches = outboxctl::cli::Cli::command()
        .try_get_matches_from(&args)
        .unwrap_or_else(|e| panic!("outboxctl rejects {args:?}: {e}"));
    let (_, fleet) = matches.subcommand().expect("a command");
    let (sub, add) = fleet.subcommand().expect("fleet's command");
    assert_eq!(sub, "add");
    let arg = |id: &str| {
        add.get_raw(id)
            .and_then(|mut v| v.next())
            .and_then(|v| v.to_str())
    };
    assert_eq!(arg("name"), Some("orders"));
    // orders-svc's one database is shard 0: the shard its events carry.
    assert_eq!(arg("source_id"), Some("0"));
    assert_eq!(arg("exchange"), Some(relay1["AMQP_EXCHANGE"].as_str()));
    assert_eq!(
        arg("exchange"),
        Some(env("mail-svc-1")["AMQP_EXCHANGE"].as_str())
    );
    // The relays start once it is registered.
    for name in ["relay-svc-1", "relay-svc-2"] {
        assert_eq!(
            service(&compose, name)["depends_on"]["fleet-register"]["condition"].as_str(),
            Some("service_completed_successfully"),
            "{name} waits for the registration"
        );
    }
    let depends = format!("{:?}", register["depends_on"]);
    assert!(
        depends.contains("fleet-db") && depends.contains("orders-svc"),
        "the fleet database and the orders database exist first: {depends}"
    );
}
