//! deploy/grafana/outbox.json, tested: it has the panels an operator needs, and every metric its
//! queries (and the alert rules) read is one the real binaries export, checked against their live
//! `/metrics` answers after a little traffic. The same scrapes check each binary's metric
//! hygiene: HELP text for every family, `process_*` and `build_info`.

use std::{
    collections::{BTreeMap, BTreeSet},
    time::{Duration, Instant},
};

use e2e::stack::{Stack, StackConfig};
use outbox_proto::{
    mail::v1::{ListMailsRequest, MailState},
    orders::v1::{OrderStatus, UpsertOrderRequest},
};
use outbox_testkit::{Exposition, scrape};
use serde_json::Value;

fn dashboard() -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/grafana/outbox.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("outbox.json exists"))
        .expect("outbox.json parses")
}

/// Every metric name the dashboard's queries read, with the titles of the panels that read it.
fn dashboard_metrics() -> BTreeMap<String, BTreeSet<String>> {
    let mut names: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for panel in dashboard()["panels"].as_array().expect("panels") {
        if panel["type"] == "row" {
            continue;
        }
        let title = panel["title"].as_str().expect("title");
        let targets = panel["targets"].as_array().expect("targets");
        assert!(!targets.is_empty(), "panel {title} has a query");
        for target in targets {
            let expr = target["expr"].as_str().expect("expr");
            let read = e2e::promql::metric_names(expr);
            assert!(!read.is_empty(), "panel {title} reads no metric: {expr}");
            for name in read {
                names.entry(name).or_default().insert(title.to_owned());
            }
        }
    }
    names
}

/// Every metric name the alert rules read, except `up` (Prometheus makes it, not a service).
fn alert_metrics() -> BTreeSet<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/prometheus/alerts.yaml"
    );
    let rules: serde_yaml::Value =
        serde_yaml::from_str(&std::fs::read_to_string(path).expect("alerts.yaml")).expect("yaml");
    let mut names = BTreeSet::new();
    for group in rules["groups"].as_sequence().expect("groups") {
        for rule in group["rules"].as_sequence().expect("rules") {
            names.extend(e2e::promql::metric_names(
                rule["expr"].as_str().expect("expr"),
            ));
        }
    }
    names.remove("up");
    names
}

#[test]
fn the_dashboard_has_the_panels_an_operator_needs() {
    let json = dashboard();
    assert_eq!(
        json["uid"], "outbox",
        "a stable uid, so links to it keep working"
    );
    let panels = json["panels"].as_array().expect("panels");
    let ids: BTreeSet<i64> = panels
        .iter()
        .map(|p| p["id"].as_i64().expect("id"))
        .collect();
    assert_eq!(ids.len(), panels.len(), "panel ids are unique");
    let titles: Vec<&str> = panels
        .iter()
        .map(|p| p["title"].as_str().expect("title"))
        .collect();
    let names = dashboard_metrics();
    // What issue 14 asks the dashboard to show, and the metric that shows it.
    for (title, metric) in [
        ("Outbox backlog", "relay_outbox_backlog"),
        (
            "Oldest unsent row age",
            "relay_outbox_oldest_unsent_age_seconds",
        ),
        ("Publish rate", "relay_published_total"),
        (
            "Commit → publish latency",
            "relay_commit_to_publish_seconds_bucket",
        ),
        ("Held, dead letters, unsent", "mail_held_events"),
        ("Held, dead letters, unsent", "mail_dead_lettered_total"),
        ("Held, dead letters, unsent", "mail_unsent_mails"),
        ("Upsert latency", "orders_upsert_duration_seconds_bucket"),
    ] {
        assert!(titles.contains(&title), "a panel {title:?}: {titles:?}");
        assert!(
            names.get(metric).is_some_and(|p| p.contains(title)),
            "panel {title:?} reads {metric}"
        );
    }
}

/// Every panel query parses as PromQL: promtool checks them as recording rules (Grafana's
/// `$__rate_interval` stands for a range of 5m here).
#[test]
fn every_panel_query_is_valid_promql() {
    let mut rules = String::from("groups:\n  - name: dashboard\n    rules:\n");
    let mut n = 0;
    for panel in dashboard()["panels"].as_array().expect("panels") {
        for target in panel["targets"].as_array().into_iter().flatten() {
            let expr = target["expr"]
                .as_str()
                .expect("expr")
                .replace("$__rate_interval", "5m");
            n += 1;
            let quoted = serde_json::to_string(&expr).expect("quoted");
            rules.push_str(&format!(
                "      - record: dashboard:query_{n}\n        expr: {quoted}\n"
            ));
        }
    }
    let path = std::env::temp_dir().join(format!(
        "{}.yaml",
        outbox_testkit::unique("dashboard_queries")
    ));
    std::fs::write(&path, &rules).expect("write the rules");
    let out = std::process::Command::new("promtool")
        .args(["check", "rules"])
        .arg(&path)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run promtool ({e}): install it with `apt-get install prometheus` \
                 (Debian/Ubuntu; .ci/run does this when it is missing)"
            )
        });
    let _ = std::fs::remove_file(&path);
    let text = outbox_testkit::output_text(&out);
    assert!(
        out.status.success(),
        "a panel query is not PromQL:\n{text}\n{rules}"
    );
    assert!(text.contains(&format!("{n} rules found")), "{text}");
}

