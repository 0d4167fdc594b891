//! Prometheus, Grafana and Jaeger: loopback only, every service scraped and exporting spans,
//! the rules, the data source and the dashboard provisioned.

use std::collections::BTreeMap;

use super::file::{
    compose, container_ports, deploy_path, env_of, host_of_url, mounted_source, mounts,
    port_entries, port_of, read_yaml, service, services,
};

#[test]
fn prometheus_and_grafana_are_loopback_only_with_their_files_and_volumes() {
    let compose = compose();
    for (name, data) in [
        ("prometheus", "/prometheus"),
        ("grafana", "/var/lib/grafana"),
    ] {
        let svc = service(&compose, name);
        let ports = port_entries(svc);
        assert!(!ports.is_empty(), "{name} publishes its UI");
        for entry in ports {
            assert!(
                entry.starts_with("127.0.0.1:"),
                "{name}: {entry} is bound to 127.0.0.1"
            );
        }
        let volume = format!("{name}-data");
        assert!(
            mounts(svc).contains(&(volume.clone(), data.to_owned())),
            "{name} keeps its data in the named volume {volume}"
        );
        assert!(
            compose["volumes"].get(volume.as_str()).is_some(),
            "{volume} declared"
        );
        // Every file it mounts from the repository exists.
        for (src, dst) in mounts(svc) {
            if let Some(relative) = src.strip_prefix("./") {
                assert!(
                    deploy_path(relative).exists(),
                    "{name} mounts deploy/{relative} at {dst}, which does not exist"
                );
            }
        }
        assert!(
            svc.get("healthcheck").is_some(),
            "{name} has a health check"
        );
    }
}

#[test]
fn prometheus_scrapes_every_service_on_its_metrics_port_and_loads_the_rules() {
    let compose = compose();
    let prometheus = service(&compose, "prometheus");
    let args: Vec<&str> = prometheus["command"]
        .as_sequence()
        .expect("prometheus command is a list")
        .iter()
        .map(|a| a.as_str().expect("string"))
        .collect();
    let config_path = args
        .iter()
        .find_map(|a| a.strip_prefix("--config.file="))
        .expect("--config.file is given");
    let config_file =
        mounted_source(prometheus, config_path).expect("the config file is mounted from deploy/");
    assert_eq!(config_file, deploy_path("./prometheus/prometheus.yml"));
    let config = read_yaml(&config_file);

    // The rules it loads are the tested alerts.yaml (paths are relative to the config file).
    let config_dir = config_path.rsplit_once('/').expect("absolute path").0;
    let rule_files: Vec<&str> = config["rule_files"]
        .as_sequence()
        .expect("rule_files")
        .iter()
        .map(|r| r.as_str().expect("string"))
        .collect();
    assert_eq!(rule_files, ["alerts.yaml"]);
    assert_eq!(
        mounted_source(prometheus, &format!("{config_dir}/alerts.yaml")),
        Some(deploy_path("./prometheus/alerts.yaml")),
        "alerts.yaml is mounted beside the config"
    );

    // Every scrape target, as job -> host:port.
    let mut targets = BTreeMap::new();
    for job in config["scrape_configs"]
        .as_sequence()
        .expect("scrape_configs")
    {
        let name = job["job_name"].as_str().expect("job_name");
        for sc in job["static_configs"].as_sequence().expect("static_configs") {
            for t in sc["targets"].as_sequence().expect("targets") {
                let t = t.as_str().expect("target");
                assert!(
                    targets.insert(t.to_owned(), name.to_owned()).is_none(),
                    "{t} is scraped once"
                );
            }
        }
    }
    // Every service with a METRICS_ADDR, under the job named after its binary (the alert rules
    // and the dashboard select by job), on the port it listens on.
    let mut expected = BTreeMap::new();
    for (name, svc) in services(&compose) {
        if svc.get("environment").is_none() {
            continue;
        }
        let env = env_of(svc);
        // The audit is outboxctl's: its job is named after the service.
        if let Some(addr) = env.get("OUTBOXCTL_AUDIT_METRICS_ADDR") {
            expected.insert(format!("{name}:{}", port_of(addr)), name.to_owned());
            continue;
        }
        let Some(addr) = env.get("METRICS_ADDR") else {
            continue;
        };
        let binary = svc["command"][0].as_str().expect("command").to_owned();
        expected.insert(format!("{name}:{}", port_of(addr)), binary);
    }
    assert_eq!(
        expected.len(),
        6,
        "five services and the audit export metrics"
    );
    assert_eq!(
        targets, expected,
        "prometheus.yml scrapes exactly the services' METRICS_ADDR ports"
    );
}

