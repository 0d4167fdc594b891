//! The real `/metrics` answer of a running relay-svc after it published: every family has HELP
//! text and a TYPE, every metric of `outbox_relay::status::METRICS` is there (counters from the
//! start, at 0, one series per failure reason), and the `process_*` figures and `build_info` are
//! exported. The test runs in a process of its own, so the process-wide recorder holds this
//! service's metrics (and those of the orders-svc that writes the outbox) only, and no other
//! test's failures.

use outbox_proto::orders::v1::OrderStatus;
use outbox_relay::status::{FAILED_REASONS, METRICS, names};
use outbox_testkit::{Exposition, run_in_own_process, scrape};

use crate::common::*;

#[tokio::test]
async fn every_metric_exported_with_help() {
    // The counters start at 0 only in a process no other test of this binary has recorded in.
    if run_in_own_process(concat!(module_path!(), "::every_metric_exported_with_help")) {
        return;
    }
    let orders = Orders::start().await;
    let exchange = outbox_testkit::unique("relay_metrics_ex");
    let consumer = Consumer::start(&exchange, Some("#")).await;
    let relay = Relay::start_for(&orders, &exchange).await;

    let before = Exposition::parse(&scrape(relay.metrics_addr).await.expect("scrape"));
    assert_eq!(before.hygiene_problems("relay-svc"), Vec::<String>::new());
    for reason in FAILED_REASONS {
        let label = format!("reason=\"{reason}\"");
        assert!(
            before
                .samples
                .iter()
                .any(|(n, l, v)| n == names::FAILED && *l == label && *v == 0.0),
            "{}{{{label}}} 0 before any failure",
            names::FAILED
        );
    }

    let seq = orders.upsert(7, OrderStatus::Pending).await;
    wait_until("the event is consumed", || async {
        consumer.has_all(&[seq])
    })
    .await;
    // The counters follow the confirm; the backlog gauges follow the cycle that drained it.
    wait_until("the relay reported the publish", || async {
        let text = scrape(relay.metrics_addr).await.expect("scrape");
        let e = Exposition::parse(&text);
        let families = e.families();
        METRICS.iter().all(|m| families.contains(m.name))
            && e.samples
                .iter()
                .any(|(n, _, v)| n == names::PUBLISHED && *v >= 1.0)
    })
    .await;
    let after = Exposition::parse(&scrape(relay.metrics_addr).await.expect("scrape"));
    assert_eq!(after.hygiene_problems("relay-svc"), Vec::<String>::new());
    assert_eq!(after.declared_problems(METRICS), Vec::<String>::new());
    consumer.cleanup().await;
}
