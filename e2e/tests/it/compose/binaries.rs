//! Every environment variable compose sets is a setting its binary reads and accepts, and the
//! addresses, health checks and dependencies agree with each other; the broker users and the
//! settings services share.

use std::collections::BTreeMap;

use clap::CommandFactory;
use serde_yaml::Value;

use super::file::{
    compose, container_ports, env_example, env_of, host_of_url, interpolate, port_of, service,
};

/// Variables read outside clap: tracing's filter, and the standard OpenTelemetry variables that
/// the OpenTelemetry SDK reads (kit/src/telemetry.rs), which are no flags.
const NOT_CLAP: &[&str] = &[
    "RUST_LOG",
    outbox_kit::telemetry::ENDPOINT,
    outbox_kit::telemetry::SERVICE_NAME,
];

fn check_service(compose: &Value, name: &str, binary: &str, mut command: clap::Command) {
    let svc = service(compose, name);
    let cmd = svc["command"].as_sequence().expect("command is a list");
    assert_eq!(cmd[0].as_str(), Some(binary), "{name} runs {binary}");

    let example = env_example();
    let env: BTreeMap<String, String> = env_of(svc)
        .into_iter()
        .map(|(k, v)| (k, interpolate(&v, &example)))
        .collect();
    // Each variable is a setting of the service (its main command) or of its health check (the
    // `healthcheck` subcommand, which runs in the same container with the same environment).
    let healthcheck = command
        .find_subcommand("healthcheck")
        .unwrap_or_else(|| panic!("{binary} has a healthcheck subcommand"))
        .clone();
    let flag = |command: &clap::Command, key: &str| {
        command
            .get_arguments()
            .find(|a| a.get_env().and_then(|e| e.to_str()) == Some(key))
            .map(|a| format!("--{}", a.get_long().expect("settings have long flags")))
    };
    let mut args = vec![binary.to_owned()];
    let mut health_args = vec![binary.to_owned(), "healthcheck".to_owned()];
    for (key, value) in &env {
        if NOT_CLAP.contains(&key.as_str()) {
            continue;
        }
        if let Some(flag) = flag(&command, key) {
            args.extend([flag, value.clone()]);
        } else if let Some(flag) = flag(&healthcheck, key) {
            health_args.extend([flag, value.clone()]);
        } else {
            panic!("{name}: {key} is not a setting {binary} or `{binary} healthcheck` reads");
        }
    }
    // The values are accepted by the binary's own parser, the service's and the health check's.
    command
        .try_get_matches_from_mut(&args)
        .unwrap_or_else(|e| panic!("{name}: compose settings rejected: {e}"));
    command
        .try_get_matches_from_mut(&health_args)
        .unwrap_or_else(|e| panic!("{name}: compose's healthcheck settings rejected: {e}"));

    // The published container ports are the ones the service listens on.
    let published = container_ports(svc);
    for setting in ["GRPC_ADDR", "METRICS_ADDR"] {
        let addr = env
            .get(setting)
            .unwrap_or_else(|| panic!("{name} sets {setting}"));
        assert!(
            addr.starts_with("0.0.0.0:"),
            "{name}: {setting} listens on all interfaces in a container"
        );
        assert!(
            published.contains(&port_of(addr)),
            "{name}: {setting} port is published: {published:?}"
        );
    }
    // The health check is the binary's own `healthcheck` subcommand (it reads GRPC_ADDR).
    let health: Vec<&str> = svc["healthcheck"]["test"]
        .as_sequence()
        .expect("healthcheck.test is a list")
        .iter()
        .map(|v| v.as_str().expect("string"))
        .collect();
    assert_eq!(
        health,
        ["CMD", binary, "healthcheck"],
        "{name}: health check"
    );
    assert!(
        command.find_subcommand("healthcheck").is_some(),
        "{binary} has a healthcheck subcommand"
    );

    // URLs point at services of this file, which this one waits for.
    let depends: Vec<String> = svc["depends_on"]
        .as_mapping()
        .map(|m| {
            m.keys()
                .filter_map(|k| k.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    for (key, value) in &env {
        if key.ends_with("_URL") {
            let host = host_of_url(value);
            assert!(
                compose["services"].get(host.as_str()).is_some(),
                "{name}: {key} host {host} is a service"
            );
            let reachable = depends.contains(&host)
                || depends.iter().any(|d| {
                    service(compose, d)["depends_on"]
                        .get(host.as_str())
                        .is_some()
                });
            assert!(
                reachable,
                "{name}: waits for {host} (directly or through a dependency)"
            );
        }
    }
    for d in &depends {
        let condition = &svc["depends_on"][d.as_str()]["condition"];
        if service(compose, d)["restart"].as_str() == Some("no") {
            // A one-shot step (`secrets`): waited for until it has finished, successfully.
            assert_eq!(
                condition.as_str(),
                Some("service_completed_successfully"),
                "{name} waits for {d} to finish"
            );
            continue;
        }
        assert_eq!(
            condition.as_str(),
            Some("service_healthy"),
            "{name} waits for {d} to be healthy"
        );
        assert!(
            service(compose, d).get("healthcheck").is_some(),
            "{d} has a health check"
        );
    }
}

#[test]
fn compose_file_agrees_with_the_binaries() {
    let compose = compose();
    check_service(
        &compose,
        "orders-svc",
        "orders-svc",
        outbox_kit::service::Cli::<orders_svc::Config>::command(),
    );
    for name in ["relay-svc-1", "relay-svc-2"] {
        check_service(
            &compose,
            name,
            "relay-svc",
            outbox_kit::service::Cli::<relay_svc::Config>::command(),
        );
    }
    for name in ["mail-svc-1", "mail-svc-2"] {
        check_service(
            &compose,
            name,
            "mail-svc",
            outbox_kit::service::Cli::<mail_svc::Config>::command(),
        );
    }
}

#[test]
fn broker_users_and_shared_settings() {
    let compose = compose();
    let relay = env_of(service(&compose, "relay-svc-1"));
    let mail = env_of(service(&compose, "mail-svc-1"));
    let orders = env_of(service(&compose, "orders-svc"));
    // The relays publish what their fleet's registry lists: the orders database, registered
    // at start (compose/fleet.rs).
    let register = env_of(service(&compose, "fleet-register"));
    assert_eq!(
        register["ORDERS_DATABASE_URL"], orders["DATABASE_URL"],
        "the orders database is registered in the fleet"
    );
    assert_eq!(
        register["FLEET_DATABASE_URL"], relay["FLEET_DATABASE_URL"],
        "in the relays' fleet"
    );
    assert_ne!(
        mail["DATABASE_URL"], orders["DATABASE_URL"],
        "mail-svc has its own database"
    );
    assert_eq!(
        relay["AMQP_EXCHANGE"], mail["AMQP_EXCHANGE"],
        "relay publishes where mail-svc consumes"
    );
    assert_eq!(mail["MAILER"], "smtp");
    assert_eq!(host_of_url(&mail["SMTP_URL"]), "mailpit");
    let mailpit_ports = container_ports(service(&compose, "mailpit"));
    assert!(
        mailpit_ports.contains(&port_of(&mail["SMTP_URL"])),
        "SMTP port of the sink matches"
    );

    // Each service connects as its own broker user, defined with least privilege.
    let user_of = |url: &str| {
        url.split("://")
            .nth(1)
            .and_then(|r| r.split(':').next())
            .map(str::to_owned)
    };
    assert_eq!(user_of(&relay["AMQP_URL"]).as_deref(), Some("relay"));
    assert_eq!(user_of(&mail["AMQP_URL"]).as_deref(), Some("mail"));
    let definitions: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../deploy/rabbitmq/definitions.json"
        ))
        .expect("definitions.json"),
    )
    .expect("definitions.json parses");
    let permission = |user: &str| {
        definitions["permissions"]
            .as_array()
            .expect("permissions")
            .iter()
            .find(|p| p["user"] == user)
            .unwrap_or_else(|| panic!("{user} has permissions"))
            .clone()
    };
    let exchange = regex_escape(&relay["AMQP_EXCHANGE"]);
    // The events exchange, and the default exchange for a replay to one queue (`outboxctl
    // replay`); nothing else.
    assert_eq!(
        permission("relay")["write"],
        format!("^({exchange}|amq\\.default)$")
    );
    assert_eq!(permission("relay")["read"], "^$");
    let queue = regex_escape(&mail["MAIL_QUEUE"]);
    assert_eq!(permission("mail")["write"], format!("^{queue}.*$"));
}

fn regex_escape(name: &str) -> String {
    name.replace('.', "\\.")
}
