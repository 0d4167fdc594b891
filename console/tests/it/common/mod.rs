//! The console in-process against the real stack ([`Stack`], from the testkit), and a
//! browser-like HTTP client (a session cookie, `Origin` on posts, the forms' tokens read from the
//! pages).

use std::{net::SocketAddr, path::PathBuf, time::Duration};

use clap::Parser as _;
use outbox_testkit as testing;
use reqwest::{StatusCode, header};
use sqlx::PgPool;
use tokio_util::sync::CancellationToken;

pub use testing::{
    purge,
    stack::{Stack, TOKEN},
    wait_until,
};

/// The operator's token (name `alice`) and the viewer's (name `victor`).
pub const OPERATOR: &str = "operator-token-0123456789abcdef";
pub const VIEWER: &str = "viewer-token-0123456789abcdef";

/// The console, running in-process against a stack.
pub struct Console {
    pub addr: SocketAddr,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
    files: Vec<PathBuf>,
}

impl Console {
    /// The console against `stack`, with the audit's grace `grace`, a replay and redrive rate
    /// fast enough for a test, and `extra` flags.
    pub async fn start(stack: &Stack, grace: &str, extra: &[&str]) -> Self {
        let dir = std::env::temp_dir();
        let viewers = dir.join(testing::unique("console_viewers"));
        let operators = dir.join(testing::unique("console_operators"));
        std::fs::write(&viewers, format!("victor {VIEWER}\n")).expect("viewer tokens");
        std::fs::write(&operators, format!("alice {OPERATOR}\n")).expect("operator tokens");
        let mut args: Vec<String> = vec![
            "outbox-console".into(),
            "--addr=127.0.0.1:0".into(),
            format!("--viewer-tokens-file={}", viewers.display()),
            format!("--operator-tokens-file={}", operators.display()),
            format!("--orders-db={}", stack.names.orders_db),
            format!("--mail-db={}", stack.names.mail_db),
            format!("--orders-addr={}", stack.orders.grpc_addr),
            format!("--relay-addr={}", stack.relay.grpc_addr),
            format!("--mail-addr={}", stack.mail.grpc_addr),
            format!("--admin-token={TOKEN}"),
            format!("--replay-queue={}", stack.names.queue),
            format!("--audit-grace={grace}"),
            "--refresh=300ms".into(),
            "--replay-rate=20".into(),
            "--redrive-rate=20".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        let cfg = outbox_console::config::Config::try_parse_from(args).expect("console config");
        let shutdown = CancellationToken::new();
        let app = outbox_console::App::build(cfg, shutdown.clone())
            .await
            .expect("the console starts");
        let addr = app.addr();
        let task = tokio::spawn(app.run());
        Self {
            addr,
            shutdown,
            task,
            files: vec![viewers, operators],
        }
    }

    /// A browser without a session.
    pub fn browser(&self) -> Browser {
        Browser {
            base: format!("http://{}", self.addr),
            client: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .expect("client"),
            cookie: None,
        }
    }

    /// A browser signed in with `token`.
    pub async fn signed_in(&self, token: &str) -> Browser {
        let mut b = self.browser();
        let r = b.post("/sign-in", &[("token", token)]).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "sign-in: {}", r.body);
        let cookie = r.cookie.expect("a session cookie");
        b.cookie = Some(cookie.split(';').next().expect("name=value").to_owned());
        b
    }

    pub async fn stop(self) {
        self.shutdown.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(10), self.task).await;
        for f in self.files {
            let _ = std::fs::remove_file(f);
        }
    }
}

/// An answer: status, body, the `Set-Cookie` and `Location` headers.
#[derive(Debug)]
pub struct Answer {
    pub status: StatusCode,
    pub body: String,
    pub cookie: Option<String>,
    pub location: Option<String>,
}

/// What a browser does: keeps the session cookie, sends `Origin` with a post.
#[derive(Debug, Clone)]
pub struct Browser {
    pub base: String,
    client: reqwest::Client,
    pub cookie: Option<String>,
}

impl Browser {
    pub async fn get(&self, path: &str) -> Answer {
        let mut r = self.client.get(format!("{}{path}", self.base));
        if let Some(c) = &self.cookie {
            r = r.header(header::COOKIE, c);
        }
        answer(r.send().await.expect("GET")).await
    }

    /// A form post from the console's own page.
    pub async fn post(&self, path: &str, fields: &[(&str, &str)]) -> Answer {
        let origin = self.base.clone();
        self.post_from(path, fields, Some(&origin)).await
    }

    /// A form post with `Origin: origin` (none: no Origin header).
    pub async fn post_from(
        &self,
        path: &str,
        fields: &[(&str, &str)],
        origin: Option<&str>,
    ) -> Answer {
        let body = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(fields)
            .finish();
        let mut r = self
            .client
            .post(format!("{}{path}", self.base))
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(body);
        if let Some(o) = origin {
            r = r.header(header::ORIGIN, o);
        }
        if let Some(c) = &self.cookie {
            r = r.header(header::COOKIE, c);
        }
        answer(r.send().await.expect("POST")).await
    }

    /// GETs `path`, asserting a 200; the page.
    pub async fn page(&self, path: &str) -> String {
        let a = self.get(path).await;
        assert_eq!(a.status, StatusCode::OK, "GET {path}: {}", a.body);
        a.body
    }
}

async fn answer(r: reqwest::Response) -> Answer {
    let status = r.status();
    let h = |name| {
        r.headers()
            .get(name)
            .and_then(|v: &header::HeaderValue| v.to_str().ok())
            .map(str::to_owned)
    };
    let cookie = h(header::SET_COOKIE);
    let location = h(header::LOCATION);
    Answer {
        status,
        body: r.text().await.expect("body"),
        cookie,
        location,
    }
}

/// The per-form token of the form posting to `action` in `page`.
#[track_caller]
pub fn form_token(page: &str, action: &str) -> String {
    let at = page
        .find(&format!("action=\"{action}\""))
        .unwrap_or_else(|| panic!("no form posting to {action} in the page: {page}"));
    let rest = &page[at..];
    let marker = "name=\"csrf\" value=\"";
    let v = rest.find(marker).expect("the form's token") + marker.len();
    rest[v..v + 64].to_owned()
}

/// Every admin_actions row: (action, ids, reason, operator).
pub async fn actions(pool: &PgPool) -> Vec<(String, Vec<i64>, String, Option<String>)> {
    sqlx::query_as("select action, ids, reason, operator from admin_actions order by id")
        .fetch_all(pool)
        .await
        .expect("admin_actions")
}
