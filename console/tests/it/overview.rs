//! The overview's figures are read at once, each on its own: a service that accepts connections
//! and never answers does not hold back the others' figures, and its own is marked stale.

use crate::common::{Console, Stack, VIEWER, wait_until};

#[tokio::test]
async fn a_service_that_never_answers_does_not_stall_the_other_figures() {
    let stack = Stack::start().await;
    // A second mail-svc address that takes the connection and never says a word.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let silent_addr = silent.local_addr().expect("addr");
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((s, _)) = silent.accept().await {
            open.push(s);
        }
    });
    // Each call may take an hour: only reading at once lets the others show.
    let console = Console::start(
        &stack,
        "1h",
        &["--timeout=1h", &format!("--mail-addr={silent_addr}")],
    )
    .await;
    let viewer = console.signed_in(VIEWER).await;
    wait_until("the answering services' figures", || async {
        let page = viewer.page("/").await;
        page.contains(r#"data-figure="dead-letters">0<"#)
            && page.contains(r#"data-figure="quarantined">0<"#)
            && page.contains(r#"data-figure="backlog">0<"#)
            && page.contains(r#"data-figure="health-orders-svc">SERVING<"#)
    })
    .await;
    // Marked once it is overdue (two refreshes and a second), while the others stay current.
    let stale = format!(r#"data-stale="{silent_addr}""#);
    wait_until("the silent instance marked stale", || async {
        viewer.page("/").await.contains(&stale)
    })
    .await;
    let page = viewer.page("/").await;
    assert!(
        page.contains(r#"data-figure="health-orders-svc">SERVING<"#),
        "the answering services stay current beside the stale one: {page}"
    );

    held.abort();
    console.stop().await;
    stack.cleanup().await;
}
