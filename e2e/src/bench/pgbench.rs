//! Section 1's independent ceiling: `pgbench` running orders-svc's transaction for one new
//! order, at the same concurrency and duration, on a fresh database migrated by orders-svc's
//! `MIGRATOR`.
//!
//! The script is not a second copy of orders-svc's SQL: the bench runs one creation through
//! `batch::apply_one` on a connection of its own and reads the statements back from
//! `pg_prepared_statements` (sqlx prepares each one, verbatim, in the order it first runs them),
//! and the constants (event type, routing key, payload, trace, status, email) from the rows that
//! creation wrote. What this module states itself is only which value goes into each parameter
//! ([`PARAMS`]); a change to orders-svc's statements that moves a parameter fails
//! ([`script`] checks every parameter's type), and one that adds or removes a statement too.
//!
//! Each `$n` becomes a one-element array of a pgbench variable or a literal, e.g. `$1::bigint[]`
//! becomes `array[:id::bigint]::bigint[]`; pgbench runs with `-M prepared`, as sqlx prepares its
//! statements. The relay's `NOTIFY` is not in the script: orders-svc sends it after commit,
//! outside the transaction, at most once per 2 ms for all writers together (`wake_relay`).

use std::{
    path::{Path, PathBuf},
    process::Stdio,
    time::Duration,
};

use anyhow::Context;
use orders_svc::{batch as orders_batch, db as orders_db, order::UpsertCommand, shard::Shard};
use outbox_proto::orders::v1::OrderStatus;
use sqlx::PgPool;
use tokio::io::AsyncReadExt;

use crate::{
    cpu::{CpuMeter, CpuUse, waited_children_secs},
    load::orders::EMAIL,
    stack::db_name,
    stats::Summary,
};

/// What the bench says when pgbench is not installed.
pub const MISSING: &str = "pgbench not found (on PATH or in /usr/lib/postgresql/*/bin): \
     `apt-get install postgresql-contrib` (Debian) installs it; the pgbench line is skipped";

/// pgbench: on `PATH` (Debian's wrapper), else the newest `/usr/lib/postgresql/<v>/bin/pgbench`.
pub fn find() -> Option<PathBuf> {
    let works = |p: &Path| {
        std::process::Command::new(p)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let on_path = PathBuf::from("pgbench");
    if works(&on_path) {
        return Some(on_path);
    }
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| Some(e.ok()?.path().join("bin/pgbench")))
        .filter(|p| p.exists())
        .collect();
    versions.sort_by_key(|p| {
        p.components()
            .nth(4)
            .and_then(|c| c.as_os_str().to_str()?.parse::<u32>().ok())
    });
    versions.pop().filter(|p| works(p))
}

