//! The real `/metrics` answer of a running orders-svc: every family has HELP text and a TYPE,
//! every metric of `orders_svc::metrics::METRICS` is there (counters from the start, at 0),
//! and the `process_*` figures and `build_info` are exported. The test runs in a process of its own, so the
//! process-wide recorder holds this service's metrics only, and no other test's calls.

use orders_svc::metrics::{METRICS, OUTCOMES, UPSERTS};
use outbox_proto::orders::v1::OrderStatus;
use outbox_testkit::{Exposition, run_in_own_process, scrape};

use crate::common::{req, start};

#[tokio::test]
async fn every_metric_exported_with_help() {
    // The counters start at 0 only in a process no other test of this binary has recorded in.
    if run_in_own_process(concat!(module_path!(), "::every_metric_exported_with_help")) {
        return;
    }
    let mut t = start().await;
    let addr = t.metrics_addr;

    // Before any call: the counters are there at 0, one series per outcome.
    let before = Exposition::parse(&scrape(addr).await.expect("scrape"));
    assert_eq!(before.hygiene_problems("orders-svc"), Vec::<String>::new());
    for outcome in OUTCOMES {
        let label = format!("outcome=\"{outcome}\"");
        assert!(
            before
                .samples
                .iter()
                .any(|(n, l, v)| n == UPSERTS && *l == label && *v == 0.0),
            "{UPSERTS}{{{label}}} 0 before any call"
        );
    }

    t.client
        .upsert(req(1, OrderStatus::Pending, "a@example.com"))
        .await
        .expect("upsert");
    let after = Exposition::parse(&scrape(addr).await.expect("scrape"));
    assert_eq!(after.hygiene_problems("orders-svc"), Vec::<String>::new());
    assert_eq!(after.declared_problems(METRICS), Vec::<String>::new());
    assert!(
        after
            .samples
            .iter()
            .any(|(n, l, v)| n == UPSERTS && l == "outcome=\"changed\"" && *v == 1.0),
        "the call is counted"
    );
    t.shutdown.cancel();
}
