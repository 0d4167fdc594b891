//! The real `/metrics` answer of a running mail-svc (SMTP mailer, as in production) after it
//! mailed an event: every family has HELP text and a TYPE, every metric of
//! `mail_svc::metrics::METRICS` is there (counters from the start, at 0), and the `process_*`
//! figures and `build_info` are exported. The test runs in a process of its own, so the
//! process-wide recorder holds this service's metrics only, and no other test's mails.

use mail_svc::metrics::{DEAD_LETTERED, METRICS, SENT};
use outbox_support::metrics::Kind;
use outbox_testkit::{Exposition, run_in_own_process, scrape};

use crate::common::{Names, Publisher, SmtpSink, created, eventually, smtp_config, start};

#[tokio::test]
async fn every_metric_exported_with_help() {
    // The counters start at 0 only in a process no other test of this binary has recorded in.
    if run_in_own_process(concat!(module_path!(), "::every_metric_exported_with_help")) {
        return;
    }
    let sink = SmtpSink::start().await;
    let names = Names::new();
    let cfg = smtp_config(&names, sink.addr);
    let svc = start(cfg).await;

    let before = Exposition::parse(&scrape(svc.metrics_addr).await.expect("scrape"));
    assert_eq!(before.hygiene_problems("mail-svc"), Vec::<String>::new());
    for m in METRICS.iter().filter(|m| m.kind == Kind::Counter) {
        // A labelled counter starts at 0 for each of its values.
        let series: Vec<String> = match m.label {
            None => vec![String::new()],
            Some((label, values)) => values.iter().map(|v| format!("{label}=\"{v}\"")).collect(),
        };
        for labels in series {
            assert!(
                before
                    .samples
                    .iter()
                    .any(|(n, l, v)| n == m.name && *l == labels && *v == 0.0),
                "{}{{{labels}}} 0 before anything happened",
                m.name
            );
        }
    }

    let publisher = Publisher::connect(&names.exchange).await;
    publisher
        .proto(&created(1, 61, "metrics@example.com"))
        .await;
    let after = eventually("the mail is sent and every figure reported", 60, || async {
        let e = Exposition::parse(&scrape(svc.metrics_addr).await.expect("scrape"));
        let families = e.families();
        let sent = e.samples.iter().any(|(n, _, v)| n == SENT && *v == 1.0);
        (sent && METRICS.iter().all(|m| families.contains(m.name))).then_some(e)
    })
    .await;
    assert_eq!(after.hygiene_problems("mail-svc"), Vec::<String>::new());
    assert_eq!(after.declared_problems(METRICS), Vec::<String>::new());
    assert!(
        after
            .samples
            .iter()
            .any(|(n, _, v)| n == DEAD_LETTERED && *v == 0.0),
        "nothing dead-lettered, and the counter says so"
    );
    assert_eq!(sink.mails().len(), 1);
    svc.stop().await;
    names.cleanup().await;
}
