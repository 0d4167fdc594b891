//! deploy/prometheus/alerts.yaml, tested: `promtool check rules` and `promtool test rules`
//! (alerts.test.yaml: a firing and a quiet series for every alert), and statically: every alert
//! carries a summary, a description and a runbook naming a real `outboxctl` command, reads only
//! metrics the services export, and is listed in docs/OPERATIONS.md.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
    process::Command,
};

use serde_yaml::Value;

/// The `outboxctl` commands a runbook may name (issue 14's command list).
const OUTBOXCTL: &[&str] = &[
    "status",
    "backlog",
    "quarantine list",
    "quarantine requeue",
    "quarantine drop",
    "held list",
    "held release",
    "dead-letters list",
    "dead-letters redrive",
    "mails failed",
    "mails retry",
    "audit",
    "trace",
    "replay",
    "fleet list",
    "fleet add",
    "fleet drain",
    "fleet remove",
];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/prometheus")
}

fn yaml(name: &str) -> Value {
    let path = dir().join(name);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{name} parses: {e}"))
}

/// Every rule of alerts.yaml, by alert name.
fn rules() -> BTreeMap<String, Value> {
    let mut rules = BTreeMap::new();
    for group in yaml("alerts.yaml")["groups"].as_sequence().expect("groups") {
        for rule in group["rules"].as_sequence().expect("rules") {
            let name = rule["alert"].as_str().expect("every rule is an alert");
            assert!(
                rules.insert(name.to_owned(), rule.clone()).is_none(),
                "{name} is defined once"
            );
        }
    }
    rules
}

/// Runs promtool with `args` in deploy/prometheus; fails naming the package when it is missing.
fn promtool(args: &[&str]) -> String {
    let out = Command::new("promtool")
        .args(args)
        .current_dir(dir())
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run promtool ({e}): install it with `apt-get install prometheus` \
                 (Debian/Ubuntu; .ci/run does this when it is missing), or put a promtool \
                 binary on PATH"
            )
        });
    let text = outbox_testkit::output_text(&out);
    assert!(
        out.status.success(),
        "promtool {} failed:\n{text}",
        args.join(" ")
    );
    text
}

#[test]
fn promtool_checks_the_rules_and_their_unit_tests_pass() {
    let checked = promtool(&["check", "rules", "alerts.yaml"]);
    println!("{checked}");
    assert!(
        checked.contains(&format!("{} rules found", rules().len())),
        "{checked}"
    );
    println!("{}", promtool(&["test", "rules", "alerts.test.yaml"]));
    // The scrape config of the compose stack, with the rules it loads.
    println!("{}", promtool(&["check", "config", "prometheus.yml"]));
}

#[test]
fn every_alert_is_unit_tested_firing_and_quiet() {
    let tests = yaml("alerts.test.yaml");
    assert_eq!(
        tests["rule_files"].as_sequence().expect("rule_files"),
        &[Value::from("alerts.yaml")],
        "the tests load the rules file itself"
    );
    let mut firing = BTreeSet::new();
    let mut quiet = BTreeSet::new();
    for group in tests["tests"].as_sequence().expect("tests") {
        for case in group["alert_rule_test"].as_sequence().expect("cases") {
            let name = case["alertname"].as_str().expect("alertname").to_owned();
            let expected = case["exp_alerts"].as_sequence().map_or(0, Vec::len);
            if expected > 0 {
                firing.insert(name);
            } else {
                quiet.insert(name);
            }
        }
    }
    for name in rules().keys() {
        assert!(firing.contains(name), "{name} has no test where it fires");
        assert!(
            quiet.contains(name),
            "{name} has no test where it stays quiet"
        );
    }
}

#[test]
fn every_alert_explains_itself_and_names_the_outboxctl_command_that_resolves_it() {
    for (name, rule) in rules() {
        for key in ["summary", "description", "runbook"] {
            let text = rule["annotations"][key].as_str().unwrap_or_default();
            assert!(!text.trim().is_empty(), "{name} has no {key}");
        }
        assert!(
            matches!(rule["labels"]["severity"].as_str(), Some("page" | "warn")),
            "{name} has severity page or warn"
        );
        let runbook = rule["annotations"]["runbook"].as_str().unwrap_or_default();
        let named: Vec<&str> = runbook.split("outboxctl ").skip(1).collect();
        assert!(
            !named.is_empty(),
            "{name}'s runbook names no outboxctl command: {runbook}"
        );
        for rest in named {
            assert!(
                OUTBOXCTL.iter().any(|cmd| rest.starts_with(cmd)),
                "{name}'s runbook names an unknown command: outboxctl {rest}"
            );
        }
    }
}

#[test]
fn every_alert_reads_exported_metrics_and_is_in_the_readme() {
    let mut exported: BTreeSet<&str> = outbox_testkit::PROCESS_METRICS
        .iter()
        .copied()
        .chain(["up", outbox_kit::metrics::BUILD_INFO])
        .collect();
    for list in [
        orders_svc::metrics::METRICS,
        outbox_relay::status::METRICS,
        outbox_relay::status::FLEET_METRICS,
        mail_svc::metrics::METRICS,
        outboxctl::audit::METRICS,
    ] {
        exported.extend(list.iter().map(|m| m.name));
    }
    let readme = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../docs/OPERATIONS.md"
    ))
    .expect("docs/OPERATIONS.md");
    for (name, rule) in rules() {
        let expr = rule["expr"].as_str().expect("expr");
        let names = e2e::promql::metric_names(expr);
        assert!(!names.is_empty(), "{name} reads no metric: {expr}");
        for metric in names {
            assert!(
                exported.contains(metric.as_str()),
                "{name} reads {metric}, which no service exports"
            );
        }
        assert!(
            readme.contains(&format!("`{name}`")),
            "the alert list of docs/OPERATIONS.md does not name {name}"
        );
    }
}
