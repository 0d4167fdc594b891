//! deploy/compose.yaml checked statically (no Docker engine needed): it parses, every environment
//! variable it sets is a setting the binary reads and accepts, and ports, addresses, health checks
//! and dependencies agree with each other. Secure by default: no password in it or in a file it
//! mounts, every variable it uses listed in deploy/.env.example (the secrets required with
//! `${VAR:?…}`), every gRPC port behind TLS with tokens and every health check trusting the CA.

use std::collections::BTreeMap;

use clap::CommandFactory;
use serde_yaml::Value;

/// Variables read outside clap: tracing's filter, and the standard OpenTelemetry variables that
/// the OpenTelemetry SDK reads (kit/src/telemetry.rs), which are no flags.
const NOT_CLAP: &[&str] = &[
    "RUST_LOG",
    outbox_kit::telemetry::ENDPOINT,
    outbox_kit::telemetry::SERVICE_NAME,
];

fn compose() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/compose.yaml");
    let text = std::fs::read_to_string(path).expect("deploy/compose.yaml exists");
    let mut value: Value = serde_yaml::from_str(&text).expect("compose.yaml parses");
    // Anchors that merge other anchors (x-relay merges x-service-defaults) bring a `<<` key of
    // their own along: resolve until none is left, as compose does.
    for _ in 0..8 {
        if !format!("{value:?}").contains("\"<<\"") {
            break;
        }
        value.apply_merge().expect("merge keys resolve");
    }
    value
}

/// The settings of deploy/.env.example: `KEY=value` lines are required, `#KEY=value` lines
/// optional (compose has a default).
struct EnvExample {
    required: BTreeMap<String, String>,
    optional: BTreeMap<String, String>,
}

fn env_example() -> EnvExample {
    let text = std::fs::read_to_string(deploy_path(".env.example")).expect("deploy/.env.example");
    let mut example = EnvExample {
        required: BTreeMap::new(),
        optional: BTreeMap::new(),
    };
    for line in text.lines() {
        let (map, line) = match line.strip_prefix('#') {
            Some(rest) => (&mut example.optional, rest),
            None => (&mut example.required, line),
        };
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        if !key.is_empty()
            && key
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        {
            map.insert(key.to_owned(), value.to_owned());
        }
    }
    example
}

/// A `${…}` reference of compose: the variable, how it is written (`:?`, `:-`, `-`, `?` or none)
/// and the default or message.
#[derive(Debug)]
struct VarRef {
    name: String,
    form: String,
    rest: String,
}

fn var_refs(text: &str) -> Vec<VarRef> {
    text.split("${")
        .skip(1)
        .map(|piece| {
            let inner = piece.split_once('}').expect("${ is closed").0;
            let end = inner
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(inner.len());
            let (name, tail) = inner.split_at(end);
            let form_len = tail
                .find(|c| !matches!(c, ':' | '?' | '-'))
                .unwrap_or(tail.len());
            VarRef {
                name: name.to_owned(),
                form: tail[..form_len].to_owned(),
                rest: tail[form_len..].to_owned(),
            }
        })
        .collect()
}

/// `value` as compose resolves it with the values of .env.example (defaults where it has none).
fn interpolate(value: &str, example: &EnvExample) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let end = rest[start..].find('}').expect("${ is closed") + start;
        let var = &var_refs(&rest[start..=end])[0];
        let resolved = example
            .required
            .get(&var.name)
            .cloned()
            .unwrap_or_else(|| var.rest.clone());
        out.push_str(&resolved);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    out
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

/// Container ports published by `ports` entries (`"127.0.0.1:host:container"`).
fn container_ports(svc: &Value) -> Vec<u16> {
    port_entries(svc).iter().map(|p| port_of(p)).collect()
}

