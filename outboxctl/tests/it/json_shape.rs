//! docs/OUTBOXCTL_JSON.md holds to the real `--json` output: each command's documented example
//! has the same key paths and the same JSON types (string, number, bool, null, array, object;
//! arrays through their first element) as the document the real binary prints against the real
//! stack, in a state where every list is non-empty (a quarantined row and the row it holds back,
//! a chain held behind a dead letter, a failed mail, lagging orders). Every command of
//! `outboxctl --help` has its example, and every example is checked.
//!
//! `OUTBOXCTL_JSON_DUMP=<dir>` writes each real document to `<dir>/<command>.json` (to refresh
//! the examples after a deliberate change of the output).

use std::{collections::BTreeMap, time::Duration};

use clap::CommandFactory as _;
use outbox_proto::orders::v1::OrderStatus;
use outbox_testkit::orders::payload;
use serde_json::Value;

use crate::common::{Ctl, Run, Stack, StackCtl as _, TOKEN, wait_until};

const DOC: &str = include_str!("../../../docs/OUTBOXCTL_JSON.md");

/// The line before each example's ```json fence: `<!-- json-shape: quarantine list -->`.
const MARKER: &str = "<!-- json-shape: ";

/// The examples of the document: (command, JSON), in the document's order.
fn examples(doc: &str) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    let mut lines = doc.lines();
    while let Some(line) = lines.next() {
        let Some(name) = line.trim().strip_prefix(MARKER) else {
            continue;
        };
        let name = name
            .strip_suffix("-->")
            .unwrap_or_else(|| panic!("unterminated marker: {line}"))
            .trim()
            .to_owned();
        assert_eq!(
            lines.next().map(str::trim),
            Some("```json"),
            "the marker of {name:?} must be followed by a ```json fence"
        );
        let body: Vec<&str> = lines.by_ref().take_while(|l| l.trim() != "```").collect();
        let json = serde_json::from_str(&body.join("\n"))
            .unwrap_or_else(|e| panic!("the example of {name:?} is not JSON: {e}"));
        out.push((name, json));
    }
    out
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Every key path of `v` with its JSON type; an array contributes its first element as
/// `path[]` (an empty array: nothing below it).
fn shape(v: &Value) -> BTreeMap<String, &'static str> {
    fn walk(path: String, v: &Value, out: &mut BTreeMap<String, &'static str>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    walk(format!("{path}.{k}"), v, out);
                }
            }
            Value::Array(a) => {
                if let Some(first) = a.first() {
                    walk(format!("{path}[]"), first, out);
                }
            }
            _ => {}
        }
        out.insert(path, kind(v));
    }
    let mut out = BTreeMap::new();
    walk(String::new(), v, &mut out);
    out
}

/// What differs between the documented and the real shape, one line each (empty: the same).
fn differences(doc: &Value, real: &Value) -> Vec<String> {
    let (d, r) = (shape(doc), shape(real));
    let mut out = Vec::new();
    for (path, t) in &d {
        match r.get(path) {
            None => out.push(format!("{path:?}: documented ({t}), not in the output")),
            Some(rt) if rt != t => out.push(format!("{path:?}: documented {t}, output {rt}")),
            Some(_) => {}
        }
    }
    for (path, t) in &r {
        if !d.contains_key(path) {
            out.push(format!("{path:?}: in the output ({t}), not documented"));
        }
    }
    out
}

/// Every command path of `outboxctl --help`, subcommands spelled out (`quarantine list`).
fn commands() -> Vec<String> {
    fn leaves(prefix: &str, c: &clap::Command, out: &mut Vec<String>) {
        for sub in c.get_subcommands().filter(|s| s.get_name() != "help") {
            let name = format!("{prefix}{}", sub.get_name());
            if sub.has_subcommands() {
                leaves(&format!("{name} "), sub, out);
            } else {
                out.push(name);
            }
        }
    }
    let mut out = Vec::new();
    leaves("", &outboxctl::Cli::command(), &mut out);
    out
}

