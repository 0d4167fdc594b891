//! The operator console in a real browser: Debian's chromium, driven over WebDriver by
//! chromedriver (both installed by deploy/ensure-test-tools.sh), against the real binaries.
//! Two stories, told through the UI only (the test reads the databases to check the outcome,
//! never to act):
//!
//! 1. Under traffic, mail-svc's queue is purged by hand. The overview shows orders lagging;
//!    the operator opens one, the timeline says "published, never applied", the dry run shows
//!    what will be applied, the replay runs; every mail arrives exactly once and the overview
//!    goes back to zero.
//! 2. A mail-svc with a wrong TRUSTED_PUBLISHERS dead-letters a burst. After the fix, "redrive
//!    all" through the console mails each event once, in chain order.
//!
//! The browser signs in, fills every field through its label and submits with the keyboard
//! (Tab, Enter). With `CONSOLE_SCREENSHOT=<path>` it saves the overview as it shows the lagging
//! orders (the README's screenshot, `docs/console-overview.png`).

use std::{
    net::SocketAddr,
    process::Stdio,
    time::{Duration, Instant},
};

use e2e::stack::{Stack, StackConfig, free_addr};
use fantoccini::{Client, ClientBuilder, Locator, elements::Element};
use lapin::{Connection, ConnectionProperties, options::QueuePurgeOptions};
use outbox_proto::orders::v1::OrderStatus;
use serde_json::json;
use sqlx::PgPool;
use tokio::process::{Child, Command};

pub(crate) const ADMIN_TOKEN: &str = "e2e-console-admin-token-0123456789";
pub(crate) const OPERATOR: &str = "e2e-console-operator-0123456789";
/// WebDriver's keys (the spec's code points).
const TAB: &str = "\u{E004}";
pub(crate) const ENTER: &str = "\u{E007}";

/// A child that is killed when dropped, with its log path for failure messages.
pub(crate) struct Proc {
    child: Child,
}

impl Proc {
    pub(crate) async fn stop(mut self) {
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }
}