fn port_entries(svc: &Value) -> Vec<String> {
    svc["ports"]
        .as_sequence()
        .map(|ports| {
            ports
                .iter()
                .map(|p| p.as_str().expect("port entry is a string").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The host port of a `"127.0.0.1:host:container"` entry (`${VAR:-default}` resolved to its default).
fn host_port(entry: &str) -> String {
    let host = entry
        .strip_prefix("127.0.0.1:")
        .and_then(|rest| rest.rsplit_once(':'))
        .map(|(host, _)| host)
        .unwrap_or_else(|| panic!("{entry} is 127.0.0.1:host:container"));
    match host.strip_prefix("${") {
        Some(var) => var
            .split_once(":-")
            .and_then(|(_, default)| default.strip_suffix('}'))
            .unwrap_or_else(|| panic!("{entry}: ${{VAR:-default}}"))
            .to_owned(),
        None => host.to_owned(),
    }
}

fn services(compose: &Value) -> Vec<(String, &Value)> {
    compose["services"]
        .as_mapping()
        .expect("services")
        .iter()
        .map(|(k, v)| (k.as_str().expect("service name").to_owned(), v))
        .collect()
}

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
        orders_svc::config::Cli::command(),
    );
    for name in ["relay-svc-1", "relay-svc-2"] {
        check_service(
            &compose,
            name,
            "relay-svc",
            relay_svc::config::Cli::command(),
        );
    }
    for name in ["mail-svc-1", "mail-svc-2"] {
        check_service(&compose, name, "mail-svc", mail_svc::config::Cli::command());
    }
}

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
    // The gRPC ports the README promises.
    for (port, name) in [
        ("50051", "orders-svc"),
        ("50152", "relay-svc-1"),
        ("50153", "relay-svc-2"),
        ("50253", "mail-svc-1"),
        ("50254", "mail-svc-2"),
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

#[test]
fn one_image_built_once_and_pinned_infrastructure() {
    let compose = compose();
    let mut builders = Vec::new();
    for (name, svc) in services(&compose) {
        let image = svc["image"]
            .as_str()
            .unwrap_or_else(|| panic!("{name} names its image: {svc:?}"));
        if svc.get("build").is_some() {
            builders.push(name.clone());
            assert_eq!(svc["pull_policy"].as_str(), Some("build"), "{name} builds");
        } else if image == "outbox:local" {
            assert_eq!(
                svc["pull_policy"].as_str(),
                Some("never"),
                "{name} runs the built image, never pulls it"
            );
        } else {
            let (_, tag) = image
                .rsplit_once(':')
                .unwrap_or_else(|| panic!("{name}: {image} is pinned"));
            assert!(
                tag != "latest" && tag.contains('.'),
                "{name}: {image} is pinned to a minor version"
            );
        }
    }
    assert_eq!(
        builders,
        ["orders-svc"],
        "exactly one service builds the image"
    );

    let volumes = &compose["volumes"];
    for (name, mount) in [
        ("postgres", "/var/lib/postgresql/data"),
        ("rabbitmq", "/var/lib/rabbitmq"),
    ] {
        let declared = format!("{:?}", service(&compose, name)["volumes"]);
        let volume = format!("{name}-data");
        assert!(
            declared.contains(&format!("{volume}:{mount}")),
            "{name} keeps its data in a named volume: {declared}"
        );
        assert!(volumes.get(volume.as_str()).is_some(), "{volume} declared");
    }
    assert_eq!(
        service(&compose, "rabbitmq")["hostname"].as_str(),
        Some("rabbitmq"),
        "RabbitMQ's node name (and data directory) does not change with the container"
    );
    let pg_check = format!("{:?}", service(&compose, "postgres")["healthcheck"]["test"]);
    assert!(
        pg_check.contains("127.0.0.1"),
        "PostgreSQL checked over TCP: {pg_check}"
    );
}

#[test]
fn dockerfile_is_what_a_docker_user_expects() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../Dockerfile");
    let text = std::fs::read_to_string(path).expect("Dockerfile exists");
    assert!(
        text.starts_with("# syntax="),
        "the syntax directive is the first line"
    );
    for port in ["50051", "50052", "50053", "9101", "9102", "9103"] {
        assert!(
            text.lines()
                .any(|l| l.starts_with("EXPOSE") && l.contains(port)),
            "EXPOSE {port}"
        );
    }
    assert!(text.contains("strip /out/"), "binaries are stripped");
}

#[test]
fn broker_users_and_shared_settings() {
    let compose = compose();
    let relay = env_of(service(&compose, "relay-svc-1"));
    let mail = env_of(service(&compose, "mail-svc-1"));
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
    assert_eq!(permission("relay")["write"], format!("^{exchange}$"));
    assert_eq!(permission("relay")["read"], "^$");
    let queue = regex_escape(&mail["MAIL_QUEUE"]);
    assert_eq!(permission("mail")["write"], format!("^{queue}.*$"));
}

fn regex_escape(name: &str) -> String {
    name.replace('.', "\\.")
}

/// The `src:dst[:mode]` entries of a service's `volumes`.
fn mounts(svc: &Value) -> Vec<(String, String)> {
    svc["volumes"]
        .as_sequence()
        .map(|v| {
            v.iter()
                .map(|m| {
                    let m = m.as_str().expect("volume entry is a string");
                    let mut parts = m.split(':');
                    let src = parts.next().expect("source").to_owned();
                    let dst = parts.next().unwrap_or_else(|| panic!("{m}: src:dst"));
                    (src, dst.to_owned())
                })
                .collect()
        })
        .unwrap_or_default()
}

fn deploy_path(relative: &str) -> std::path::PathBuf {
    std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy")).join(relative)
}

/// Where `container_path` comes from in the repository, through the service's bind mounts
/// (a mounted directory or the file itself).
fn mounted_source(svc: &Value, container_path: &str) -> Option<std::path::PathBuf> {
    mounts(svc).into_iter().find_map(|(src, dst)| {
        let rest = container_path.strip_prefix(dst.as_str())?;
        if !src.starts_with("./") || !(rest.is_empty() || rest.starts_with('/')) {
            return None;
        }
        Some(deploy_path(&format!("{src}{rest}")))
    })
}

fn read_yaml(path: &std::path::Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{} parses: {e}", path.display()))
}

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
        let Some(addr) = env.get("METRICS_ADDR") else {
            continue;
        };
        let binary = svc["command"][0].as_str().expect("command").to_owned();
        expected.insert(format!("{name}:{}", port_of(addr)), binary);
    }
    assert_eq!(expected.len(), 5, "five services export metrics");
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
        5,
        "all five service containers: {exporting:?}"
    );
}