#[test]
fn the_shape_comparison_sees_keys_and_types() {
    let doc = serde_json::json!({"a": 1, "b": [{"c": "x", "d": null}], "e": []});
    assert!(differences(&doc, &doc).is_empty());
    for real in [
        serde_json::json!({"a": 1, "b": [{"c": "x", "d": null}], "e": [], "f": true}),
        serde_json::json!({"a": 1, "b": [{"c": "x"}], "e": []}),
        serde_json::json!({"a": "1", "b": [{"c": "x", "d": null}], "e": []}),
        serde_json::json!({"a": 1, "b": [{"c": "x", "d": 4}], "e": []}),
        serde_json::json!({"a": 1, "b": [], "e": []}),
        serde_json::json!({"a": 1, "b": [{"c": "x", "d": null}], "e": [1]}),
    ] {
        assert!(!differences(&doc, &real).is_empty(), "{real}");
    }
    let parsed = examples(
        "text\n<!-- json-shape: held list -->\n```json\n{\"x\": [1]}\n```\n<!-- json-shape: \
         status -->\n```json\n{}\n```\n",
    );
    assert_eq!(
        parsed,
        [
            ("held list".to_owned(), serde_json::json!({"x": [1]})),
            ("status".to_owned(), serde_json::json!({}))
        ]
    );
}

/// The real documents, by command, as the test collects them.
#[derive(Default)]
struct Outputs(BTreeMap<String, Value>);

impl Outputs {
    /// Records `run`'s JSON as `name`'s, after checking its exit code.
    #[track_caller]
    fn record(&mut self, name: &str, run: Run, code: i32) {
        assert_eq!(run.code, code, "{name}: {run:?}");
        self.0.insert(name.to_owned(), run.json());
    }
}

async fn json(ctl: &Ctl, args: &[&str]) -> Run {
    let args: Vec<&str> = ["--json"].into_iter().chain(args.iter().copied()).collect();
    ctl.run(None, &args).await
}

