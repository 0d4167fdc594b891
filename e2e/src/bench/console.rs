//! Section 9, the console at scale: with `--console-orders` orders (1,000,000 by default), a
//! tenth of them dead-lettered and a hundredth held, each page of `outbox-console` (the binary,
//! its live sampler and audit running as in production) timed by the console itself
//! (`Server-Timing`), next to the time of the reads that page makes (the same `outbox-ops`
//! functions, run here on their own). The target: every page within 100 ms of server time.

use std::time::{Duration, Instant};

use outbox_ops::{lists, replay, trace};
use serde::Serialize;
use sqlx::PgPool;
use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use crate::{
    load::progress,
    stack::{Stack, free_addr},
};

/// Ids far above the ones the load uses (and the audit section's).
const FIRST_ID: i64 = 2_000_000_000;
/// Quarantined rows.
const QUARANTINED: i64 = 1_000;
/// Times each page is fetched.
const ROUNDS: usize = 7;
const TOKEN: &str = "bench-console-operator-0123456789";

#[derive(Debug, Serialize)]
pub struct ConsoleCost {
    pub orders: i64,
    pub dead_letters: i64,
    pub held_chains: i64,
    pub quarantined: i64,
    pub pages: Vec<PageCost>,
}

/// One page: the console's time to answer it and its reads' time, ms, one of each per round.
#[derive(Debug, Serialize)]
pub struct PageCost {
    pub page: String,
    pub server_ms: Vec<f64>,
    pub queries_ms: Vec<f64>,
}

/// Fills the stack's databases, runs the console against them, times every page, cleans up.
pub(super) async fn console_cost(stack: &Stack, orders_n: i64) -> anyhow::Result<ConsoleCost> {
    let dead = orders_n / 10;
    let held = orders_n / 100;
    progress(format!(
        "9. the console at {orders_n} orders, {dead} dead letters, {held} held chains"
    ));
    let orders = outbox_kit::db::connect(&stack.orders_db_url, 4).await?;
    let mail = outbox_kit::db::connect(&stack.mail_db_url, 4).await?;
    fill(&orders, &mail, orders_n, dead, held).await?;
    let console = ConsoleProcess::start(stack).await?;
    let cookie = console.sign_in().await?;

    let mid = FIRST_ID + dead / 2;
    let dead_mid: i64 =
        sqlx::query_scalar("select id from dead_letters order by id offset $1 limit 1")
            .bind(dead / 2)
            .fetch_one(&mail)
            .await?;
    let held_order = FIRST_ID + dead + held / 2;
    let dead_order = FIRST_ID + 7;
    let none = lists::Filter::default();
    let by_reason = lists::Filter {
        reason: Some("untrusted".into()),
        ..lists::Filter::default()
    };
    let pages: Vec<(String, Query)> = vec![
        ("/".into(), Query::Overview),
        ("/quarantine".into(), Query::Quarantine(None)),
        (
            format!("/quarantine?after={}", FIRST_ID + QUARANTINED / 2),
            Query::Quarantine(Some(FIRST_ID + QUARANTINED / 2)),
        ),
        ("/held".into(), Query::Held(None)),
        (
            format!("/held?after=0:{held_order}"),
            Query::Held(Some((0, held_order))),
        ),
        ("/dead-letters".into(), Query::Dead(none.clone(), None)),
        (
            format!("/dead-letters?after={dead_mid}"),
            Query::Dead(none.clone(), Some(dead_mid)),
        ),
        (
            "/dead-letters?reason=untrusted".into(),
            Query::Dead(by_reason, None),
        ),
        (
            format!("/where?order={held_order}"),
            Query::Trace(held_order),
        ),
        (format!("/where?order={mid}"), Query::Trace(mid)),
        (
            format!("/replay?order={dead_order}"),
            Query::DryRun(dead_order),
        ),
        ("/audit".into(), Query::None),
    ];
    let mut out = Vec::new();
    for (path, query) in pages {
        let mut cost = PageCost {
            page: path.clone(),
            server_ms: Vec::new(),
            queries_ms: Vec::new(),
        };
        for _ in 0..ROUNDS {
            cost.server_ms.push(console.page_ms(&path, &cookie).await?);
            let started = Instant::now();
            query.run(&orders, &mail).await?;
            cost.queries_ms
                .push(started.elapsed().as_secs_f64() * 1000.0);
        }
        out.push(cost);
    }
    drop(console);
    clean(&orders, &mail).await?;
    Ok(ConsoleCost {
        orders: orders_n,
        dead_letters: dead,
        held_chains: held,
        quarantined: QUARANTINED,
        pages: out,
    })
}