/// Where the `secrets` service writes and the others read (deploy/dev-secrets.sh's DIR).
const SECRETS: &str = "/run/outbox-secrets";

fn is_secret_name(name: &str) -> bool {
    ["PASSWORD", "SECRET", "TOKEN"]
        .iter()
        .any(|w| name.contains(w))
        && !name.ends_with("_FILE")
}

/// Every file of the repository a service mounts (the files of a mounted folder too).
fn mounted_files(compose: &Value) -> Vec<(String, std::path::PathBuf)> {
    fn walk(path: std::path::PathBuf, out: &mut Vec<std::path::PathBuf>) {
        if path.is_dir() {
            for entry in std::fs::read_dir(&path).expect("readable folder") {
                walk(entry.expect("entry").path(), out);
            }
        } else {
            out.push(path);
        }
    }
    let mut files = Vec::new();
    for (name, svc) in services(compose) {
        for (src, _) in mounts(svc) {
            if let Some(relative) = src.strip_prefix("./") {
                let mut found = Vec::new();
                walk(deploy_path(relative), &mut found);
                files.extend(found.into_iter().map(|f| (name.clone(), f)));
            }
        }
    }
    files
}

/// No password is written in compose.yaml or in a file it mounts: each secret is a variable that
/// compose requires (`${VAR:?…}`, the message naming deploy/.env.example), listed there with a
/// placeholder; every other variable is listed (commented) with compose's default.
#[test]
fn no_password_in_compose_or_its_files_and_every_variable_in_env_example() {
    let text = std::fs::read_to_string(deploy_path("compose.yaml")).expect("compose.yaml");
    let example = env_example();
    let mut used = std::collections::BTreeSet::new();
    for var in var_refs(&text) {
        let name = var.name.as_str();
        used.insert(name.to_owned());
        if var.form == ":?" {
            assert!(
                example.required.contains_key(name),
                "{name} is required by compose: a `{name}=` line in .env.example"
            );
            assert!(
                var.rest.contains(name) && var.rest.contains(".env.example"),
                "{name}: the error names the variable and .env.example: {}",
                var.rest
            );
        } else {
            assert!(
                !is_secret_name(name),
                "{name} is a secret: `${{{name}:?…}}`, no default, not `{}`",
                var.form
            );
            assert!(
                [":-", "-"].contains(&var.form.as_str()),
                "{name}: `:?` or a default, not `{}`",
                var.form
            );
            assert_eq!(
                example.optional.get(name),
                Some(&var.rest),
                "{name}: a `#{name}=<compose's default>` line in .env.example"
            );
        }
    }
    for name in example.required.keys().chain(example.optional.keys()) {
        assert!(
            used.contains(name),
            ".env.example lists {name}, which compose does not use"
        );
    }
    for (name, value) in &example.required {
        assert!(
            value.starts_with("change-me"),
            ".env.example holds placeholders only: {name}"
        );
    }

    // Secret settings and URL passwords are nothing but a required variable.
    let only_required_var = |value: &str| {
        value.starts_with("${")
            && value.ends_with('}')
            && var_refs(value).len() == 1
            && var_refs(value)[0].form == ":?"
    };
    let compose = compose();
    for (name, svc) in services(&compose) {
        if svc.get("environment").is_none() {
            continue;
        }
        for (key, value) in env_of(svc) {
            if is_secret_name(&key) {
                assert!(
                    only_required_var(&value),
                    "{name}: {key} is `${{VAR:?…}}`, not {value:?}"
                );
            }
            if let Some((scheme, rest)) = value.split_once("://") {
                let authority = rest.split('@').next().filter(|_| rest.contains('@'));
                if let Some(userinfo) = authority {
                    let password = userinfo.split_once(':').map(|(_, p)| p).unwrap_or_else(|| {
                        panic!("{name}: {key} ({scheme}) has a user without a password")
                    });
                    assert!(
                        only_required_var(password),
                        "{name}: {key}'s password is `${{VAR:?…}}`"
                    );
                }
            }
        }
    }

    // The files compose mounts hold no password either; the RabbitMQ users' hashes are filled
    // in by deploy/dev-secrets.sh (scripts.rs runs it).
    for (name, file) in mounted_files(&compose) {
        if file.extension().is_some_and(|e| e == "sh") {
            continue; // the script reads the passwords from its environment (scripts.rs)
        }
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{file:?}: {e}"));
        for line in text.lines() {
            // Allowed: the placeholders of the hashes and the name of RabbitMQ's hash scheme.
            let lower = line
                .to_lowercase()
                .replace("\"password_hash\": \"@", "")
                .replace("_password_hash@", "")
                .replace("rabbit_password_hashing_sha256", "");
            if ["password", "passwd", "securejsondata"]
                .iter()
                .any(|w| lower.contains(w))
            {
                panic!(
                    "{name} mounts {}, which holds a password: {line}",
                    file.display()
                );
            }
        }
        assert!(
            !text.contains("guest"),
            "{name} mounts {}, which names the default guest user",
            file.display()
        );
    }
    let definitions: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(deploy_path("rabbitmq/definitions.json")).expect("definitions"),
    )
    .expect("definitions.json parses");
    for user in definitions["users"].as_array().expect("users") {
        let user_name = user["name"].as_str().expect("name");
        assert!(user.get("password").is_none(), "{user_name}: no password");
        assert_eq!(
            user["password_hash"],
            format!("@{user_name}_password_hash@"),
            "{user_name}: the hash is filled in from RABBITMQ_{}_PASSWORD",
            user_name.to_uppercase()
        );
        assert!(
            used.contains(&format!("RABBITMQ_{}_PASSWORD", user_name.to_uppercase())),
            "compose passes {user_name}'s password to the secrets service"
        );
    }
}