async fn change(ctl: &Ctl, args: &[&str]) -> Run {
    let args: Vec<&str> = ["--json"]
        .into_iter()
        .chain(args.iter().copied())
        .chain(["--reason", "json shape test"])
        .collect();
    ctl.run(Some(TOKEN), &args).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn every_commands_json_output_has_its_documented_shape() {
    let mut stack = Stack::start().await;
    // a: mailed, then an event dead-lettered (a bad deploy of mail-svc) and the next one held
    // behind it; q: mailed, then a row the relay cannot encode (quarantined) and the row it
    // holds back; d: a quarantined row to drop.
    let (a, q, d, e, f) = (6101_i64, 6102_i64, 6103_i64, 6104_i64, 6105_i64);
    let a1 = stack.upsert(a, OrderStatus::Pending).await;
    let q1 = stack.upsert(q, OrderStatus::Pending).await;
    stack.wait_until_sent("a's first mail", a, &[a1]).await;
    stack.wait_until_sent("q's first mail", q, &[q1]).await;

    stack.redeploy_mail("relay-svc-typo").await;
    let a2 = stack.upsert(a, OrderStatus::Paid).await;
    let count = |sql: &'static str, pool: sqlx::PgPool| async move {
        sqlx::query_scalar::<_, i64>(sql)
            .fetch_one(&pool)
            .await
            .expect("count")
    };
    let mail_pool = stack.mail_pool.clone();
    wait_until("a2 dead-lettered", || async {
        count("select count(*) from dead_letters", mail_pool.clone()).await == 1
    })
    .await;
    stack.redeploy_mail("guest").await;
    stack.upsert(a, OrderStatus::Shipped).await;

    let insert = |id: i64, event_type: &'static str, prev: Option<i64>| {
        let pool = stack.orders_pool.clone();
        async move {
            sqlx::query_scalar::<_, i64>(
                "insert into outbox (aggregate_id, event_type, routing_key, prev_seq, payload)
                 values ($1, $2, $3, $4, $5) returning seq",
            )
            .bind(id)
            .bind(event_type)
            // A misspelt type has none: the relay quarantines the row.
            .bind(outbox_proto::orders::events::v1::routing_key(event_type))
            .bind(prev)
            .bind(payload(id, OrderStatus::Paid, OrderStatus::Pending))
            .fetch_one(&pool)
            .await
            .expect("insert")
        }
    };
    let q2 = insert(q, "OrderStatusChangd", Some(q1)).await;
    insert(q, "OrderStatusChanged", Some(q2)).await;
    let d1 = insert(d, "OrderCreatd", None).await;
    // e: a row dropped before the documented drop; f: one requeued before the documented requeue
    // (repaired first, so that it is published and not quarantined again).
    let e1 = insert(e, "OrderCreatd", None).await;
    let f1 = insert(f, "OrderCreatd", None).await;
    let ctl = stack.ctl();
    let (orders_pool, mail_pool) = (stack.orders_pool.clone(), stack.mail_pool.clone());
    let settled = || async {
        count(
            "select count(*) from outbox_quarantine",
            orders_pool.clone(),
        )
        .await
            == 4
            && count("select count(*) from held_events", mail_pool.clone()).await == 1
    };
    wait_until("four rows quarantined, a3 held", settled).await;
    // The server refused a1's mail for good (as the mailer records a permanent 5xx).
    sqlx::query(
        "update mails set sent_at = null, failed_at = now(),
                          last_error = '550 5.1.1 mailbox unavailable'
          where order_id = $1 and seq = $2",
    )
    .bind(a)
    .bind(a1)
    .execute(&stack.mail_pool)
    .await
    .expect("fail the mail");

    let mut real = Outputs::default();
    let (a_s, a1_s, a2_s, q2_s, d1_s) = (
        a.to_string(),
        a1.to_string(),
        a2.to_string(),
        q2.to_string(),
        d1.to_string(),
    );
    // What reads: every list non-empty.
    real.record("status", json(&ctl, &["status"]).await, 0);
    real.record("backlog", json(&ctl, &["backlog"]).await, 0);
    real.record(
        "quarantine list",
        json(&ctl, &["quarantine", "list"]).await,
        0,
    );
    real.record("held list", json(&ctl, &["held", "list"]).await, 0);
    real.record(
        "dead-letters list",
        json(&ctl, &["dead-letters", "list"]).await,
        0,
    );
    real.record("mails failed", json(&ctl, &["mails", "failed"]).await, 0);
    let lagging = i32::from(outboxctl::Failure::LAGGING);
    real.record(
        "audit",
        json(&ctl, &["audit", "--grace", "1ms"]).await,
        lagging,
    );
    real.record("trace", json(&ctl, &["trace", "--order", &a_s]).await, 0);
    let not_found = i32::from(outboxctl::Failure::NOT_FOUND);
    real.record(
        "error",
        json(&ctl, &["trace", "--order", "6199"]).await,
        not_found,
    );

    // What changes something, each with something to change, and something changed before
    // (every list of the answer non-empty).
    sqlx::query(
        "update outbox_quarantine set event_type = 'OrderCreated', routing_key = 'order.created'
          where seq = $1",
    )
    .bind(f1)
    .execute(&stack.orders_pool)
    .await
    .expect("repair");
    let (e1_s, f1_s, q1_s) = (e1.to_string(), f1.to_string(), q1.to_string());
    change(&ctl, &["quarantine", "requeue", "--seq", &f1_s])
        .await
        .ok();
    change(&ctl, &["quarantine", "drop", "--seq", &e1_s])
        .await
        .ok();
    let both = format!("{q2_s},{f1_s}");
    let requeue = change(&ctl, &["quarantine", "requeue", "--seq", &both]).await;
    real.record("quarantine requeue", requeue, 0);
    let both = format!("{d1_s},{e1_s}");
    let drop = change(&ctl, &["quarantine", "drop", "--seq", &both]).await;
    real.record("quarantine drop", drop, 0);
    let release = change(&ctl, &["held", "release", "--order", &a_s]).await;
    real.record("held release", release, 0);
    let redrive = change(&ctl, &["dead-letters", "redrive", "--seq", &a2_s]).await;
    real.record("dead-letters redrive", redrive, 0);
    // a1's mail failed, q1's was sent.
    let both = format!("{a1_s},{q1_s}");
    let retry = change(&ctl, &["mails", "retry", "--seq", &both]).await;
    real.record("mails retry", retry, 0);
    let queue = stack.names.queue.clone();
    let replay = change(
        &ctl,
        &[
            "replay",
            "--order",
            &a_s,
            "--from-seq",
            &a1_s,
            "--to-seq",
            &a1_s,
            "--queue",
            &queue,
        ],
    )
    .await;
    real.record("replay", replay, 0);
    real.record("audit --watch", watch_until_stopped(&ctl).await, 0);

    // The fleet's registry, in a fleet database of its own, with the stack's orders database.
    let mut dbs = crate::fleet::Databases::default();
    let fleet = format!(
        "--fleet-database-url={}",
        dbs.create("relay_ctl_fleet").await
    );
    let orders_db = stack.names.orders_db.clone();
    let add = [
        fleet.as_str(),
        "fleet",
        "add",
        "--name",
        "orders-0",
        "--source-id",
        "0",
        "--url",
        &orders_db,
        "--exchange",
        "orders.events",
    ];
    real.record("fleet add", change(&ctl, &add).await, 0);
    real.record(
        "fleet list",
        json(&ctl, &[&fleet, "fleet", "list"]).await,
        0,
    );
    let drain = [fleet.as_str(), "fleet", "drain", "orders-0"];
    real.record("fleet drain", change(&ctl, &drain).await, 0);
    let remove = [fleet.as_str(), "fleet", "remove", "orders-0", "--force"];
    real.record("fleet remove", change(&ctl, &remove).await, 0);
    dbs.drop_all().await;

    if let Some(dir) = std::env::var_os("OUTBOXCTL_JSON_DUMP") {
        for (name, v) in &real.0 {
            let path = std::path::Path::new(&dir).join(format!("{}.json", name.replace(' ', "_")));
            let text = serde_json::to_string_pretty(v).expect("json");
            std::fs::write(&path, text).expect("dump");
        }
    }

    // The document's examples against the real documents, both ways.
    let documented = examples(DOC);
    let mut failures = Vec::new();
    let mut seen = Vec::new();
    for (name, example) in &documented {
        assert!(!seen.contains(name), "{name:?} is documented twice");
        seen.push(name.clone());
        let Some(output) = real.0.get(name) else {
            failures.push(format!("{name:?}: documented, but no such command is run"));
            continue;
        };
        for diff in differences(example, output) {
            failures.push(format!("{name}: {diff}"));
        }
    }
    for name in real.0.keys() {
        if !seen.contains(name) {
            failures.push(format!("{name:?}: run, but not documented"));
        }
    }
    for name in commands() {
        if !seen.contains(&name) {
            failures.push(format!(
                "`outboxctl {name}` (from --help) has no example in docs/OUTBOXCTL_JSON.md"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "docs/OUTBOXCTL_JSON.md differs from the real output:\n  {}\n(real output: \
         OUTBOXCTL_JSON_DUMP=<dir> writes it)",
        failures.join("\n  ")
    );

    stack.cleanup().await;
}

/// `outboxctl --json audit --watch`, stopped by SIGTERM once its metrics answer.
async fn watch_until_stopped(ctl: &Ctl) -> Run {
    let addr = outbox_testkit::free_local_addr().expect("a free port");
    let child = tokio::process::Command::new(env!("CARGO_BIN_EXE_outboxctl"))
        .env("OUTBOXCTL_ORDERS_DB", &ctl.orders_db)
        .env("OUTBOXCTL_MAIL_DB", &ctl.mail_db)
        .args(["--json", "audit", "--watch", "--interval", "200ms"])
        .arg(format!("--metrics-addr={addr}"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("outboxctl audit --watch starts");
    wait_until("the watching audit's metrics", || async {
        outbox_testkit::scrape(addr).await.is_ok()
    })
    .await;
    let pid = child.id().expect("running").to_string();
    let killed = tokio::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .await
        .expect("kill");
    assert!(killed.success());
    let out = tokio::time::timeout(Duration::from_secs(10), child.wait_with_output())
        .await
        .expect("it stops on SIGTERM")
        .expect("its output");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}