/// The reads of a page, as the console makes them.
enum Query {
    Overview,
    Quarantine(Option<i64>),
    Held(Option<(i32, i64)>),
    Dead(lists::Filter, Option<i64>),
    Trace(i64),
    DryRun(i64),
    /// The page reads the last audit pass from memory.
    None,
}

impl Query {
    async fn run(&self, orders: &PgPool, mail: &PgPool) -> anyhow::Result<()> {
        let none = lists::Filter::default();
        match self {
            Query::Overview => {
                lists::quarantined_count(orders).await?;
                lists::held_count(mail).await?;
                lists::dead_letter_count(mail).await?;
            }
            Query::Quarantine(after) => {
                lists::quarantined(orders, &none, *after, 50).await?;
            }
            Query::Held(after) => {
                lists::held(mail, &none, *after, 50).await?;
            }
            Query::Dead(filter, after) => {
                lists::dead_letters(mail, filter, *after, 50).await?;
            }
            Query::Trace(order) => {
                trace::trace(orders, mail, 0, *order).await?;
            }
            Query::DryRun(order) => {
                replay::dry_run(orders, mail, 0, *order, None, None).await?;
            }
            Query::None => {}
        }
        Ok(())
    }
}

/// The console binary on the stack's databases and services; killed on drop.
struct ConsoleProcess {
    child: std::process::Child,
    addr: std::net::SocketAddr,
    tokens: std::path::PathBuf,
}

impl ConsoleProcess {
    async fn start(stack: &Stack) -> anyhow::Result<Self> {
        let tokens = stack.log_dir.join("bench-console-tokens");
        std::fs::write(&tokens, format!("bench {TOKEN}\n"))?;
        let addr = free_addr()?;
        let log = std::fs::File::create(stack.log_dir.join("outbox-console.log"))?;
        let child = stack
            .console_command(addr, &tokens)?
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()?;
        let me = Self {
            child,
            addr,
            tokens,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(addr).await.is_err() {
            anyhow::ensure!(Instant::now() < deadline, "outbox-console did not start");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(me)
    }

    /// One request; the status line and the headers.
    async fn request(&self, head: &str, body: &str) -> anyhow::Result<String> {
        let mut s = TcpStream::connect(self.addr).await?;
        let addr = self.addr;
        s.write_all(
            format!(
                "{head}\r\nHost: {addr}\r\nOrigin: http://{addr}\r\nConnection: close\r\n\
                 Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        )
        .await?;
        let mut answer = Vec::new();
        s.read_to_end(&mut answer).await?;
        let text = String::from_utf8_lossy(&answer);
        Ok(text.split("\r\n\r\n").next().unwrap_or_default().to_owned())
    }

    async fn sign_in(&self) -> anyhow::Result<String> {
        let head = self
            .request("POST /sign-in HTTP/1.1", &format!("token={TOKEN}"))
            .await?;
        header(&head, "set-cookie")
            .and_then(|c| c.split(';').next().map(str::to_owned))
            .ok_or_else(|| anyhow::anyhow!("sign-in refused: {head}"))
    }

    /// The console's own time for `path` (its `Server-Timing`), ms.
    async fn page_ms(&self, path: &str, cookie: &str) -> anyhow::Result<f64> {
        let head = self
            .request(&format!("GET {path} HTTP/1.1\r\nCookie: {cookie}"), "")
            .await?;
        anyhow::ensure!(head.starts_with("HTTP/1.1 200"), "{path}: {head}");
        header(&head, "server-timing")
            .and_then(|v| v.strip_prefix("app;dur=").and_then(|d| d.parse().ok()))
            .ok_or_else(|| anyhow::anyhow!("{path}: no Server-Timing"))
    }
}

fn header(head: &str, name: &str) -> Option<String> {
    head.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
    })
}

impl Drop for ConsoleProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.tokens);
    }
}

