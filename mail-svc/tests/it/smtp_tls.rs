//! SMTP over TLS. Demanded from a server that cannot give it: `?tls=required` against a server
//! that does not offer STARTTLS, and `smtps://` against a plaintext server. No mail goes out in
//! plaintext, no mail is failed (they stay queued behind the circuit breaker, no attempt
//! charged), and the log says why. A server whose certificate a private CA signed: trusted
//! with that CA in SMTP_CA_FILE (`smtps://` and STARTTLS), refused without it (mails queued, the
//! log names the certificate problem); a bad SMTP_CA_FILE stops start-up.
//!
//! The tests that read the log each run in a process of their own: they install a log
//! subscriber for the whole process.

use std::{
    io::Write,
    sync::{Arc, Mutex, OnceLock},
};

use mail_svc::{App, config::MailerKind};
use outbox_proto::mail::v1::MailState;
use outbox_testkit::{pki::TestPki, run_in_own_process};
use tokio_util::sync::CancellationToken;

use crate::common::{self, Names, Publisher, config, created, eventually, start};
use crate::faulty_smtp::FaultySmtp;

/// Everything logged by this process.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<u8>>>);

impl Write for Log {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Log {
    /// The process's log, installed on first use (before the services' start installs another).
    fn get() -> &'static Log {
        static LOG: OnceLock<Log> = OnceLock::new();
        LOG.get_or_init(|| {
            let log = Log::default();
            let writer = log.clone();
            tracing_subscriber::fmt()
                .with_ansi(false)
                .with_writer(move || writer.clone())
                .init();
            log
        })
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }

    /// Whether one line holds every one of `words` (every service of the test logs into the
    /// same text).
    fn has_line_with(&self, words: &[&str]) -> bool {
        self.text()
            .lines()
            .any(|l| words.iter().all(|w| l.contains(w)))
    }
}

/// No mail was offered to the server, and order 1's mail waits, queued, with no attempt charged
/// (a session the TLS check refused is not the mail's failure).
async fn nothing_sent(smtp: &FaultySmtp, svc: &common::TestMail) {
    assert_eq!(
        smtp.mail_commands(),
        0,
        "no mail offered without verified TLS"
    );
    assert!(smtp.accepted().is_empty());
    for m in svc.mails(1).await {
        assert_eq!(m.state, MailState::Queued as i32, "{m:?}");
        assert_eq!(m.attempts, 0, "a refused session is no attempt: {m:?}");
    }
}

#[tokio::test]
async fn tls_demanded_but_not_available_sends_nothing_fails_nothing_and_says_why() {
    // The log subscriber (Log::get) is process-wide and must be the first one installed: only in
    // a process of its own is it, and does the log hold this test's lines alone.
    if run_in_own_process(concat!(
        module_path!(),
        "::tls_demanded_but_not_available_sends_nothing_fails_nothing_and_says_why"
    )) {
        return;
    }
    let log = Log::get();

    for (scheme_query, says) in [
        ("smtp://{addr}?tls=required", "STARTTLS is not supported"),
        // rustls reading the server's plaintext greeting as a TLS record.
        ("smtps://{addr}", "received corrupt message"),
    ] {
        println!("--- {scheme_query}");
        let smtp = FaultySmtp::start().await;
        let names = Names::new();
        let mut cfg = config(&names);
        cfg.mailer = MailerKind::Smtp;
        cfg.smtp_url = scheme_query
            .replace("{addr}", &smtp.addr.to_string())
            .into();
        let svc = start(cfg).await;
        let publisher = Publisher::connect(&names.exchange).await;
        publisher.proto(&created(1, 1, "c1@example.com")).await;
        eventually("processed", 60, || async {
            (svc.status().await.processed == 1).then_some(())
        })
        .await;
        eventually("the circuit opened, saying why", 60, || async {
            log.has_line_with(&["SMTP circuit open", says])
                .then_some(())
        })
        .await;
        nothing_sent(&smtp, &svc).await;
        svc.stop().await;
        names.cleanup().await;
    }
}

