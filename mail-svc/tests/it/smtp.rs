//! MAILER=smtp against a real (tiny) SMTP server behind a proxy: while the server is down the
//! mails stay queued; when it is back, every mail is delivered exactly once, in order per order,
//! with a Message-ID derived from the seq.

use std::collections::HashMap;

use outbox_proto::{mail::v1::MailState, orders::v1::OrderStatus};
use outbox_testkit::Proxy;

use crate::common::{Names, Publisher, SmtpSink, changed, created, eventually, smtp_config, start};

#[tokio::test]
async fn smtp_down_then_up_delivers_every_mail_once_in_order() {
    let sink = SmtpSink::start().await;
    let proxy = Proxy::start(&sink.addr.to_string()).await.expect("proxy");
    let names = Names::new();
    let cfg = smtp_config(&names, proxy.addr());
    let svc = start(cfg).await;
    let publisher = Publisher::connect(&names.exchange).await;

    // Up: one mail goes through.
    publisher.proto(&created(1, 1, "a@example.com")).await;
    // Sent as mail-svc sees it, not only received: a cut between the sink's receipt and its
    // answer reaching mail-svc would leave the first mail unsent (and send it again later).
    eventually("first mail sent", 60, || async {
        (sink.mails().len() == 1 && svc.status().await.unsent_mails == 0).then_some(())
    })
    .await;

    // Down (the first mail's session has ended, so nothing can be half-sent).
    proxy.cut();
    let mut expected: HashMap<String, Vec<u64>> =
        HashMap::from([("a@example.com".into(), vec![1])]);
    let mut seq = 1;
    let mut last: HashMap<i64, u64> = HashMap::from([(1, 1)]);
    for round in 0..4 {
        for order in 1..=3i64 {
            seq += 1;
            let email = format!("{}@example.com", ["a", "b", "c"][order as usize - 1]);
            let ev = match last.get(&order) {
                None => created(seq, order, &email),
                Some(&prev) => changed(
                    seq,
                    prev,
                    order,
                    [
                        OrderStatus::Paid,
                        OrderStatus::Shipped,
                        OrderStatus::Delivered,
                        OrderStatus::Cancelled,
                    ][round],
                    &email,
                ),
            };
            last.insert(order, seq);
            expected.entry(email).or_default().push(seq);
            publisher.proto(&ev).await;
        }
    }
    let total = seq as usize;
    svc.status_once("all processed while SMTP is down", |s| {
        s.processed as usize == total
    })
    .await;
    // The mailer keeps failing and retrying; nothing is lost or marked sent.
    let queued = svc.status().await.unsent_mails;
    assert_eq!(
        queued as usize,
        total - 1,
        "mails wait while the server is down"
    );
    assert_eq!(sink.mails().len(), 1);

    proxy.restore();
    eventually("every mail delivered", 120, || async {
        (svc.status().await.unsent_mails == 0).then_some(())
    })
    .await;
    let received = sink.mails();
    assert_eq!(received.len(), total, "each mail exactly once");
    let mut got: HashMap<String, Vec<u64>> = HashMap::new();
    for m in &received {
        let id = m.header("Message-ID").expect("Message-ID");
        let seq: u64 = id
            .strip_prefix("<order-event-")
            .and_then(|s| s.strip_suffix("@outbox>"))
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("Message-ID {id} is not derived from the seq"));
        assert_eq!(
            m.header("X-Idempotency-Key").as_deref(),
            Some(format!("order-event-{seq}").as_str())
        );
        assert_eq!(m.to.len(), 1);
        let rcpt = m.to[0].trim_matches(['<', '>']).to_owned();
        got.entry(rcpt).or_default().push(seq);
    }
    assert_eq!(
        got, expected,
        "per recipient (= per order): every seq once, in chain order"
    );
    for order in 1..=3 {
        // A server that is down is no mail's fault: the outage charged no attempt.
        assert!(
            svc.mails(order)
                .await
                .iter()
                .all(|m| m.state == MailState::Sent as i32 && m.attempts == 1)
        );
    }
    // Each mail keeps the server's own answer to it: the receipt the sink numbered.
    let replies: Vec<String> =
        sqlx::query_scalar("select smtp_reply from mails where sent_at is not null order by seq")
            .fetch_all(&svc.pool)
            .await
            .expect("replies");
    let distinct: std::collections::HashSet<&String> = replies.iter().collect();
    assert_eq!(replies.len(), total);
    assert_eq!(distinct.len(), total, "one answer per mail: {replies:?}");
    assert!(
        replies.iter().all(|r| r.starts_with("250 OK queued as ")),
        "{replies:?}"
    );
    svc.stop().await;
    names.cleanup().await;
}

#[tokio::test]
async fn a_permanently_rejected_mail_is_marked_failed_and_blocks_nothing() {
    let sink = SmtpSink::start().await;
    let names = Names::new();
    let cfg = smtp_config(&names, sink.addr);
    let svc = start(cfg).await;
    let publisher = Publisher::connect(&names.exchange).await;
    publisher.proto(&created(1, 9, "bounce@example.com")).await;
    publisher
        .proto(&changed(2, 1, 9, OrderStatus::Paid, "bounce@example.com"))
        .await;
    publisher.proto(&created(3, 10, "ok@example.com")).await;
    let mails = svc
        .mails_once("the bounced order's mails failed", 9, |m| {
            m.len() == 2 && m.iter().all(|m| m.state == MailState::Failed as i32)
        })
        .await;
    assert!(
        mails[0].last_error.contains("550"),
        "{:?}",
        mails[0].last_error
    );
    svc.mails_once("the other order's mail delivered", 10, |m| {
        m.len() == 1 && m[0].state == MailState::Sent as i32
    })
    .await;
    assert_eq!(svc.status().await.unsent_mails, 0);
    assert_eq!(sink.mails().len(), 1);
    svc.stop().await;
    names.cleanup().await;
}