/// `n` orders with one published event each. Orders `1..=dead` (from FIRST_ID) were
/// dead-lettered by mail-svc and never applied; the next `held` orders have a later event held
/// behind their first, never applied; the rest are applied. [`QUARANTINED`] more rows sit in
/// the quarantine.
async fn fill(orders: &PgPool, mail: &PgPool, n: i64, dead: i64, held: i64) -> anyhow::Result<()> {
    sqlx::query(
        "insert into outbox_heads (aggregate_type, aggregate_id, last_seq, appended_at)
         select 'order', $1 + g, $1 + g, now() from generate_series(1, $2) g",
    )
    .bind(FIRST_ID)
    .bind(n)
    .execute(orders)
    .await?;
    sqlx::query(
        "insert into outbox_published
           (seq, aggregate_type, aggregate_id, event_type, routing_key, content_type, payload,
            created_at, published_at)
         select $1 + g, 'order', $1 + g, 'OrderCreated', 'order.created',
                'application/x-protobuf', '', t.at, t.at
           from generate_series(1, $2) g,
                (select greatest(now() - interval '10 minutes',
                                 date_trunc('day', now() at time zone 'utc') at time zone 'utc') at) t",
    )
    .bind(FIRST_ID)
    .bind(n)
    .execute(orders)
    .await?;
    sqlx::query(
        "insert into outbox_quarantine
           (seq, aggregate_type, aggregate_id, event_type, payload, created_at, reason)
         select $1 + $2 + g, 'order', $1 + g, 'OrderCreatd', '', now(), 'unknown event type'
           from generate_series(1, $3) g",
    )
    .bind(FIRST_ID)
    .bind(n * 10)
    .bind(QUARANTINED)
    .execute(orders)
    .await?;
    sqlx::query(
        "insert into dead_letters (shard, aggregate_type, order_id, seq, reason, at)
         select 0, 'order', $1 + g, $1 + g, 'untrusted publisher', now() - interval '5 minutes'
           from generate_series(1, $2) g",
    )
    .bind(FIRST_ID)
    .bind(dead)
    .execute(mail)
    .await?;
    sqlx::query(
        "insert into held_events (shard, aggregate_type, order_id, seq, prev_seq, event, held_at)
         select 0, 'order', $1 + g, $1 + g + $4, $1 + g, '', now() - interval '5 minutes'
           from generate_series($2 + 1, $2 + $3) g",
    )
    .bind(FIRST_ID)
    .bind(dead)
    .bind(held)
    .bind(n * 20)
    .execute(mail)
    .await?;
    sqlx::query(
        "insert into order_progress (shard, aggregate_type, order_id, last_seq)
         select 0, 'order', $1 + g, $1 + g from generate_series($2 + 1, $3) g",
    )
    .bind(FIRST_ID)
    .bind(dead + held)
    .bind(n)
    .execute(mail)
    .await?;
    for (pool, tables) in [
        (orders, "outbox_heads, outbox_published, outbox_quarantine"),
        (mail, "order_progress, dead_letters, held_events"),
    ] {
        sqlx::query(sqlx::AssertSqlSafe(format!("analyze {tables}")))
            .execute(pool)
            .await?;
    }
    Ok(())
}

/// Removes what [`fill`] wrote (best effort).
async fn clean(orders: &PgPool, mail: &PgPool) -> anyhow::Result<()> {
    for (pool, sql) in [
        (orders, "delete from outbox_heads where aggregate_id > $1"),
        (
            orders,
            "delete from outbox_published where aggregate_id > $1",
        ),
        (
            orders,
            "delete from outbox_quarantine where aggregate_id > $1",
        ),
        (mail, "delete from dead_letters where order_id > $1"),
        (mail, "delete from held_events where order_id > $1"),
        (mail, "delete from order_progress where order_id > $1"),
    ] {
        sqlx::query(sql).bind(FIRST_ID).execute(pool).await?;
    }
    Ok(())
}