#[test]
fn grafana_is_provisioned_with_the_prometheus_data_source_and_the_dashboard() {
    let compose = compose();
    let grafana = service(&compose, "grafana");
    let provisioning = |kind: &str| {
        let dir = mounted_source(grafana, &format!("/etc/grafana/provisioning/{kind}"))
            .unwrap_or_else(|| panic!("grafana's {kind} provisioning is mounted"));
        let files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|f| f.expect("entry").path())
            .collect();
        assert_eq!(files.len(), 1, "one {kind} file in {}", dir.display());
        read_yaml(&files[0])
    };

    // The data source is the stack's Prometheus, on the port it listens on in its container.
    let datasources = provisioning("datasources");
    let ds = &datasources["datasources"][0];
    assert_eq!(ds["type"].as_str(), Some("prometheus"));
    let url = ds["url"].as_str().expect("datasource url");
    assert_eq!(host_of_url(url), "prometheus");
    let prometheus_ports = container_ports(service(&compose, "prometheus"));
    assert!(
        prometheus_ports.contains(&port_of(url)),
        "{url}: Prometheus listens there ({prometheus_ports:?})"
    );
    let uid = ds["uid"].as_str().expect("datasource uid");

    // The dashboard provider reads the directory the dashboard is mounted in.
    let dashboards = provisioning("dashboards");
    let path = dashboards["providers"][0]["options"]["path"]
        .as_str()
        .expect("provider path");
    let dashboard = mounted_source(grafana, &format!("{path}/outbox.json"))
        .expect("outbox.json is mounted where the provider reads");
    assert_eq!(dashboard, deploy_path("./grafana/outbox.json"));
    let env = env_of(grafana);
    assert_eq!(
        env["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"],
        format!("{path}/outbox.json"),
        "the home dashboard is the Outbox one"
    );
    let depends = &grafana["depends_on"]["prometheus"]["condition"];
    assert_eq!(depends.as_str(), Some("service_healthy"));

    // Every panel and query uses that data source.
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&dashboard).expect("outbox.json"))
            .expect("outbox.json parses");
    for panel in json["panels"].as_array().expect("panels") {
        if panel["type"] == "row" {
            continue;
        }
        assert_eq!(panel["datasource"]["uid"], uid, "panel {}", panel["title"]);
        for target in panel["targets"].as_array().expect("targets") {
            assert_eq!(target["datasource"]["uid"], uid, "panel {}", panel["title"]);
        }
    }
}

/// Every service sends its spans to the stack's Jaeger, whose UI is on the loopback port the
/// docs name, and which is not something a service waits for (export drops spans, never
/// blocks, while Jaeger is away).
#[test]
fn every_service_exports_spans_to_jaeger() {
    let compose = compose();
    let jaeger = service(&compose, "jaeger");
    assert!(
        port_entries(jaeger)
            .iter()
            .any(|p| p == "127.0.0.1:${OUTBOX_JAEGER_UI_PORT:-16686}:16686"),
        "the Jaeger UI is on 127.0.0.1:16686"
    );
    assert_eq!(
        env_of(jaeger)
            .get("COLLECTOR_OTLP_ENABLED")
            .map(String::as_str),
        Some("true")
    );
    let mut exporting = Vec::new();
    for (name, svc) in services(&compose) {
        if svc["image"].as_str() != Some("outbox:local") {
            continue;
        }
        let endpoint = env_of(svc)
            .get(outbox_kit::telemetry::ENDPOINT)
            .cloned()
            .unwrap_or_else(|| panic!("{name} sets {}", outbox_kit::telemetry::ENDPOINT));
        assert_eq!(
            endpoint, "${OTEL_EXPORTER_OTLP_ENDPOINT-http://jaeger:4317}",
            "{name} exports to Jaeger's OTLP/gRPC port unless the caller overrides it"
        );
        // The value compose uses by default is one the services accept.
        let default = endpoint
            .trim_start_matches("${OTEL_EXPORTER_OTLP_ENDPOINT-")
            .trim_end_matches('}');
        let export = outbox_kit::telemetry::Export::from_vars(&name, |var| {
            (var == outbox_kit::telemetry::ENDPOINT).then(|| default.to_owned())
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(export.is_some(), "{name} exports");
        assert_eq!(host_of_url(default), "jaeger");
        let depends = format!("{:?}", svc["depends_on"]);
        assert!(
            !depends.contains("jaeger"),
            "{name} starts without Jaeger: {depends}"
        );
        exporting.push(name);
    }
    assert_eq!(
        exporting.len(),
        8,
        "all five service containers, the audit, the console and the fleet's registration: \
         {exporting:?}"
    );
}
