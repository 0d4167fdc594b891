//! The overview's rates in a real browser: under traffic, the chart drawn from the services'
//! own Prometheus counters shows events committed, published and mailed per second, and the
//! oldest unsent age, each a line and a figure that is not zero.

use std::time::Duration;

use e2e::stack::{Stack, StackConfig};
use fantoccini::Locator;
use outbox_proto::orders::v1::OrderStatus;

use crate::console::{
    ADMIN_TOKEN, ENTER, OPERATOR, el, field, start_browser, start_console, until,
};

/// The number in a rate's legend (`12.5/s`), 0 when there is none yet.
async fn rate(b: &fantoccini::Client, name: &str) -> f64 {
    match b.find(Locator::Css(&format!("[data-rate='{name}']"))).await {
        Ok(e) => e
            .text()
            .await
            .unwrap_or_default()
            .trim_end_matches("/s")
            .parse()
            .unwrap_or(0.0),
        Err(_) => 0.0,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_overview_charts_the_rates_under_traffic() {
    let mut cfg = StackConfig::new("e2e_console_rates");
    cfg.env.push(("ADMIN_TOKEN".into(), ADMIN_TOKEN.into()));
    let dir = cfg.log_dir.clone();
    let mut stack = Stack::start(cfg).await.expect("stack");
    let (console, base) = start_console(&stack, &dir).await;
    let (driver, b, _chromium) = start_browser(&dir).await;
    b.goto(&format!("{base}/")).await.expect("open the console");
    let token = field(&b, "Token").await;
    token.send_keys(OPERATOR).await.expect("type");
    token.send_keys(ENTER).await.expect("enter");
    el(&b, "svg[data-chart='committed']").await;
    el(&b, "svg[data-chart='oldest-unsent']").await;

    // Traffic: orders created, one after another, until every rate shows (bounded).
    let client = stack.orders_client().await.expect("client");
    let traffic = tokio::spawn(async move {
        for id in 1..=600_i64 {
            let _ = client
                .clone()
                .upsert(outbox_proto::orders::v1::UpsertOrderRequest {
                    id,
                    status: OrderStatus::Pending as i32,
                    customer_email: format!("customer{id}@example.com"),
                })
                .await;
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    until("every rate above zero", || async {
        rate(&b, "committed").await > 0.0
            && rate(&b, "published").await > 0.0
            && rate(&b, "mailed").await > 0.0
    })
    .await;
    for line in ["committed", "published", "mailed"] {
        b.find(Locator::Css(&format!("polyline[data-line='{line}']")))
            .await
            .unwrap_or_else(|e| panic!("no {line} line in the chart: {e}"));
    }
    // Read through the same lenient lookup: the figures are swapped every refresh.
    until("the oldest unsent age in seconds", || async {
        match b.find(Locator::Css("[data-rate='oldest-unsent']")).await {
            Ok(e) => e.text().await.is_ok_and(|t| t.ends_with(" s")),
            Err(_) => false,
        }
    })
    .await;

    traffic.abort();
    b.close().await.expect("close the browser");
    driver.stop().await;
    console.stop().await;
    stack.stop().await;
    let _ = std::fs::remove_dir_all(&dir);
}
