//! The SMTP mailer sends a round's mails over one session: queued mails go out over a single
//! connection, and a server that limits mails per session (closing it with 421) gets a fresh
//! session for the rest, without charging any mail an attempt or opening the circuit.

use outbox_proto::mail::v1::MailState;
use outbox_testkit::{Proxy, run_in_own_process};

use crate::common::{self, Names, Publisher, TestMail, created, eventually, smtp_config, start};
use crate::faulty_smtp::FaultySmtp;

const SESSION_FAILURES: &str = "mail_smtp_session_failures_total";

/// mail-svc (one delivery loop) with `orders` mails queued while the SMTP server was
/// unreachable; returns once they are all queued, with the server reachable again.
async fn queued_mails(smtp: &FaultySmtp, orders: i64) -> (Names, TestMail, Proxy) {
    let proxy = Proxy::start(&smtp.addr.to_string()).await.expect("proxy");
    proxy.cut();
    let names = Names::new();
    let mut cfg = smtp_config(&names, proxy.addr());
    cfg.mailer_concurrency = 1;
    let svc = start(cfg).await;
    let publisher = Publisher::connect(&names.exchange).await;
    for order in 1..=orders {
        publisher
            .proto(&created(
                order as u64,
                order,
                &format!("c{order}@example.com"),
            ))
            .await;
    }
    svc.status_once("every mail queued", |s| {
        s.processed == orders as u64 && s.unsent_mails == orders as u64
    })
    .await;
    assert_eq!(smtp.sessions(), 0, "the server was unreachable");
    proxy.restore();
    (names, svc, proxy)
}

/// Every order's one mail was sent, at its first attempt (the outage charged nothing).
async fn all_sent_first_time(svc: &TestMail, orders: i64) {
    for order in 1..=orders {
        let mails = svc.mails(order).await;
        assert_eq!(mails.len(), 1, "order {order}");
        assert_eq!(mails[0].state, MailState::Sent as i32, "order {order}");
        assert_eq!(mails[0].attempts, 1, "order {order}");
    }
}

#[tokio::test]
async fn queued_mails_go_out_over_one_session() {
    let smtp = FaultySmtp::start().await;
    let (names, svc, _proxy) = queued_mails(&smtp, 40).await;
    eventually("every mail delivered", 120, || async {
        (svc.status().await.unsent_mails == 0).then_some(())
    })
    .await;
    let mut seqs: Vec<u64> = smtp.accepted().iter().map(|a| a.seq).collect();
    assert_eq!(seqs.len(), 40, "each mail exactly once");
    seqs.sort_unstable();
    seqs.dedup();
    assert_eq!(seqs.len(), 40, "no mail twice");
    assert_eq!(
        smtp.sessions(),
        1,
        "40 mails (BATCH_SIZE 64) over one session"
    );
    assert_eq!(smtp.mail_commands(), 40);
    all_sent_first_time(&svc, 40).await;
    svc.stop().await;
    names.cleanup().await;
}

#[tokio::test]
async fn a_server_closing_the_session_after_five_mails_gets_a_fresh_one() {
    // The session-failure counter read below is process-wide: only in a process of its own does
    // no other test's failure (the other test here queues its mails through an outage too) land
    // in this test's window.
    if run_in_own_process(concat!(
        module_path!(),
        "::a_server_closing_the_session_after_five_mails_gets_a_fresh_one"
    )) {
        return;
    }
    let smtp = FaultySmtp::start().await;
    smtp.mails_per_session(Some(5));
    let (names, svc, _proxy) = queued_mails(&smtp, 20).await;
    // The outage's failures are counted; from here on none may be (a closed session is no
    // refusal: it must not open the circuit).
    let failures = common::metric(svc.metrics_addr, SESSION_FAILURES).await;
    eventually("every mail delivered", 120, || async {
        (svc.status().await.unsent_mails == 0).then_some(())
    })
    .await;
    assert_eq!(
        common::metric(svc.metrics_addr, SESSION_FAILURES).await,
        failures,
        "no session failure counted after the server came back"
    );
    assert_eq!(smtp.accepted().len(), 20, "each mail exactly once");
    assert_eq!(smtp.sessions(), 4, "a new session after each 5 mails");
    all_sent_first_time(&svc, 20).await;
    svc.stop().await;
    names.cleanup().await;
}