/// One parameter of a captured statement: its type as `pg_prepared_statements` names it, and
/// the one element of the array bound to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    /// The new order's id (`\set id random(...)`).
    Id,
    /// A column of the outbox row the creation wrote.
    Event(&'static str),
    /// A column of the order row the creation wrote.
    Order(&'static str),
    /// The seq and the time the outbox insert returned (`\gset ins_`).
    Returned(&'static str),
    Null,
    True,
}

/// orders-svc's statements for one creation, in order, each with its parameters: the order locks
/// (`db::lock_orders`), the outbox crate's head lock and insert (`Outbox::append_all`), then the
/// round's order write (`db::write_round`).
pub const PARAMS: [&[(&str, Param)]; 4] = [
    &[("bigint[]", Param::Id)],
    &[
        ("text[]", Param::Event("aggregate_type")),
        ("bigint[]", Param::Id),
    ],
    &[
        ("text[]", Param::Event("aggregate_type")),
        ("bigint[]", Param::Id),
        ("text[]", Param::Event("event_type")),
        ("bigint[]", Param::Null),
        ("text[]", Param::Event("routing_key")),
        ("text[]", Param::Event("content_type")),
        ("text[]", Param::Event("headers")),
        ("bytea[]", Param::Event("payload")),
        ("text[]", Param::Event("traceparent")),
    ],
    &[
        ("bigint[]", Param::Id),
        ("bigint[]", Param::Returned("seq")),
        ("timestamp with time zone[]", Param::Returned("created_at")),
        ("text[]", Param::Order("status")),
        ("text[]", Param::Order("customer_email")),
        ("boolean[]", Param::True),
    ],
];

/// The statement whose returned seq and time the next one binds.
const INSERT: usize = 2;

/// A statement as orders-svc prepared it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    pub sql: String,
    pub param_types: Vec<String>,
}

/// The rows the captured creation wrote: outbox and order columns as text (`None` for NULL; the
/// payload as `\x…` hex).
pub type Written = std::collections::BTreeMap<String, Option<String>>;

/// The order id the capture creates; pgbench's ids are above it.
const CAPTURED_ID: i64 = 1;

/// Runs one creation through `batch::apply_one` on `url`'s (migrated, empty) database and
/// returns its statements and the rows it wrote.
pub async fn capture(
    url: &str,
    trace: &outbox::trace::TraceHeaders,
) -> anyhow::Result<(Vec<Captured>, Written)> {
    // A pool of one fresh connection: its prepared statements are the creation's only.
    let pool = outbox_kit::db::connect(url, 1).await?;
    let cmd = UpsertCommand::parse(CAPTURED_ID, OrderStatus::Pending as i32, EMAIL)?;
    orders_batch::apply_one(&pool, Shard::ONLY, &cmd, Some(trace)).await?;
    let statements: Vec<(String, Vec<String>)> = sqlx::query_as(
        "select statement, parameter_types::text[] from pg_prepared_statements
          where from_sql = false order by prepare_time",
    )
    // Unnamed: not among the statements it lists.
    .persistent(false)
    .fetch_all(&pool)
    .await?;
    let written = written(&pool).await?;
    pool.close().await;
    let captured = statements
        .into_iter()
        .map(|(sql, param_types)| Captured { sql, param_types })
        .collect();
    Ok((captured, written))
}

async fn written(pool: &PgPool) -> anyhow::Result<Written> {
    let event: Vec<(String, Option<String>)> = sqlx::query_as(
        "select key, value from outbox o,
                jsonb_each_text(jsonb_build_object(
                    'aggregate_type', o.aggregate_type, 'event_type', o.event_type,
                    'routing_key', o.routing_key, 'content_type', o.content_type,
                    'headers', o.headers::text, 'payload', '\\x' || encode(o.payload, 'hex'),
                    'traceparent', o.traceparent))
          where o.aggregate_id = $1",
    )
    .bind(CAPTURED_ID)
    .persistent(false)
    .fetch_all(pool)
    .await
    .context("reading the captured creation's outbox row")?;
    let order: Vec<(String, Option<String>)> = sqlx::query_as(
        "select key, value from orders o,
                jsonb_each_text(jsonb_build_object('status', o.status,
                                                   'customer_email', o.customer_email))
          where o.id = $1",
    )
    .bind(CAPTURED_ID)
    .persistent(false)
    .fetch_all(pool)
    .await
    .context("reading the captured creation's order row")?;
    anyhow::ensure!(
        event.len() == 7 && order.len() == 2,
        "the captured creation wrote no outbox row or no order"
    );
    Ok(event
        .into_iter()
        .map(|(k, v)| (format!("event.{k}"), v))
        .chain(order.into_iter().map(|(k, v)| (format!("order.{k}"), v)))
        .collect())
}

/// `'it''s'`: a SQL string literal.
fn literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// The pgbench script for orders-svc's captured creation: a new order per transaction.
pub fn script(captured: &[Captured], written: &Written) -> anyhow::Result<String> {
    let shape = |c: &[Captured]| {
        c.iter()
            .map(|s| format!("{:?}: {}", s.param_types, s.sql))
            .collect::<Vec<_>>()
            .join("\n")
    };
    anyhow::ensure!(
        captured.len() == PARAMS.len(),
        "orders-svc ran {} statements for a creation, the pgbench script knows {} \
         (e2e/src/bench/pgbench.rs, PARAMS):\n{}",
        captured.len(),
        PARAMS.len(),
        shape(captured)
    );
    let mut out = String::from(
        "-- orders-svc's transaction for one new order (generated by the bench, e2e/src/bench/pgbench.rs)\n\
         \\set id random(1000, 1000000000000000)\nbegin;\n",
    );
    for (i, (statement, params)) in captured.iter().zip(PARAMS).enumerate() {
        let types: Vec<&str> = params.iter().map(|(t, _)| *t).collect();
        anyhow::ensure!(
            statement.param_types == types,
            "orders-svc's statement {} takes {:?}, the pgbench script binds {types:?} \
             (e2e/src/bench/pgbench.rs, PARAMS):\n{}",
            i + 1,
            statement.param_types,
            statement.sql
        );
        let element = |(ty, param): &(&str, Param)| -> anyhow::Result<String> {
            let elem = ty.trim_end_matches("[]");
            let value = match param {
                Param::Id => ":id".to_owned(),
                Param::Returned(column) => format!(":ins_{column}"),
                Param::Null => "null".to_owned(),
                Param::True => "true".to_owned(),
                Param::Event(c) | Param::Order(c) => {
                    let table = if matches!(param, Param::Event(_)) {
                        "event"
                    } else {
                        "order"
                    };
                    match written
                        .get(&format!("{table}.{c}"))
                        .with_context(|| format!("no {table} column {c} captured"))?
                    {
                        Some(v) => literal(v),
                        None => "null".to_owned(),
                    }
                }
            };
            Ok(format!("array[{value}::{elem}]"))
        };
        let values: Vec<String> = params.iter().map(element).collect::<anyhow::Result<_>>()?;
        let sql = substitute(&statement.sql, &values)?;
        if i == INSERT {
            out.push_str(&format!("{sql}\n\\gset ins_\n"));
        } else {
            out.push_str(&format!("{sql};\n"));
        }
    }
    out.push_str("commit;\n");
    let unknown = variables(&out)
        .into_iter()
        .filter(|v| !["id", "ins_seq", "ins_created_at"].contains(&v.as_str()))
        .collect::<Vec<_>>();
    anyhow::ensure!(
        unknown.is_empty(),
        "the script names variables it never sets: {unknown:?}"
    );
    Ok(out)
}

/// `sql` with each `$n` replaced by `values[n - 1]`.
fn substitute(sql: &str, values: &[String]) -> anyhow::Result<String> {
    let mut out = String::with_capacity(sql.len());
    let mut rest = sql;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let digits: String = rest[at + 1..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let n: usize = digits
            .parse()
            .with_context(|| format!("a `$` that is no parameter in {sql}"))?;
        let value = values
            .get(n.wrapping_sub(1))
            .with_context(|| format!("parameter ${n} unbound in {sql}"))?;
        out.push_str(value);
        rest = &rest[at + 1 + digits.len()..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The `:name` variables pgbench's `-M prepared` would see in a script's SQL lines (`::type`
/// casts are not variables).
fn variables(script: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in script.lines().filter(|l| !l.starts_with('\\')) {
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            if chars[i] == ':' {
                let mut j = i + 1;
                while j < chars.len() && chars[j] == ':' {
                    j += 1;
                }
                if j == i + 1 {
                    let name: String = chars[j..]
                        .iter()
                        .take_while(|c| c.is_ascii_alphanumeric() || **c == '_')
                        .collect();
                    if !name.is_empty() {
                        found.push(name);
                    }
                }
                i = j;
            } else {
                i += 1;
            }
        }
    }
    found
}

/// pgbench running the captured creation with `c` clients for `secs` (whole seconds, at least
/// two: pgbench's `-T`; on a busy machine one second can end before any client's first
/// transaction), on a fresh database migrated by orders-svc's `MIGRATOR`.
pub(super) async fn pgbench_ceiling(
    pgbench: &Path,
    c: usize,
    secs: f64,
) -> anyhow::Result<(Summary, CpuUse)> {
    let url = outbox_testkit::fresh_database_url("bench_test_pgbench");
    // Dropped on every way out, a failed run's too.
    let made = outbox_testkit::Made::new();
    made.database(&url);
    let migrate = outbox_kit::db::connect(&url, 1).await?;
    orders_db::MIGRATOR.run(&migrate).await?;
    migrate.close().await;
    let trace = outbox::trace::TraceHeaders::parse(super::write::TRACEPARENT, None)
        .context("the bench's traceparent")?;
    let (captured, written) = capture(&url, &trace).await?;
    let script = script(&captured, &written)?;
    let dir = std::env::temp_dir().join(outbox_testkit::unique("bench-pgbench"));
    std::fs::create_dir_all(&dir)?;
    let script_path = dir.join("upsert.sql");
    std::fs::write(&script_path, &script)?;

    let parsed = url::Url::parse(&url)?;
    let threads = c.min(std::thread::available_parallelism().map_or(1, |n| n.get()));
    let mut cmd = tokio::process::Command::new(pgbench);
    cmd.args(["-n", "-M", "prepared", "-l"])
        .arg(format!("--log-prefix={}", dir.join("log").display()))
        .arg(format!("--client={c}"))
        .arg(format!("--jobs={threads}"))
        .arg(format!("--time={}", secs.round().max(2.0) as u64))
        .arg(format!("--file={}", script_path.display()))
        .arg(format!(
            "--host={}",
            parsed.host_str().unwrap_or("127.0.0.1")
        ))
        .arg(format!("--port={}", parsed.port().unwrap_or(5432)))
        .arg(format!("--username={}", parsed.username()))
        .arg(db_name(&url))
        .stdin(Stdio::null())
        .kill_on_drop(true);
    if let Some(password) = parsed.password() {
        cmd.env("PGPASSWORD", password);
    }
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let meter = CpuMeter::new(Vec::new(), vec![db_name(&url)]);
    let (before, children_before) = (meter.sample(), waited_children_secs());
    let mut child = cmd.spawn().context("running pgbench")?;
    // pgbench's backends exit with it: sampled every 50 ms, they count up to the last sample.
    let mut seen = before.clone();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        seen = seen.then(meter.sample());
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let mut cpu = seen.then(meter.sample()).since(&before);
    // pgbench has exited and been waited for: its CPU is among this process's children's.
    cpu.0.insert(
        "pgbench".into(),
        (waited_children_secs() - children_before).max(0.0),
    );
    let (mut stdout, mut stderr) = (String::new(), String::new());
    if let Some(mut out) = child.stdout.take() {
        out.read_to_string(&mut stdout).await?;
    }
    if let Some(mut err) = child.stderr.take() {
        err.read_to_string(&mut stderr).await?;
    }
    anyhow::ensure!(
        status.success(),
        "pgbench failed ({status}): {stderr}\n{stdout}\nscript:\n{script}"
    );
    let latencies = read_logs(&dir)?;
    let summary = summary(&stdout, latencies)?;
    let _ = std::fs::remove_dir_all(&dir);
    drop(made);
    Ok((summary, cpu))
}

/// Every transaction's latency from pgbench's `-l` logs (`client_id transaction_no time_us …`).
fn read_logs(dir: &Path) -> anyhow::Result<Vec<Duration>> {
    let mut latencies = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let is_log = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("log."));
        if !is_log {
            continue;
        }
        for line in std::fs::read_to_string(&path)?.lines() {
            if let Some(us) = line.split_whitespace().nth(2).and_then(|t| t.parse().ok()) {
                latencies.push(Duration::from_micros(us));
            }
        }
    }
    Ok(latencies)
}

/// The run's summary from pgbench's report: transactions processed and tps without the initial
/// connection time.
fn summary(stdout: &str, latencies: Vec<Duration>) -> anyhow::Result<Summary> {
    let after = |prefix: &str| {
        stdout
            .lines()
            .find_map(|l| l.trim().strip_prefix(prefix))
            .and_then(|rest| rest.split_whitespace().next())
    };
    let ops: u64 = after("number of transactions actually processed:")
        .and_then(|v| v.split('/').next()?.parse().ok())
        .with_context(|| format!("no transaction count in pgbench's report:\n{stdout}"))?;
    let failed: u64 = after("number of failed transactions:")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    anyhow::ensure!(
        failed == 0,
        "{failed} pgbench transactions failed:\n{stdout}"
    );
    let tps: f64 = after("tps =")
        .and_then(|v| v.parse().ok())
        .with_context(|| format!("no tps in pgbench's report:\n{stdout}"))?;
    anyhow::ensure!(
        ops > 0 && tps > 0.0,
        "pgbench ran no transaction:\n{stdout}"
    );
    Ok(Summary::new(
        ops,
        Duration::from_secs_f64(ops as f64 / tps),
        latencies,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_become_one_element_arrays_and_casts_are_no_variables() {
        let sql = "select * from unnest($1::bigint[], $2::text[], $10::text[])";
        let values: Vec<String> = (1..=10).map(|i| format!("v{i}")).collect();
        assert_eq!(
            substitute(sql, &values).unwrap(),
            "select * from unnest(v1::bigint[], v2::text[], v10::text[])"
        );
        assert!(substitute("select $3", &values[..2]).is_err());
        assert_eq!(
            variables(
                "\\set id random(1, 2)\nselect array[:id::bigint]::bigint[], ':x'\n\\gset ins_\n"
            ),
            ["id", "x"]
        );
    }

    #[test]
    fn pgbench_reports_are_read() {
        let report = "transaction type: upsert.sql\nnumber of clients: 4\n\
            number of transactions actually processed: 1234\n\
            number of failed transactions: 0 (0.000%)\nlatency average = 3.2 ms\n\
            initial connection time = 5.1 ms\ntps = 617.000000 (without initial connection time)\n";
        let s = summary(report, vec![Duration::from_millis(3); 10]).unwrap();
        assert_eq!((s.ops, s.per_sec.round()), (1234, 617.0));
        assert_eq!(s.p50_ms, 3.0);
        let failed = report.replace("failed transactions: 0", "failed transactions: 3");
        assert!(summary(&failed, Vec::new()).is_err());
    }

    /// orders-svc's statements for a creation, read back from PostgreSQL, fit [`PARAMS`]: this
    /// fails when orders-svc's transaction gains, loses or reorders a statement or a parameter
    /// without the script following.
    #[tokio::test]
    async fn the_script_is_orders_svc_creation() {
        let url = outbox_testkit::fresh_database_url("bench_test_pgbench_script");
        let made = outbox_testkit::Made::new();
        made.database(&url);
        let pool = outbox_kit::db::connect(&url, 1).await.unwrap();
        orders_db::MIGRATOR.run(&pool).await.unwrap();
        pool.close().await;
        let trace =
            outbox::trace::TraceHeaders::parse(super::super::write::TRACEPARENT, None).unwrap();
        let (captured, written) = capture(&url, &trace).await.unwrap();
        drop(made);
        let script = script(&captured, &written).unwrap();
        // Every captured statement is in the script, with its parameters replaced.
        assert!(script.contains("for update"), "{script}");
        assert!(
            script.contains("on conflict (aggregate_type, aggregate_id)"),
            "{script}"
        );
        assert!(
            script.contains("array[:ins_seq::bigint]::bigint[]"),
            "{script}"
        );
        assert!(!script.contains('$'), "{script}");
        assert!(
            script.contains(&format!("array['{EMAIL}'::text]")),
            "{script}"
        );
        assert!(script.contains("array['pending'::text]"), "{script}");
        assert_eq!(script.matches("\\gset ins_").count(), 1);
        println!("{script}");

        // A statement more or a parameter moved: the script refuses.
        let mut more = captured.clone();
        more.push(captured[0].clone());
        assert!(script_err(&more, &written).contains("statements for a creation"));
        let mut moved = captured.clone();
        moved[3].param_types.swap(0, 3);
        assert!(script_err(&moved, &written).contains("statement 4 takes"));
    }

    fn script_err(c: &[Captured], w: &Written) -> String {
        script(c, w).unwrap_err().to_string()
    }
}
