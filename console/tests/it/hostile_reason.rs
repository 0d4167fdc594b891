//! A reason the audit row could not hold is refused at the form, before anything is sent: a
//! replay whose reason holds a NUL byte (or any control character) is a 400 naming the reason,
//! and neither reaches the broker nor leaves an audit row.

use outbox_proto::orders::v1::OrderStatus;
use reqwest::StatusCode;

use crate::common::{Console, OPERATOR, Stack, actions, form_token, purge};

#[tokio::test]
async fn a_replay_with_a_control_character_in_its_reason_is_refused_and_sends_nothing() {
    let mut stack = Stack::start().await;
    let seq = stack.upsert(6, OrderStatus::Pending).await;
    stack.wait_until_sent("order 6 mailed", 6, &[seq]).await;
    let console = Console::start(&stack, "1s", &[]).await;
    let op = console.signed_in(OPERATOR).await;
    // mail-svc stopped: whatever a replay sent would stay in its queue, to be counted.
    stack.stop_mail().await;

    for hostile in ["queue purged\0INC-9", "INC-9\u{1b}[2K", "two\r\nlines"] {
        let dry = op.page("/replay?shard=0&order=6").await;
        let token = form_token(&dry, "/replay");
        let refused = op
            .post(
                "/replay",
                &[
                    ("csrf", &token),
                    ("order", "6"),
                    ("shard", "0"),
                    ("reason", hostile),
                ],
            )
            .await;
        assert_eq!(
            refused.status,
            StatusCode::BAD_REQUEST,
            "{hostile:?}: {refused:?}"
        );
        assert!(
            refused.body.contains("reason: control character"),
            "{hostile:?}: {}",
            refused.body
        );
    }

    assert_eq!(purge(&stack.names.queue).await, 0, "nothing published");
    assert!(
        actions(&stack.orders_pool).await.is_empty(),
        "nothing recorded"
    );
    console.stop().await;
    stack.cleanup().await;
}