/// Waits until `addr` accepts connections (the process bound its port).
async fn listening(addr: SocketAddr, what: &str, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while tokio::net::TcpStream::connect(addr).await.is_err() {
        assert!(
            matches!(child.try_wait(), Ok(None)),
            "{what} exited during start-up"
        );
        assert!(Instant::now() < deadline, "{what} did not listen on {addr}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The console binary against `stack`.
pub(crate) async fn start_console(stack: &Stack, dir: &std::path::Path) -> (Proc, String) {
    let tokens = dir.join("console-operators");
    std::fs::write(&tokens, format!("olivia {OPERATOR}\n")).expect("token file");
    let addr = free_addr().expect("port");
    let log = std::fs::File::create(dir.join("outbox-console.log")).expect("log");
    let mut child = Command::from(stack.console_command(addr, &tokens).expect("the console"))
        .env(
            "CONSOLE_METRICS",
            format!(
                "{},{},{}",
                stack.orders.metrics_addr,
                stack.relays[0].metrics_addr,
                stack.mails[0].metrics_addr
            ),
        )
        .env("CONSOLE_ADMIN_TOKEN", ADMIN_TOKEN)
        .env("CONSOLE_REPLAY_QUEUE", &stack.queue)
        .env("CONSOLE_AUDIT_GRACE", "2s")
        .env("CONSOLE_REFRESH", "500ms")
        .env("CONSOLE_REDRIVE_RATE", "50")
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("log"))
        .stderr(log)
        .kill_on_drop(true)
        .spawn()
        .expect("outbox-console starts");
    listening(addr, "outbox-console", &mut child).await;
    (Proc { child }, format!("http://{addr}"))
}

/// Ends every chromium process of this test's profile directory when dropped, also after a
/// failed assertion (chromedriver killed first would leave its browser running). Only processes
/// whose binary is chromium and whose command line names the directory are signalled.
pub(crate) struct ChromiumGuard(std::path::PathBuf);

impl Drop for ChromiumGuard {
    fn drop(&mut self) {
        let Ok(procs) = std::fs::read_dir("/proc") else {
            return;
        };
        let dir = self.0.to_string_lossy().into_owned();
        for p in procs.flatten() {
            let Some(pid) = p.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
                continue;
            };
            let exe = std::fs::read_link(p.path().join("exe")).unwrap_or_default();
            let cmdline = std::fs::read(p.path().join("cmdline")).unwrap_or_default();
            if exe.to_string_lossy().starts_with("/usr/lib/chromium/")
                && String::from_utf8_lossy(&cmdline).contains(&dir)
            {
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// chromedriver, and a headless chromium session through it (its profile in `dir`).
pub(crate) async fn start_browser(dir: &std::path::Path) -> (Proc, Client, ChromiumGuard) {
    let profile = dir.join("chromium-profile");
    let guard = ChromiumGuard(profile.clone());
    let port = free_addr().expect("port").port();
    std::fs::create_dir_all(&profile).expect("profile dir");
    let mut child = Command::new("chromedriver")
        .arg(format!("--port={port}"))
        // chromedriver's and chromium's temporary files, removed with the guard's directory.
        .env("TMPDIR", &profile)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("chromedriver (deploy/ensure-test-tools.sh installs chromium-driver)");
    listening(
        SocketAddr::from(([127, 0, 0, 1], port)),
        "chromedriver",
        &mut child,
    )
    .await;
    let caps = json!({
        "goog:chromeOptions": {
            "binary": "/usr/bin/chromium",
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,1000", "--no-first-run",
                     format!("--user-data-dir={}", profile.display())],
        }
    });
    let serde_json::Value::Object(caps) = caps else {
        unreachable!()
    };
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    let client = ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .expect("a chromium session");
    (Proc { child }, client, guard)
}

/// The element `css` finds once the page that has it is loaded (30 s).
pub(crate) async fn el(b: &Client, css: &str) -> Element {
    b.wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("no {css} on the page: {e}"))
}

/// The field whose `<label>` says `label`, as a user finds it.
pub(crate) async fn field(b: &Client, label: &str) -> Element {
    let label = b
        .wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::XPath(&format!(
            "//label[normalize-space(.)={}]",
            xpath_literal(label)
        )))
        .await
        .unwrap_or_else(|e| panic!("no label {label:?}: {e}"));
    let id = label
        .attr("for")
        .await
        .expect("attr")
        .expect("the label names its field");
    b.find(Locator::Id(&id)).await.expect("the labelled field")
}

fn xpath_literal(s: &str) -> String {
    format!("'{s}'")
}

/// Polls `check` on the page until it holds (30 s).
pub(crate) async fn until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(45);
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Clicks what `css` finds; the live figures are replaced every refresh, so a click that found a
/// replaced element finds it again (for up to 10 s: a loaded machine swaps slowly).
async fn click(b: &Client, css: &str) {
    for _ in 0..100 {
        if let Ok(e) = b.find(Locator::Css(css)).await
            && e.click().await.is_ok()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("cannot click {css}");
}

/// The text of the live figure `name` on the overview.
pub(crate) async fn figure(b: &Client, name: &str) -> String {
    match b
        .find(Locator::Css(&format!("[data-figure='{name}']")))
        .await
    {
        Ok(e) => e.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    }
}

/// Types `reason` into the reason field, then Tab to the confirm button and Enter: the
/// keyboard's way through a form.
async fn confirm_with_keyboard(b: &Client, reason: &str) {
    let f = field(b, "Reason (kept in admin_actions)").await;
    f.send_keys(reason).await.expect("type the reason");
    f.send_keys(TAB).await.expect("tab");
    let focused = b.active_element().await.expect("focus");
    assert_eq!(
        focused.tag_name().await.expect("tag"),
        "button",
        "Tab leads from the reason to the confirm button"
    );
    focused.send_keys(ENTER).await.expect("enter");
}

/// Waits on a job's page until it is done; how many it handled.
async fn job_done(b: &Client) -> usize {
    until("the job page", || async {
        b.current_url()
            .await
            .is_ok_and(|u| u.path().starts_with("/jobs/"))
    })
    .await;
    until("the job done", || async {
        let state = match b.find(Locator::Css("[data-state]")).await {
            Ok(e) => e
                .attr("data-state")
                .await
                .ok()
                .flatten()
                .unwrap_or_default(),
            Err(_) => String::new(),
        };
        assert_ne!(state, "failed", "the job failed");
        state == "done"
    })
    .await;
    b.find(Locator::Css("[data-done]"))
        .await
        .expect("count")
        .attr("data-done")
        .await
        .expect("attr")
        .expect("data-done")
        .parse()
        .expect("a number")
}

async fn count(pool: &PgPool, sql: &'static str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.expect(sql)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_operator_replays_a_purged_queue_and_redrives_a_burst_through_the_console() {
    let started = Instant::now();
    let mut cfg = StackConfig::new("e2e_console");
    cfg.env.push(("ADMIN_TOKEN".into(), ADMIN_TOKEN.into()));
    cfg.mail_env
        .push(("TRUSTED_PUBLISHERS".into(), "guest".into()));
    let dir = cfg.log_dir.clone();
    let mut stack = Stack::start(cfg).await.expect("stack");
    let orders = PgPool::connect(&stack.orders_db_url)
        .await
        .expect("orders db");
    let mail = PgPool::connect(&stack.mail_db_url).await.expect("mail db");
    let (console, base) = start_console(&stack, &dir).await;
    let (driver, b, _chromium) = start_browser(&dir).await;

    // Sign in: the token typed into its labelled field, Enter submits.
    b.goto(&format!("{base}/")).await.expect("open the console");
    assert!(b.current_url().await.unwrap().path().ends_with("/sign-in"));
    let token = field(&b, "Token").await;
    token.send_keys(OPERATOR).await.expect("type");
    token.send_keys(ENTER).await.expect("enter");
    until("the overview", || async {
        b.find(Locator::Css("[data-live='figures']")).await.is_ok()
    })
    .await;

    // Story 1. Two orders are published while mail-svc is stopped, and their events purged from
    // its queue by hand.
    stack.mails[0].terminate(Duration::from_secs(10)).await;
    let lost = [
        (
            1_i64,
            stack.upsert(1, OrderStatus::Pending).await.expect("upsert"),
        ),
        (
            2,
            stack.upsert(2, OrderStatus::Pending).await.expect("upsert"),
        ),
    ];
    until("orders 1 and 2 published", || async {
        count(
            &orders,
            "select count(*) from outbox_published where aggregate_id in (1, 2)",
        )
        .await
            == 2
    })
    .await;
    let conn = Connection::connect(&stack.admin_amqp_url, ConnectionProperties::default())
        .await
        .expect("broker");
    let ch = conn.create_channel().await.expect("channel");
    ch.queue_purge(stack.queue.as_str().into(), QueuePurgeOptions::default())
        .await
        .expect("purge");
    stack.mails[0].start().await.expect("mail-svc again");
    // Traffic flows (orders 100..) while the operator works.
    let traffic = {
        let client = stack.orders_client().await.expect("client");
        tokio::spawn(async move {
            let mut seqs = Vec::new();
            for id in 100..130_i64 {
                let r = client
                    .clone()
                    .upsert(outbox_proto::orders::v1::UpsertOrderRequest {
                        id,
                        status: OrderStatus::Pending as i32,
                        customer_email: format!("customer{id}@example.com"),
                    })
                    .await
                    .expect("traffic");
                seqs.push((id, r.into_inner().event_seq.expect("seq")));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            seqs
        })
    };

    // The overview shows them lagging, not applied.
    until("two orders lagging, not applied", || async {
        figure(&b, "lagging-not_applied").await == "2"
    })
    .await;
    if let Ok(path) = std::env::var("CONSOLE_SCREENSHOT") {
        std::fs::write(&path, b.screenshot().await.expect("screenshot")).expect("save");
    }
    for (order, seq) in lost {
        b.goto(&format!("{base}/")).await.expect("overview");
        click(&b, "[data-figure='lagging-not_applied']").await;
        el(&b, &format!("a[href='/where?shard=0&order={order}']"))
            .await
            .click()
            .await
            .expect("open the order");
        let stopped = el(&b, "[data-stopped]").await;
        assert_eq!(
            stopped.attr("data-stopped").await.unwrap().as_deref(),
            Some("published, never applied")
        );
        el(&b, "a[href^='/replay?']")
            .await
            .click()
            .await
            .expect("dry run");
        let apply = el(&b, "[data-verdict='apply']")
            .await
            .text()
            .await
            .expect("text");
        assert!(apply.contains(&format!("(seq {seq})")), "{apply}");
        confirm_with_keyboard(&b, &format!("queue purged, order {order}")).await;
        assert_eq!(job_done(&b).await, 1);
    }
    let traffic = traffic.await.expect("traffic");
    // Every mail exactly once: the lost ones and the traffic's.
    for (order, seq) in lost.iter().map(|(o, s)| (*o, *s)).chain(traffic) {
        let mails = stack.mails_for(order, 1).await.expect("mails");
        let seqs: Vec<u64> = mails.iter().map(|m| m.seq).collect();
        assert_eq!(seqs, [seq], "order {order} mailed once");
    }
    b.goto(&format!("{base}/")).await.expect("overview");
    until("nothing lagging", || async {
        let mut all = true;
        for stage in ["unpublished", "quarantined", "dead_lettered", "not_applied"] {
            all &= figure(&b, &format!("lagging-{stage}")).await == "0";
        }
        all
    })
    .await;

    // Story 2: a mail-svc that trusts the wrong publisher dead-letters a burst.
    stack.mails[0].terminate(Duration::from_secs(10)).await;
    stack.mails[0].set_env("TRUSTED_PUBLISHERS", "someone-else");
    stack.mails[0]
        .start()
        .await
        .expect("mail-svc misconfigured");
    let mut burst = Vec::new();
    for id in 200..205_i64 {
        let created = stack
            .upsert(id, OrderStatus::Pending)
            .await
            .expect("upsert");
        let paid = stack.upsert(id, OrderStatus::Paid).await.expect("upsert");
        burst.push((id, [created, paid]));
    }
    until("the burst dead-lettered", || async {
        figure(&b, "dead-letters").await == "10"
    })
    .await;
    // The fix: the right publisher.
    stack.mails[0].terminate(Duration::from_secs(10)).await;
    stack.mails[0].set_env("TRUSTED_PUBLISHERS", "guest");
    stack.mails[0].start().await.expect("mail-svc fixed");
    click(&b, "[data-figure='dead-letters']").await;
    let all = el(&b, "button[name='action'][value='matching']").await;
    assert_eq!(
        all.text().await.expect("text"),
        "Redrive all matching…",
        "the button says what it does"
    );
    all.send_keys(ENTER)
        .await
        .expect("press it with the keyboard");
    let preview = el(&b, "[data-count]").await;
    assert_eq!(
        preview.attr("data-count").await.unwrap().as_deref(),
        Some("10")
    );
    confirm_with_keyboard(&b, "TRUSTED_PUBLISHERS fixed").await;
    assert_eq!(job_done(&b).await, 10);
    for (order, seqs) in burst {
        let mails = stack.mails_for(order, 2).await.expect("mails");
        let got: Vec<u64> = mails.iter().map(|m| m.seq).collect();
        assert_eq!(
            got, seqs,
            "order {order}: each event mailed once, in chain order"
        );
    }
    assert_eq!(
        count(&mail, "select count(*) from admin_actions where action = 'RedriveDeadLetters' and operator = 'olivia'").await,
        count(&mail, "select count(*) from admin_actions").await,
        "every redrive recorded with the console's user"
    );
    assert_eq!(
        count(
            &orders,
            "select count(*) from admin_actions where action = 'Replay' and operator = 'olivia'"
        )
        .await,
        2
    );
    eprintln!("console stories: {:?}", started.elapsed());

    b.close().await.expect("close the browser");
    driver.stop().await;
    console.stop().await;
    let _ = conn.close(200, "bye".into()).await;
    orders.close().await;
    mail.close().await;
    stack.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}
