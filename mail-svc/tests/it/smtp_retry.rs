//! Per-mail outcomes against a real (in-process) SMTP server: a temporary rejection of one
//! recipient (greylisting) defers only that mail and its order's later mails, on the mail's own
//! retry schedule, while every other order's mail goes out; a rejection of a recipient or of a
//! message fails only that mail; an operator's retry puts a failed mail back before its order's
//! later mails.

use std::time::{Duration, Instant};

use outbox_kit::admin::AdminToken;
use outbox_proto::{
    mail::{
        admin::v1::{MailFilter, RetryMailsRequest},
        v1::MailState,
    },
    orders::v1::OrderStatus,
};
use tonic::Request;

use crate::common::{Names, Publisher, TestMail, changed, created, eventually, smtp_config, start};
use crate::faulty_smtp::FaultySmtp;

const GREY: &str = "grey@example.com";

/// Waits until no mail is left to send, then stops the service and removes the test's queues.
async fn stop_when_all_sent(svc: TestMail, names: &Names) {
    eventually("nothing left to send", 60, || async {
        (svc.status().await.unsent_mails == 0).then_some(())
    })
    .await;
    svc.stop().await;
    names.cleanup().await;
}

#[tokio::test]
async fn a_greylisted_recipient_holds_back_only_its_own_order() {
    let smtp = FaultySmtp::start().await;
    smtp.rcpt_reply(GREY, Some("451 4.7.1 greylisted, please try again later"));
    let names = Names::new();
    let cfg = smtp_config(&names, smtp.addr);
    let svc = start(cfg).await;
    let publisher = Publisher::connect(&names.exchange).await;

    // The greylisted order's mails have the lowest seqs: they are first in every claim.
    publisher.proto(&created(1, 1, GREY)).await;
    publisher
        .proto(&changed(2, 1, 1, OrderStatus::Paid, GREY))
        .await;
    publisher
        .proto(&changed(3, 2, 1, OrderStatus::Shipped, GREY))
        .await;
    svc.mails_once("the greylisted mail was tried and deferred", 1, |m| {
        m.len() == 3 && m[0].attempts >= 1
    })
    .await;

    // Twenty other orders, one mail each.
    let start_others = Instant::now();
    for order in 2..=21i64 {
        publisher
            .proto(&created(
                order as u64 + 2,
                order,
                &format!("c{order}@example.com"),
            ))
            .await;
    }
    eventually("every other order's mail delivered", 120, || async {
        (smtp.accepted().len() == 20).then_some(())
    })
    .await;
    let took = start_others.elapsed();
    println!(
        "20 other orders delivered in {took:?} while {GREY} was greylisted ({} tries so far)",
        smtp.rcpt_commands(GREY)
    );
    assert!(
        took < Duration::from_secs(15),
        "one greylisted recipient slowed everyone down: {took:?}"
    );
    assert!(
        smtp.accepted_seqs(GREY).is_empty(),
        "nothing for the greylisted recipient yet"
    );

    // The greylisted mail is queued with its own schedule; its order's later mails wait for it.
    let grey = svc.mails(1).await;
    assert_eq!(grey.len(), 3);
    assert!(
        grey.iter().all(|m| m.state == MailState::Queued as i32),
        "{grey:?}"
    );
    assert!(
        grey[0].last_error.contains("451"),
        "{:?}",
        grey[0].last_error
    );
    assert!(grey[0].attempts >= 1, "{:?}", grey[0]);
    assert!(grey[0].next_attempt_at.is_some(), "{:?}", grey[0]);
    assert_eq!((grey[1].attempts, grey[2].attempts), (0, 0));

    // It is retried on its own schedule (about 1 s, 2 s, 4 s, ...), each deferral committed.
    let grey = svc
        .mails_once("the greylisted mail retried", 1, |m| m[0].attempts >= 3)
        .await;
    let tries = smtp.rcpt_commands(GREY);
    // A retry may be in flight (asked, not yet recorded).
    assert!(
        (grey[0].attempts as usize..=grey[0].attempts as usize + 1).contains(&tries),
        "{tries} tries, {} recorded",
        grey[0].attempts
    );
    assert!(
        grey[0].last_error.contains("451"),
        "{:?}",
        grey[0].last_error
    );
    assert!(smtp.accepted_seqs(GREY).is_empty());
    assert_eq!(smtp.accepted().len(), 20);

    // The server accepts it now: it goes out on its next attempt, and then its successors, in order.
    smtp.rcpt_reply(GREY, None);
    let accepted_at = Instant::now();
    eventually("the greylisted order's mails delivered", 120, || async {
        (smtp.accepted_seqs(GREY).len() == 3).then_some(())
    })
    .await;
    println!(
        "the greylisted order delivered {:?} after the server began accepting",
        accepted_at.elapsed()
    );
    assert_eq!(smtp.accepted_seqs(GREY), vec![1, 2, 3], "in chain order");
    // The server records a mail just before the mailer commits its "sent" mark.
    let grey = svc
        .mails_once("the greylisted order's mails marked sent", 1, |m| {
            m.iter().all(|m| m.state == MailState::Sent as i32)
        })
        .await;
    assert!(grey[0].attempts >= 4, "{:?}", grey[0]);
    assert_eq!(grey[1].attempts, 1);
    assert!(grey[0].next_attempt_at.is_none());
    assert_eq!(smtp.accepted().len(), 23, "each mail exactly once");
    stop_when_all_sent(svc, &names).await;
}