#[tokio::test]
async fn a_private_ca_in_smtp_ca_file_is_trusted_for_smtps_and_starttls() {
    // The log subscriber (Log::get) is process-wide and must be the first one installed: only in
    // a process of its own is it, and does the log hold this test's lines alone.
    if run_in_own_process(concat!(
        module_path!(),
        "::a_private_ca_in_smtp_ca_file_is_trusted_for_smtps_and_starttls"
    )) {
        return;
    }
    Log::get();
    let pki = TestPki::new("smtp");
    let cert = pki.server("smtp");
    for url in [
        "smtps://localhost:{port}",
        "smtp://localhost:{port}?tls=required",
    ] {
        println!("--- {url}");
        let smtp = if url.starts_with("smtps") {
            FaultySmtp::start_implicit_tls(&cert).await
        } else {
            FaultySmtp::start_starttls(&cert).await
        };
        let names = Names::new();
        let mut cfg = config(&names);
        cfg.mailer = MailerKind::Smtp;
        cfg.smtp_url = url.replace("{port}", &smtp.addr.port().to_string()).into();
        cfg.smtp_ca_file = Some(pki.ca_file());
        let svc = start(cfg).await;
        let publisher = Publisher::connect(&names.exchange).await;
        publisher.proto(&created(1, 1, "c1@example.com")).await;
        eventually("the mail is sent", 60, || async {
            let mails = svc.mails(1).await;
            (mails.len() == 1 && mails[0].state == MailState::Sent as i32).then_some(())
        })
        .await;
        assert_eq!(smtp.accepted_seqs("c1@example.com"), [1], "{url}");
        assert!(smtp.tls_failures().is_empty(), "{:?}", smtp.tls_failures());
        svc.stop().await;
        names.cleanup().await;
    }
}

#[tokio::test]
async fn without_smtp_ca_file_a_private_ca_is_refused_and_mails_stay_queued() {
    // The log subscriber (Log::get) is process-wide and must be the first one installed: only in
    // a process of its own is it, and does the log hold this test's lines alone.
    if run_in_own_process(concat!(
        module_path!(),
        "::without_smtp_ca_file_a_private_ca_is_refused_and_mails_stay_queued"
    )) {
        return;
    }
    let log = Log::get();
    let pki = TestPki::new("smtp_untrusted");
    let smtp = FaultySmtp::start_implicit_tls(&pki.server("smtp")).await;
    let names = Names::new();
    let mut cfg = config(&names);
    cfg.mailer = MailerKind::Smtp;
    cfg.smtp_url = format!("smtps://localhost:{}", smtp.addr.port()).into();
    let svc = start(cfg).await;
    let publisher = Publisher::connect(&names.exchange).await;
    publisher.proto(&created(1, 1, "c1@example.com")).await;
    eventually(
        "the circuit opened, naming the certificate problem",
        60,
        || async {
            log.has_line_with(&[
                "SMTP circuit open",
                "invalid peer certificate",
                "UnknownIssuer",
            ])
            .then_some(())
        },
    )
    .await;
    // The server sees the client's alert a moment after the client gave up.
    let failures = eventually("the server saw the handshake refused", 10, || async {
        Some(smtp.tls_failures()).filter(|f| !f.is_empty())
    })
    .await;
    println!("the server saw: {failures:?}");
    nothing_sent(&smtp, &svc).await;
    svc.stop().await;
    names.cleanup().await;
}

#[tokio::test]
async fn a_bad_smtp_ca_file_stops_start_up_naming_it() {
    let pki = TestPki::new("smtp_bad");
    let not_pem = pki.dir().join("not.pem");
    std::fs::write(&not_pem, "secret-looking text, not a certificate\n").unwrap();
    let names = Names::new();
    for (url, file, says) in [
        ("smtps://localhost:465", not_pem.clone(), "SMTP_CA_FILE: "),
        (
            "smtps://localhost:465",
            pki.dir().join("missing.pem"),
            "SMTP_CA_FILE: cannot read",
        ),
        (
            "smtp://localhost:25",
            pki.ca_file(),
            "SMTP_CA_FILE is set but SMTP_URL uses no TLS",
        ),
    ] {
        let mut cfg = config(&names);
        cfg.mailer = MailerKind::Smtp;
        cfg.smtp_url = url.into();
        cfg.smtp_ca_file = Some(file);
        let e = match App::build(cfg, CancellationToken::new()).await {
            Ok(_) => panic!("{url}: started with a bad SMTP_CA_FILE"),
            Err(e) => format!("{e:#}"),
        };
        assert!(e.contains(says), "{url}: {e}");
        assert!(
            !e.contains("secret-looking"),
            "never the file's content: {e}"
        );
    }
}
