//! Secure by default: no password in compose.yaml or a file it mounts, every variable listed in
//! deploy/.env.example, every gRPC port behind TLS with tokens from the `secrets` service.

use serde_yaml::Value;

use super::file::{
    compose, deploy_path, env_example, env_of, mounted_source, mounts, service, services, var_refs,
};

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
        // The audit (`outboxctl audit --watch`) and the fleet's registration (`outboxctl fleet
        // add`, run by `sh -c`) serve no gRPC: they only use the databases; the console serves
        // HTTPS (checked below).
        let outboxctl = binary == "outboxctl"
            || (binary == "sh" && format!("{:?}", svc["command"]).contains("outboxctl"));
        if outboxctl || binary == "outbox-console" {
            continue;
        }
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

    // The console: HTTPS with the same certificate, sign-in tokens of its own from `secrets`,
    // the services' CA and tokens to call them.
    let console = env_of(service(&compose, "outbox-console"));
    for (key, file) in [
        ("TLS_CERT_FILE", "grpc/server.pem"),
        ("TLS_KEY_FILE", "grpc/server.key"),
        ("CONSOLE_VIEWER_TOKENS_FILE", "console/viewer-tokens"),
        ("CONSOLE_OPERATOR_TOKENS_FILE", "console/operator-tokens"),
        ("GRPC_CA_FILE", "grpc/ca.pem"),
        ("CONSOLE_AUTH_TOKEN_FILE", "grpc/auth-tokens"),
        ("CONSOLE_ADMIN_TOKEN_FILE", "grpc/admin-tokens"),
    ] {
        assert_eq!(
            console.get(key).map(String::as_str),
            Some(format!("{SECRETS}/{file}").as_str()),
            "outbox-console: {key}"
        );
    }
    assert!(
        !console.contains_key("CONSOLE_ADMIN_TOKEN"),
        "no token in compose"
    );
    assert!(reads_secrets_read_only("outbox-console"));
    assert!(waits_for_secrets("outbox-console"));

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
