//! deploy/compose.yaml checked statically (no Docker engine needed): it parses, every environment
//! variable it sets is a setting the binary reads and accepts, and ports, addresses, health checks
//! and dependencies agree with each other.

use std::collections::BTreeMap;

use clap::CommandFactory;
use serde_yaml::Value;

/// Variables read outside clap: tracing's filter.
const NOT_CLAP: &[&str] = &["RUST_LOG"];

fn compose() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/compose.yaml");
    let text = std::fs::read_to_string(path).expect("deploy/compose.yaml exists");
    let mut value: Value = serde_yaml::from_str(&text).expect("compose.yaml parses");
    value.apply_merge().expect("merge keys resolve");
    value
}

fn service<'a>(compose: &'a Value, name: &str) -> &'a Value {
    compose["services"]
        .get(name)
        .unwrap_or_else(|| panic!("service {name} is defined"))
}

fn env_of(svc: &Value) -> BTreeMap<String, String> {
    svc["environment"]
        .as_mapping()
        .expect("environment is a mapping")
        .iter()
        .map(|(k, v)| {
            let value = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                other => panic!("unexpected env value {other:?}"),
            };
            (k.as_str().expect("env key").to_owned(), value)
        })
        .collect()
}

fn port_of(addr: &str) -> u16 {
    addr.rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{addr} has a port"))
}

fn host_of_url(url: &str) -> String {
    let rest = url.split("://").nth(1).expect("url has a scheme");
    let authority = rest.split('/').next().expect("authority");
    let host_port = authority.rsplit('@').next().expect("host");
    host_port.split(':').next().expect("host").to_owned()
}

/// Container ports published by `ports` entries (`"host:container"` or `"a-b:container"`).
fn container_ports(svc: &Value) -> Vec<u16> {
    svc["ports"]
        .as_sequence()
        .map(|ports| {
            ports
                .iter()
                .map(|p| port_of(p.as_str().expect("port entry is a string")))
                .collect()
        })
        .unwrap_or_default()
}

fn check_service(compose: &Value, name: &str, mut command: clap::Command) {
    let svc = service(compose, name);
    let cmd = svc["command"].as_sequence().expect("command is a list");
    assert_eq!(cmd[0].as_str(), Some(name), "{name} runs its own binary");

    let env = env_of(svc);
    let mut args = vec![name.to_owned()];
    for (key, value) in &env {
        if NOT_CLAP.contains(&key.as_str()) {
            continue;
        }
        let arg = command
            .get_arguments()
            .find(|a| a.get_env().and_then(|e| e.to_str()) == Some(key.as_str()))
            .unwrap_or_else(|| panic!("{name}: {key} is not a setting {name} reads"));
        args.push(format!(
            "--{}",
            arg.get_long().expect("settings have long flags")
        ));
        args.push(value.clone());
    }
    // The values are accepted by the binary's own parser.
    command
        .try_get_matches_from_mut(&args)
        .unwrap_or_else(|e| panic!("{name}: compose settings rejected: {e}"));

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
    let health = format!("{:?}", svc["healthcheck"]["test"]);
    let grpc_port = port_of(&env["GRPC_ADDR"]);
    assert!(
        health.contains(&format!("/{grpc_port}")),
        "{name}: health check probes the gRPC port: {health}"
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
    check_service(&compose, "orders-svc", orders_svc::Config::command());
    check_service(&compose, "relay-svc", relay_svc::Config::command());
    check_service(&compose, "mail-svc", mail_svc::Config::command());
}

#[test]
fn replicas_and_shared_settings() {
    let compose = compose();
    for name in ["relay-svc", "mail-svc"] {
        let replicas = service(&compose, name)["deploy"]["replicas"].as_u64();
        assert_eq!(replicas, Some(2), "{name} runs two replicas");
    }
    let relay = env_of(service(&compose, "relay-svc"));
    let mail = env_of(service(&compose, "mail-svc"));
    let orders = env_of(service(&compose, "orders-svc"));
    assert_eq!(
        relay["DATABASE_URL"], orders["DATABASE_URL"],
        "the relay reads the orders database"
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
}
