//! Published ports: on the loopback only, fixed, and unique.

use std::collections::BTreeMap;

use super::file::{compose, host_port, port_entries, services};

#[test]
fn published_ports_are_loopback_fixed_and_unique() {
    let compose = compose();
    let mut seen = BTreeMap::new();
    for (name, svc) in services(&compose) {
        assert!(
            svc.get("deploy").is_none(),
            "{name}: no `deploy.replicas` (port ranges with replicas are flaky): one service each"
        );
        for entry in port_entries(svc) {
            let host = host_port(&entry);
            if let Some(other) = seen.insert(host.clone(), name.clone()) {
                panic!("host port {host} published by {other} and {name}");
            }
        }
    }
    // The gRPC ports and the console's, as the README promises them.
    for (port, name) in [
        ("50051", "orders-svc"),
        ("50152", "relay-svc-1"),
        ("50153", "relay-svc-2"),
        ("50253", "mail-svc-1"),
        ("50254", "mail-svc-2"),
        ("8080", "outbox-console"),
    ] {
        assert_eq!(
            seen.get(port).map(String::as_str),
            Some(name),
            "port {port}"
        );
    }
    // The infrastructure stays off a local PostgreSQL's and RabbitMQ's ports.
    for taken in ["5432", "5672"] {
        assert!(
            !seen.contains_key(taken),
            "host port {taken} is left to the machine"
        );
    }
}