/// Every gRPC port is behind TLS with the development certificate and takes tokens from the
/// files the `secrets` service writes (before any service starts), mounted read-only; the
/// health checks trust its CA; RabbitMQ loads the users it writes.
#[test]
fn every_grpc_port_is_behind_tls_with_tokens_from_the_secrets_service() {
    let compose = compose();
    let secrets = service(&compose, "secrets");
    assert!(
        compose["volumes"].get("secrets").is_some(),
        "the secrets volume is declared"
    );
    assert_eq!(secrets["restart"].as_str(), Some("no"), "secrets runs once");
    assert!(
        mounts(secrets).contains(&("secrets".to_owned(), SECRETS.to_owned())),
        "secrets writes the volume"
    );
    let entrypoint = format!("{:?}", secrets["entrypoint"]);
    let script = mounts(secrets)
        .into_iter()
        .find(|(src, _)| src == "./dev-secrets.sh")
        .expect("the script is mounted")
        .1;
    assert!(
        entrypoint.contains(&format!("{script} {SECRETS}")),
        "secrets runs the script into the volume: {entrypoint}"
    );
    assert!(
        mounted_source(
            secrets,
            &format!(
                "{}/rabbitmq/definitions.json",
                script.rsplit_once('/').expect("dir").0
            )
        ) == Some(deploy_path("./rabbitmq/definitions.json")),
        "the script finds definitions.json beside it"
    );

    // Waits for `secrets` to have finished, directly or through what it waits for.
    let waits_for_secrets = |name: &str| {
        let mut todo = vec![name.to_owned()];
        while let Some(n) = todo.pop() {
            let depends = &service(&compose, &n)["depends_on"];
            if depends["secrets"]["condition"].as_str() == Some("service_completed_successfully") {
                return true;
            }
            if let Some(m) = depends.as_mapping() {
                todo.extend(m.keys().filter_map(|k| k.as_str().map(str::to_owned)));
            }
        }
        false
    };
    let reads_secrets_read_only = |name: &str| {
        let entries = format!("{:?}", service(&compose, name)["volumes"]);
        entries.contains(&format!("secrets:{SECRETS}:ro"))
    };

    let mut grpc_services = Vec::new();
    for (name, svc) in services(&compose) {
        if svc["image"].as_str() != Some("outbox:local") {
            continue;
        }
        let binary = svc["command"][0].as_str().expect("command");
        let env = env_of(svc);
        for (key, file) in [
            ("TLS_CERT_FILE", "grpc/server.pem"),
            ("TLS_KEY_FILE", "grpc/server.key"),
            ("AUTH_TOKENS_FILE", "grpc/auth-tokens"),
            // `<binary> healthcheck` reads it: the check calls the port over TLS.
            ("GRPC_CA_FILE", "grpc/ca.pem"),
        ] {
            assert_eq!(
                env.get(key).map(String::as_str),
                Some(format!("{SECRETS}/{file}").as_str()),
                "{name}: {key}"
            );
        }
        if binary != "orders-svc" {
            assert_eq!(
                env.get("ADMIN_TOKENS_FILE").map(String::as_str),
                Some(format!("{SECRETS}/grpc/admin-tokens").as_str()),
                "{name}: admin tokens from the file"
            );
            assert!(!env.contains_key("ADMIN_TOKEN"), "{name}: no ADMIN_TOKEN");
        }
        assert!(
            reads_secrets_read_only(&name),
            "{name} mounts the secrets read-only"
        );
        assert!(waits_for_secrets(&name), "{name} starts after secrets");
        let health = format!("{:?}", svc["healthcheck"]["test"]);
        assert!(health.contains("healthcheck"), "{name}: {health}");
        grpc_services.push(name);
    }
    assert_eq!(grpc_services.len(), 5, "{grpc_services:?}");

    // RabbitMQ loads the definitions `secrets` wrote.
    let rabbitmq = service(&compose, "rabbitmq");
    let conf = std::fs::read_to_string(
        mounted_source(rabbitmq, "/etc/rabbitmq/conf.d/20-outbox.conf").expect("conf mounted"),
    )
    .expect("20-outbox.conf");
    let load = conf
        .lines()
        .find_map(|l| l.strip_prefix("load_definitions = "))
        .expect("load_definitions");
    assert_eq!(load, format!("{SECRETS}/rabbitmq/definitions.json"));
    assert!(reads_secrets_read_only("rabbitmq"));
    assert!(waits_for_secrets("rabbitmq"));
    // A placeholder password (refused by `secrets`) keeps the services that use one from starting.
    for name in ["postgres", "grafana"] {
        assert!(waits_for_secrets(name), "{name} starts after secrets");
    }
}
