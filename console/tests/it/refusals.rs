//! Every page as a viewer and as an operator, and every way a request is refused: not signed
//! in, a bad token, a viewer writing, a missing, stale or foreign form token, another origin,
//! no reason, unknown orders, malformed fields. After all of them, nothing has changed.

use std::time::Duration;

use outbox_proto::orders::v1::OrderStatus;
use reqwest::StatusCode;

use crate::common::{Console, OPERATOR, Stack, VIEWER, actions, form_token, wait_until};

#[tokio::test]
async fn pages_answer_and_refused_requests_change_nothing() {
    let stack = Stack::start().await;
    let a1 = stack.upsert(1, OrderStatus::Pending).await;
    stack.wait_until_sent("order 1 mailed", 1, &[a1]).await;
    let q = stack.insert_unencodable(2).await;
    wait_until("the row quarantined", || async {
        sqlx::query_scalar::<_, i64>("select count(*) from outbox_quarantine")
            .fetch_one(&stack.orders_pool)
            .await
            .expect("count")
            == 1
    })
    .await;
    let console = Console::start(&stack, "1h", &[]).await;

    // Not signed in: pages send to the sign-in, writes are refused.
    let anon = console.browser();
    let r = anon.get("/").await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    assert_eq!(r.location.as_deref(), Some("/sign-in"));
    let sign_in = anon.page("/sign-in").await;
    assert!(
        sign_in.contains(r#"<label for="token">Token</label>"#),
        "{sign_in}"
    );
    assert_eq!(
        anon.post("/quarantine/requeue", &[("seqs", "1")])
            .await
            .status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(anon.get("/live").await.status, StatusCode::SEE_OTHER);
    // A wrong token, and a sign-in posted by another site.
    let r = anon
        .post("/sign-in", &[("token", "not-a-token-of-any-list")])
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert!(r.cookie.is_none());
    let r = anon
        .post_from(
            "/sign-in",
            &[("token", VIEWER)],
            Some("http://evil.example"),
        )
        .await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert!(r.cookie.is_none());
    // The session cookie: HttpOnly, SameSite=Strict, not Secure without TLS; the token is in
    // no answer.
    let r = anon.post("/sign-in", &[("token", VIEWER)]).await;
    let cookie = r.cookie.expect("a cookie");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    assert!(
        !cookie.contains("Secure") && !cookie.contains(VIEWER),
        "{cookie}"
    );

    // Every page, as a viewer: no action offered.
    let viewer = console.signed_in(VIEWER).await;
    let overview = viewer.page("/").await;
    assert!(overview.contains(r#"data-live="figures""#), "{overview}");
    assert!(overview.contains("victor") && overview.contains("(viewer)"));
    for path in [
        "/where",
        "/held",
        "/dead-letters",
        "/audit",
        "/audit?stage=not_applied",
    ] {
        viewer.page(path).await;
    }
    let quarantine = viewer.page("/quarantine").await;
    assert!(
        quarantine.contains(&format!(r#"data-seq="{q}""#)),
        "{quarantine}"
    );
    assert!(
        !quarantine.contains("Requeue selected"),
        "a viewer sees no action"
    );
    let order = viewer.page("/where?order=1").await;
    assert!(order.contains("done (mail sent)") && order.contains("Every event went through"));
    let by_seq = viewer.page(&format!("/where?shard=0&seq={a1}")).await;
    assert!(by_seq.contains("Order 1"), "{by_seq}");
    let stopped = viewer.page("/where?order=2").await;
    assert!(
        stopped.contains(r#"data-stopped="quarantined""#),
        "{stopped}"
    );
    let dry = viewer.page("/replay?order=1").await;
    assert!(dry.contains("skip, applied already: 1"), "{dry}");
    assert!(
        !dry.contains(r#"method="post" action="/replay""#),
        "a viewer cannot replay"
    );
    let htmx = viewer.get("/assets/htmx.min.js").await;
    assert_eq!(htmx.status, StatusCode::OK);
    assert!(htmx.body.contains("htmx"), "the embedded htmx");
    // The live stream sends the figures.
    let live = live_event(
        &viewer.base,
        viewer.cookie.as_deref().unwrap_or(""),
        "figures",
    )
    .await;
    assert!(live.contains(r#"data-figure="quarantined">1<"#), "{live}");

    // Unknown orders and events: 404 pages; malformed fields: 400 naming the field.
    let r = viewer.get("/where?order=999999").await;
    assert_eq!(r.status, StatusCode::NOT_FOUND);
    assert!(r.body.contains("no event of order 999999"), "{}", r.body);
    assert_eq!(
        viewer.get("/where?seq=999999").await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        viewer.get("/replay?order=999999").await.status,
        StatusCode::NOT_FOUND
    );
    assert_eq!(viewer.get("/jobs/77").await.status, StatusCode::NOT_FOUND);
    assert_eq!(
        viewer.get("/no-such-page").await.status,
        StatusCode::NOT_FOUND
    );
    for (path, field) in [
        ("/where?seq=abc", "seq: not a whole number"),
        ("/where?order=-4", "order: must be at least 1"),
        ("/where?order=1&shard=3", "shard: no shard 3"),
        ("/quarantine?order=x", "order: not a whole number"),
        ("/quarantine?min_age=soon", "min_age: "),
        ("/quarantine?after=1.5", "after: not a whole number"),
        ("/held?after=7", "after: not shard:seq"),
        ("/dead-letters?order=1e3", "order: not a whole number"),
        ("/replay?order=1&from=5&to=2", "to: 2 is below from (5)"),
        ("/replay", "order: required"),
        ("/audit?stage=lost", "stage: unknown stage"),
    ] {
        let r = viewer.get(path).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{path}: {}", r.body);
        assert!(r.body.contains(field), "{path}: {}", r.body);
    }

    // A viewer writing: 403, even with every other part right.
    let token = "0".repeat(64);
    for path in [
        "/quarantine/requeue",
        "/quarantine/drop",
        "/held/release",
        "/dead-letters/redrive",
        "/replay",
    ] {
        let r = viewer
            .post(
                path,
                &[
                    ("csrf", token.as_str()),
                    ("shard", "0"),
                    ("seqs", &q.to_string()),
                    ("order", "2"),
                    ("mode", "all"),
                    ("reason", "r"),
                ],
            )
            .await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{path}: {}", r.body);
        assert!(r.body.contains("viewer"), "{path}: {}", r.body);
    }

    // An operator: the actions are offered; each part of a write is checked.
    let operator = console.signed_in(OPERATOR).await;
    let page = operator.page("/quarantine").await;
    assert!(page.contains("Requeue selected"), "{page}");
    let preview_token = form_token(&page, "/quarantine/preview");
    let preview = operator
        .post(
            "/quarantine/preview",
            &[
                ("csrf", &preview_token),
                ("action", "requeue"),
                ("shard", "0"),
                ("seq", &q.to_string()),
            ],
        )
        .await;
    assert_eq!(preview.status, StatusCode::OK, "{}", preview.body);
    assert!(
        preview.body.contains(r#"data-count="1""#) && preview.body.contains(&format!("seq {q}"))
    );
    let requeue_token = form_token(&preview.body, "/quarantine/requeue");
    let seqs = q.to_string();
    let good = [
        ("shard", "0"),
        ("seqs", seqs.as_str()),
        ("reason", "repaired"),
    ];
    let with = |token: &str| {
        let mut v = vec![("csrf", token.to_owned())];
        v.extend(good.iter().map(|(k, v)| (*k, v.to_string())));
        v
    };
    // No form token.
    let r = operator.post("/quarantine/requeue", &good).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert!(r.body.contains("token is missing"), "{}", r.body);
    // Another form's token.
    let r = post(&operator, "/quarantine/requeue", &with(&preview_token)).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    // Another origin, and no origin at all, with the right token.
    let right = with(&requeue_token);
    let right: Vec<(&str, &str)> = right.iter().map(|(k, v)| (*k, v.as_str())).collect();
    for origin in [Some("http://evil.example"), None] {
        let r = operator
            .post_from("/quarantine/requeue", &right, origin)
            .await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{origin:?}: {}", r.body);
    }
    // No reason.
    let r = operator
        .post(
            "/quarantine/requeue",
            &[
                ("csrf", requeue_token.as_str()),
                ("shard", "0"),
                ("seqs", seqs.as_str()),
                ("reason", "  "),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.body.contains("reason: required"), "{}", r.body);
    // A stale token: the same operator signed in again (a new session) posts the old page.
    let again = console.signed_in(OPERATOR).await;
    let r = post(&again, "/quarantine/requeue", &with(&requeue_token)).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert!(r.body.contains("stale"), "{}", r.body);
    // A token of a session that signed out.
    let out_token = form_token(&operator.page("/").await, "/sign-out");
    let r = operator
        .post("/sign-out", &[("csrf", out_token.as_str())])
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    assert!(r.cookie.as_deref().is_some_and(|c| c.contains("Max-Age=0")));
    let r = post(&operator, "/quarantine/requeue", &with(&requeue_token)).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert_eq!(
        operator.get("/").await.status,
        StatusCode::SEE_OTHER,
        "signed out"
    );
    // Bad fields of a write, with every check passed: 400 naming the field.
    let page = again.page("/quarantine").await;
    let t = form_token(&page, "/quarantine/preview");
    let r = again
        .post(
            "/quarantine/preview",
            &[
                ("csrf", t.as_str()),
                ("action", "requeue"),
                ("shard", "0"),
                ("seq", "x"),
            ],
        )
        .await;
    assert_eq!(r.status, StatusCode::BAD_REQUEST);
    assert!(r.body.contains("seq: not a whole number"), "{}", r.body);

    // Nothing changed: the row is still quarantined, no audit row anywhere, no mail.
    let quarantined: Vec<i64> = sqlx::query_scalar("select seq from outbox_quarantine")
        .fetch_all(&stack.orders_pool)
        .await
        .expect("quarantine");
    assert_eq!(quarantined, vec![q]);
    assert!(actions(&stack.orders_pool).await.is_empty());
    assert!(actions(&stack.mail_pool).await.is_empty());
    assert_eq!(stack.mails(1).await, vec![(a1, true)]);
    assert!(stack.mails(2).await.is_empty());

    console.stop().await;
    tls_sign_in_sets_a_secure_host_cookie(&stack).await;
    stack.cleanup().await;
}

/// Under TLS (TLS_CERT_FILE, TLS_KEY_FILE as the services), the session cookie is `Secure` and
/// `__Host-` prefixed, and plaintext HTTP gets no page.
async fn tls_sign_in_sets_a_secure_host_cookie(stack: &crate::common::Stack) {
    use std::sync::Arc;

    use rustls_pki_types::{CertificateDer, ServerName, pem::PemObject};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let pki = outbox_testkit::pki::TestPki::new("console");
    let server = pki.server("console");
    let console = Console::start(
        stack,
        "1h",
        &[
            &format!("--tls-cert-file={}", server.cert.display()),
            &format!("--tls-key-file={}", server.key.display()),
        ],
    )
    .await;
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(pki.ca_file()).expect("CA") {
        roots.add(c.expect("CA certificate")).expect("trust the CA");
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(console.addr)
        .await
        .expect("connect");
    let mut tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").expect("name"), tcp)
        .await
        .expect("a TLS handshake with the console");
    let host = format!("localhost:{}", console.addr.port());
    let body = format!("token={VIEWER}");
    tls.write_all(
        format!(
            "POST /sign-in HTTP/1.1\r\nHost: {host}\r\nOrigin: https://{host}\r\n\
             Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .await
    .expect("send");
    let mut answer = Vec::new();
    let _ = tls.read_to_end(&mut answer).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 303"), "{answer}");
    let cookie = answer
        .lines()
        .find(|l| l.to_ascii_lowercase().starts_with("set-cookie:"))
        .expect("a session cookie");
    assert!(cookie.contains("__Host-outbox-console="), "{cookie}");
    assert!(
        cookie.contains("; Secure") && cookie.contains("HttpOnly"),
        "{cookie}"
    );
    assert!(
        cookie.contains("SameSite=Strict") && !cookie.contains(VIEWER),
        "{cookie}"
    );
    // Plaintext to the TLS port: no page.
    let mut plain = tokio::net::TcpStream::connect(console.addr)
        .await
        .expect("connect");
    plain
        .write_all(format!("GET /sign-in HTTP/1.1\r\nHost: {host}\r\n\r\n").as_bytes())
        .await
        .expect("send");
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), plain.read_to_end(&mut answer)).await;
    assert!(
        !String::from_utf8_lossy(&answer).contains("200 OK"),
        "no page over plaintext"
    );
    console.stop().await;
}

async fn post(
    b: &crate::common::Browser,
    path: &str,
    fields: &[(&str, String)],
) -> crate::common::Answer {
    let f: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    b.post(path, &f).await
}

/// The data of the first `event` the live stream sends.
async fn live_event(base: &str, cookie: &str, event: &str) -> String {
    let mut r = reqwest::Client::new()
        .get(format!("{base}/live"))
        .header(reqwest::header::COOKIE, cookie)
        .send()
        .await
        .expect("live");
    assert_eq!(r.status(), StatusCode::OK);
    let mut text = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let chunk = tokio::time::timeout_at(deadline, r.chunk())
            .await
            .expect("an event within 20s")
            .expect("stream")
            .expect("open stream");
        text.push_str(&String::from_utf8_lossy(&chunk));
        // Wait for a sample that has read the quarantine.
        if let Some(at) = text.rfind(&format!("event: {event}\n"))
            && text[at..].contains("\n\n")
            && text[at..].contains("data-figure=\"quarantined\">1<")
        {
            return text[at..].to_owned();
        }
    }
}
