//! SMTP_URL demanding TLS from a server that cannot give it: `?tls=required` against a server
//! that does not offer STARTTLS, and `smtps://` against a plaintext server. No mail goes out in
//! plaintext, no mail is failed (they stay queued behind the circuit breaker, no attempt
//! charged), and the log says why.
//!
//! Its own test binary: it installs a log subscriber for the whole process to read the log.

mod common;
mod faulty_smtp;

use std::{
    io::Write,
    sync::{Arc, Mutex},
};

use common::{Names, Publisher, config, created, eventually, start};
use faulty_smtp::FaultySmtp;
use mail_svc::config::MailerKind;
use outbox_proto::mail::v1::MailState;

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
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

#[tokio::test]
async fn tls_demanded_but_not_available_sends_nothing_fails_nothing_and_says_why() {
    let log = Log::default();
    let writer = log.clone();
    tracing_subscriber::fmt()
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .init();

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
            let text = log.text();
            (text.contains("SMTP circuit open") && text.contains(says)).then_some(())
        })
        .await;
        assert_eq!(smtp.mail_commands(), 0, "no mail offered without TLS");
        assert!(smtp.accepted().is_empty());
        for m in svc.mails(1).await {
            assert_eq!(m.state, MailState::Queued as i32, "{m:?}");
            assert_eq!(m.attempts, 0, "a refused session is no attempt: {m:?}");
        }
        svc.stop().await;
        names.cleanup().await;
    }
}