#[tokio::test]
async fn a_rejected_recipient_or_message_fails_only_that_mail() {
    let smtp = FaultySmtp::start().await;
    smtp.rcpt_reply("nobody@", Some("550 5.1.1 no such user"));
    smtp.data_reply("spam@", Some("554 5.7.1 message rejected as spam"));
    let names = Names::new();
    let cfg = smtp_config(&names, smtp.addr);
    let svc = start(cfg).await;
    let publisher = Publisher::connect(&names.exchange).await;

    publisher.proto(&created(1, 1, "nobody@example.com")).await;
    publisher
        .proto(&changed(2, 1, 1, OrderStatus::Paid, "nobody@example.com"))
        .await;
    publisher.proto(&created(3, 2, "spam@example.com")).await;
    publisher.proto(&created(4, 3, "ok@example.com")).await;

    let failed = |order: i64, count: usize, code: &'static str| {
        let svc = &svc;
        async move {
            let m = svc.mails(order).await;
            (m.len() == count
                && m.iter()
                    .all(|m| m.state == MailState::Failed as i32 && m.last_error.contains(code)))
            .then_some(m)
        }
    };
    let nobody = eventually("the unknown recipient's mails failed", 60, || {
        failed(1, 2, "550")
    })
    .await;
    assert_eq!(nobody.len(), 2);
    assert_eq!(nobody[0].attempts, 1);
    eventually("the rejected message failed", 60, || failed(2, 1, "554")).await;
    svc.mails_once("the good mail delivered", 3, |m| {
        m.len() == 1 && m[0].state == MailState::Sent as i32
    })
    .await;
    assert_eq!(smtp.accepted_seqs("@"), vec![4]);
    stop_when_all_sent(svc, &names).await;
}

/// `RetryMails` puts a FAILED mail back in the queue as if it had never failed: before its
/// order's later mail, which the server deferred and which waits for its next attempt (the
/// order's next mail to send until then, see migration 0006).
#[tokio::test]
async fn a_retried_mail_goes_before_its_orders_later_mail() {
    const WHO: &str = "moved@example.com";
    const TOKEN: &str = "retry-test-admin-token";
    let smtp = FaultySmtp::start().await;
    smtp.rcpt_reply(WHO, Some("550 5.1.1 no such user"));
    let names = Names::new();
    let mut cfg = smtp_config(&names, smtp.addr);
    cfg.server.admin.admin_token = AdminToken::new(Some(TOKEN.to_owned()));
    let svc = start(cfg).await;
    let publisher = Publisher::connect(&names.exchange).await;

    publisher.proto(&created(1, 1, WHO)).await;
    svc.mails_once("the first mail failed", 1, |m| {
        m.len() == 1 && m[0].state == MailState::Failed as i32
    })
    .await;
    smtp.rcpt_reply(WHO, Some("452 4.2.2 mailbox full"));
    publisher
        .proto(&changed(2, 1, 1, OrderStatus::Paid, WHO))
        .await;
    // Three deferrals: its next attempt is 2-4 s away, so no mailer holds it while the retry
    // below runs.
    svc.mails_once("the second mail deferred three times", 1, |m| {
        m.len() == 2 && m[1].attempts >= 3
    })
    .await;

    // The mailbox is fixed; the operator retries the first mail.
    smtp.rcpt_reply(WHO, None);
    let mut admin = svc.admin().await;
    let mut request = Request::new(RetryMailsRequest {
        filter: Some(MailFilter {
            seqs: vec![1],
            ..MailFilter::default()
        }),
        reason: "mailbox restored".into(),
    });
    request.metadata_mut().insert(
        "authorization",
        format!("Bearer {TOKEN}").parse().expect("metadata"),
    );
    let retried = admin
        .retry_mails(request)
        .await
        .expect("RetryMails")
        .into_inner();
    assert_eq!(retried.retried, [1]);
    eventually("both mails delivered", 60, || async {
        (smtp.accepted_seqs(WHO).len() == 2).then_some(())
    })
    .await;
    assert_eq!(smtp.accepted_seqs(WHO), [1, 2], "in chain order");
    let mails = svc
        .mails_once("both marked sent", 1, |m| {
            m.iter().all(|m| m.state == MailState::Sent as i32)
        })
        .await;
    assert_eq!(mails[0].attempts, 2, "{:?}", mails[0]);
    svc.stop().await;
    names.cleanup().await;
}
