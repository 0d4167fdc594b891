//! Reading what the checks check: deploy/compose.yaml (its anchors merged), deploy/.env.example,
//! the `${…}` references, services, their environments, ports and mounts.

use std::collections::BTreeMap;

use serde_yaml::Value;

pub(super) fn compose() -> Value {
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
pub(super) struct EnvExample {
    pub(super) required: BTreeMap<String, String>,
    pub(super) optional: BTreeMap<String, String>,
}

pub(super) fn env_example() -> EnvExample {
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
pub(super) struct VarRef {
    pub(super) name: String,
    pub(super) form: String,
    pub(super) rest: String,
}

pub(super) fn var_refs(text: &str) -> Vec<VarRef> {
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
pub(super) fn interpolate(value: &str, example: &EnvExample) -> String {
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

pub(super) fn service<'a>(compose: &'a Value, name: &str) -> &'a Value {
    compose["services"]
        .get(name)
        .unwrap_or_else(|| panic!("service {name} is defined"))
}

pub(super) fn env_of(svc: &Value) -> BTreeMap<String, String> {
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

pub(super) fn port_of(addr: &str) -> u16 {
    addr.rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{addr} has a port"))
}

pub(super) fn host_of_url(url: &str) -> String {
    let rest = url.split("://").nth(1).expect("url has a scheme");
    let authority = rest.split('/').next().expect("authority");
    let host_port = authority.rsplit('@').next().expect("host");
    host_port.split(':').next().expect("host").to_owned()
}

/// Container ports published by `ports` entries (`"127.0.0.1:host:container"`).
pub(super) fn container_ports(svc: &Value) -> Vec<u16> {
    port_entries(svc).iter().map(|p| port_of(p)).collect()
}

pub(super) fn port_entries(svc: &Value) -> Vec<String> {
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
pub(super) fn host_port(entry: &str) -> String {
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

pub(super) fn services(compose: &Value) -> Vec<(String, &Value)> {
    compose["services"]
        .as_mapping()
        .expect("services")
        .iter()
        .map(|(k, v)| (k.as_str().expect("service name").to_owned(), v))
        .collect()
}

/// The `src:dst[:mode]` entries of a service's `volumes`.
pub(super) fn mounts(svc: &Value) -> Vec<(String, String)> {
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

pub(super) fn deploy_path(relative: &str) -> std::path::PathBuf {
    std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy")).join(relative)
}

/// Where `container_path` comes from in the repository, through the service's bind mounts
/// (a mounted directory or the file itself).
pub(super) fn mounted_source(svc: &Value, container_path: &str) -> Option<std::path::PathBuf> {
    mounts(svc).into_iter().find_map(|(src, dst)| {
        let rest = container_path.strip_prefix(dst.as_str())?;
        if !src.starts_with("./") || !(rest.is_empty() || rest.starts_with('/')) {
            return None;
        }
        Some(deploy_path(&format!("{src}{rest}")))
    })
}

pub(super) fn read_yaml(path: &std::path::Path) -> Value {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{} parses: {e}", path.display()))
}