async fn upsert(stack: &Stack, id: i64, status: OrderStatus) {
    stack
        .orders_client()
        .await
        .expect("orders client")
        .upsert(UpsertOrderRequest {
            id,
            status: status as i32,
            customer_email: format!("dash{id}@example.com"),
        })
        .await
        .expect("upsert");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_metric_the_dashboard_and_the_alerts_read_is_exported_by_the_real_binaries() {
    let mut stack = Stack::start(StackConfig::new("dashboard"))
        .await
        .expect("stack starts");

    // A little traffic, so that the histograms have observations.
    for id in 1..=3 {
        upsert(&stack, id, OrderStatus::Pending).await;
        upsert(&stack, id, OrderStatus::Paid).await;
    }
    let mut mail = stack.mail_client(0).await.expect("mail client");
    let deadline = Instant::now() + Duration::from_secs(60);
    for id in 1..=3 {
        loop {
            let mails = mail
                .list_mails(ListMailsRequest { order_id: id })
                .await
                .expect("ListMails")
                .into_inner()
                .mails;
            if mails.len() == 2 && mails.iter().all(|m| m.state == MailState::Sent as i32) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "order {id}'s mails are sent: {mails:?}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    // The completeness audit, as compose runs it, on the stack's databases.
    let audit_addr = e2e::stack::free_addr().expect("a port");
    let mut audit = std::process::Command::new(
        e2e::stack::Binaries::locate()
            .and_then(|b| b.path("outboxctl"))
            .expect("outboxctl is built"),
    )
    .args(["audit", "--watch", "--interval", "1s"])
    .arg(format!("--metrics-addr={audit_addr}"))
    .arg(format!("--orders-db={}", stack.orders_db_url))
    .arg(format!("--mail-db={}", stack.mail_db_url))
    .stderr(std::process::Stdio::null())
    .spawn()
    .expect("outboxctl audit starts");
    let processes = [
        ("orders-svc", stack.orders.metrics_addr),
        ("relay-svc", stack.relays[0].metrics_addr),
        ("mail-svc", stack.mails[0].metrics_addr),
        ("outboxctl-audit", audit_addr),
    ];
    let deadline = Instant::now() + Duration::from_secs(30);
    while scrape(audit_addr).await.is_err() {
        assert!(Instant::now() < deadline, "the audit serves /metrics");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut wanted: BTreeMap<String, BTreeSet<String>> = dashboard_metrics();
    // A fleet instance's own gauges are exported in fleet mode only, which this stack does not
    // run: relay-svc's fleet test scrapes them from a fleet instance (tests/it/fleet.rs).
    let fleet_only: BTreeSet<&str> = outbox_relay::status::FLEET_METRICS
        .iter()
        .map(|m| m.name)
        .collect();
    for name in alert_metrics()
        .into_iter()
        .filter(|n| !fleet_only.contains(n.as_str()))
    {
        wanted
            .entry(name)
            .or_default()
            .insert("alerts.yaml".to_owned());
    }
    // The gauges follow their loops (backlog refresh, the mail statistics): give them a moment.
    let deadline = Instant::now() + Duration::from_secs(30);
    let unknown = loop {
        let mut scrapes = Vec::new();
        for (service, addr) in processes {
            let text = scrape(addr)
                .await
                .unwrap_or_else(|e| panic!("{service}: {e}"));
            let e = Exposition::parse(&text);
            assert_eq!(
                e.hygiene_problems(service),
                Vec::<String>::new(),
                "{service}'s /metrics"
            );
            scrapes.push(e);
        }
        let unknown: Vec<String> = wanted
            .iter()
            .filter(|(name, _)| !scrapes.iter().any(|e| e.has_series(name)))
            .map(|(name, used_by)| format!("{name} (read by {used_by:?})"))
            .collect();
        if unknown.is_empty() || Instant::now() > deadline {
            break unknown;
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let _ = audit.kill();
    let _ = audit.wait();
    stack.stop().await;
    assert!(
        unknown.is_empty(),
        "no running service exports: {}",
        unknown.join(", ")
    );
    println!(
        "{} metric names read by the dashboard and the alerts, all exported",
        wanted.len()
    );
}
