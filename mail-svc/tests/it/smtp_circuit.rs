//! A configuration problem is not a permanent failure of every mail: when the SMTP server refuses
//! the session (535 on AUTH, a rejected sender at MAIL FROM, 530 "STARTTLS first", "relay access
//! denied" for every recipient), no mail is marked FAILED (nor, before RCPT, charged an attempt),
//! the mailer backs off globally (the circuit breaker, `mail_smtp_circuit_open`), and once the
//! server is fixed every mail goes out, in order.
//!
//! One test in its own binary: the metrics recorder is global to the process, so the gauge it
//! reads must not be moved by another test's mail-svc.

use std::time::{Duration, Instant};

use mail_svc::config::MailerKind;
use outbox_proto::{mail::v1::MailState, orders::v1::OrderStatus};
use outbox_testkit::run_in_own_process;

use crate::common::{self, Names, Publisher, changed, config, created, eventually, start};
use crate::faulty_smtp::FaultySmtp;

#[derive(Debug, Clone, Copy)]
enum Fault {
    Auth(&'static str),
    MailFrom(&'static str),
    /// Every recipient refused with a reply that is about the session, not the mailbox.
    Rcpt(&'static str),
}

#[tokio::test]
async fn a_refused_session_fails_no_mail_and_opens_the_circuit_until_fixed() {
    // The circuit gauge read below is process-wide: every mail-svc of the process sets it, so
    // only in a process of its own is it this test's service's.
    if run_in_own_process(concat!(
        module_path!(),
        "::a_refused_session_fails_no_mail_and_opens_the_circuit_until_fixed"
    )) {
        return;
    }
    for fault in [
        Fault::Auth("535 5.7.8 Authentication credentials invalid"),
        Fault::MailFrom("550 5.7.1 Sender address rejected: not owned by user"),
        Fault::MailFrom("530 5.7.0 Must issue a STARTTLS command first"),
        Fault::Rcpt("554 5.7.1 <c1@example.com>: Relay access denied"),
    ] {
        println!("--- {fault:?}");
        let smtp = FaultySmtp::start().await;
        let tries = {
            let smtp = smtp.clone();
            move || match fault {
                Fault::Auth(_) => smtp.auth_commands(),
                Fault::MailFrom(_) => smtp.mail_commands(),
                Fault::Rcpt(_) => smtp.rcpt_commands("@"),
            }
        };
        match fault {
            Fault::Auth(r) => smtp.auth_reply(Some(r)),
            Fault::MailFrom(r) => smtp.mail_from_reply(Some(r)),
            Fault::Rcpt(r) => smtp.rcpt_reply("@", Some(r)),
        }
        let names = Names::new();
        let mut cfg = config(&names);
        cfg.mailer = MailerKind::Smtp;
        cfg.smtp_url = format!("smtp://shop:secret@{}", smtp.addr).into();
        let svc = start(cfg).await;
        let publisher = Publisher::connect(&names.exchange).await;

        // Three orders, two mails each.
        for order in 1..=3i64 {
            let email = format!("c{order}@example.com");
            let seq = order as u64 * 2 - 1;
            publisher.proto(&created(seq, order, &email)).await;
            publisher
                .proto(&changed(seq + 1, seq, order, OrderStatus::Paid, &email))
                .await;
        }
        eventually("all six processed", 60, || async {
            (svc.status().await.processed == 6).then_some(())
        })
        .await;
        let refused_at = Instant::now();
        eventually("the server refused a few sessions", 60, || async {
            (tries() >= 3).then_some(())
        })
        .await;
        // Let a wrong "permanent" verdict show: the old mailer failed every mail within
        // milliseconds of the first refusal.
        tokio::time::sleep(Duration::from_secs(3)).await;
        let refusals = tries();
        let window = refused_at.elapsed();
        println!("{refusals} refused sessions in {window:?} (backing off)");
        assert!(
            refusals < 40,
            "the mailer must back off, not hammer a refusing server: {refusals} in {window:?}"
        );
        for order in 1..=3 {
            for m in svc.mails(order).await {
                assert_eq!(m.state, MailState::Queued as i32, "{fault:?}: {m:?}");
                if !matches!(fault, Fault::Rcpt(_)) {
                    assert_eq!(m.attempts, 0, "a refused session is no attempt: {m:?}");
                }
            }
        }
        if matches!(fault, Fault::Rcpt(_)) {
            // The probes' mails were deferred too, so that no probe sticks on one mail.
            let deferred: Vec<_> = svc
                .mails(1)
                .await
                .into_iter()
                .chain(svc.mails(2).await)
                .chain(svc.mails(3).await)
                .filter(|m| m.attempts > 0)
                .collect();
            assert!(!deferred.is_empty());
            assert!(
                deferred
                    .iter()
                    .all(|m| m.last_error.contains("Relay access denied")
                        && m.next_attempt_at.is_some()),
                "{deferred:?}"
            );
        }
        assert_eq!(svc.status().await.unsent_mails, 6);
        assert!(smtp.accepted().is_empty());
        assert_eq!(
            common::metric(svc.metrics_addr, "mail_smtp_circuit_open").await,
            Some(1.0),
            "the circuit gauge an operator alerts on"
        );

        // Fixed: everything goes out, each order in order.
        smtp.auth_reply(None);
        smtp.mail_from_reply(None);
        smtp.rcpt_reply("@", None);
        let fixed_at = Instant::now();
        eventually(
            "every mail delivered once the server is fixed",
            90,
            || async { (svc.status().await.unsent_mails == 0).then_some(()) },
        )
        .await;
        println!(
            "all delivered {:?} after the server was fixed",
            fixed_at.elapsed()
        );
        assert_eq!(smtp.accepted().len(), 6, "each mail exactly once");
        for order in 1..=3u64 {
            let seqs = smtp.accepted_seqs(&format!("c{order}@"));
            assert_eq!(seqs, vec![order * 2 - 1, order * 2]);
        }
        for order in 1..=3 {
            assert!(
                svc.mails(order)
                    .await
                    .iter()
                    .all(|m| m.state == MailState::Sent as i32
                        && (m.attempts == 1 || matches!(fault, Fault::Rcpt(_))))
            );
        }
        eventually("the circuit gauge back to 0", 30, || async {
            (common::metric(svc.metrics_addr, "mail_smtp_circuit_open").await == Some(0.0))
                .then_some(())
        })
        .await;
        svc.stop().await;
        names.cleanup().await;
    }
}
