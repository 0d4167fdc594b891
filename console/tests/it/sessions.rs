//! A session's end ends everything it opened: the live stream stops at sign-out and at expiry,
//! and a session whose token was rotated out of its file ends at the reload (SIGHUP), while a
//! session whose token is still listed goes on.

use std::time::Duration;

use clap::Parser as _;
use outbox_testkit as testing;
use reqwest::StatusCode;
use tokio_util::sync::CancellationToken;

use crate::common::{Console, OPERATOR, Stack, VIEWER, form_token, wait_until};

/// Opens `/live` with `cookie`; the open stream after its first `figures` event.
async fn open_live(base: &str, cookie: &str) -> reqwest::Response {
    let mut r = reqwest::Client::new()
        .get(format!("{base}/live"))
        .header(reqwest::header::COOKIE, cookie)
        .send()
        .await
        .expect("live");
    assert_eq!(r.status(), StatusCode::OK);
    let mut text = String::new();
    while !text.contains("event: figures") {
        let chunk = tokio::time::timeout(Duration::from_secs(30), r.chunk())
            .await
            .expect("a first event within 30s")
            .expect("stream")
            .expect("an open stream");
        text.push_str(&String::from_utf8_lossy(&chunk));
    }
    r
}

/// Reads `stream` until it ends; panics if it is still sending after 60 s.
async fn ends(what: &str, mut stream: reqwest::Response) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        match tokio::time::timeout_at(deadline, stream.chunk()).await {
            Ok(Ok(None)) | Ok(Err(_)) => return,
            Ok(Ok(Some(_))) => {}
            Err(_) => panic!("{what}: the live stream still sends the overview"),
        }
    }
}

#[tokio::test]
async fn the_live_stream_ends_at_sign_out_and_at_expiry() {
    let stack = Stack::start().await;
    let console = Console::start(&stack, "1h", &[]).await;
    let viewer = console.signed_in(VIEWER).await;
    let cookie = viewer.cookie.clone().expect("cookie");
    let live = open_live(&viewer.base, &cookie).await;
    let page = viewer.page("/").await;
    let out = viewer
        .post("/sign-out", &[("csrf", &form_token(&page, "/sign-out"))])
        .await;
    assert_eq!(out.status, StatusCode::SEE_OTHER, "{}", out.body);
    ends("after sign-out", live).await;
    console.stop().await;

    // A session that expires while its stream is open.
    let console = Console::start(&stack, "1h", &["--session-ttl=4s"]).await;
    let viewer = console.signed_in(VIEWER).await;
    let live = open_live(&viewer.base, viewer.cookie.as_deref().unwrap_or("")).await;
    ends("after expiry", live).await;
    assert_eq!(viewer.get("/").await.status, StatusCode::SEE_OTHER);
    console.stop().await;
    stack.cleanup().await;
}

/// A console whose operator tokens file the test rewrites.
async fn console_with_file(stack: &Stack, file: &std::path::Path) -> (String, CancellationToken) {
    let cfg = outbox_console::config::Config::try_parse_from([
        "outbox-console".to_owned(),
        "--addr=127.0.0.1:0".into(),
        format!("--operator-tokens-file={}", file.display()),
        format!("--orders-db={}", stack.names.orders_db),
        format!("--mail-db={}", stack.names.mail_db),
        format!("--orders-addr={}", stack.orders.grpc_addr),
        format!("--relay-addr={}", stack.relay.grpc_addr),
        format!("--mail-addr={}", stack.mail.grpc_addr),
        "--refresh=300ms".into(),
    ])
    .expect("console config");
    let shutdown = CancellationToken::new();
    let app = outbox_console::App::build(cfg, shutdown.clone())
        .await
        .expect("the console starts");
    let base = format!("http://{}", app.addr());
    tokio::spawn(app.run());
    (base, shutdown)
}

/// Signs in with `token`; the session cookie (`name=value`).
async fn sign_in(base: &str, token: &str) -> String {
    let r = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
        .post(format!("{base}/sign-in"))
        .header(reqwest::header::ORIGIN, base)
        .header(
            reqwest::header::CONTENT_TYPE,
            "application/x-www-form-urlencoded",
        )
        .body(format!("token={token}"))
        .send()
        .await
        .expect("sign-in");
    assert_eq!(r.status(), StatusCode::SEE_OTHER);
    let cookie = r.headers()[reqwest::header::SET_COOKIE]
        .to_str()
        .expect("cookie");
    cookie.split(';').next().expect("name=value").to_owned()
}

async fn overview_status(base: &str, cookie: &str) -> StatusCode {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
        .get(format!("{base}/"))
        .header(reqwest::header::COOKIE, cookie)
        .send()
        .await
        .expect("GET /")
        .status()
}

#[tokio::test]
async fn a_session_whose_token_was_rotated_out_ends_at_the_reload() {
    let stack = Stack::start().await;
    let file = std::env::temp_dir().join(testing::unique("console_rotation"));
    let kept = "kept-operator-token-0123456789";
    std::fs::write(&file, format!("alice {OPERATOR}\nbob {kept}\n")).expect("tokens");
    let (base, shutdown) = console_with_file(&stack, &file).await;
    let alice = sign_in(&base, OPERATOR).await;
    let bob = sign_in(&base, kept).await;
    let live = open_live(&base, &alice).await;
    assert_eq!(overview_status(&base, &alice).await, StatusCode::OK);

    // alice's token is rotated: same name, a new token; bob's stays.
    std::fs::write(
        &file,
        format!("alice rotated-operator-token-0123456789\nbob {kept}\n"),
    )
    .expect("rotate");
    let hup = std::process::Command::new("kill")
        .args(["-HUP", &std::process::id().to_string()])
        .status()
        .expect("kill -HUP");
    assert!(hup.success());
    wait_until("alice's session ended by the reload", || async {
        overview_status(&base, &alice).await == StatusCode::SEE_OTHER
    })
    .await;
    ends("after the reload", live).await;
    assert_eq!(
        overview_status(&base, &bob).await,
        StatusCode::OK,
        "a session whose token is still listed goes on"
    );

    shutdown.cancel();
    let _ = std::fs::remove_file(&file);
    stack.cleanup().await;
}
