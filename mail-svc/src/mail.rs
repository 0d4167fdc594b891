//! The mail text table: the one place that says what a customer is told for each event.

use outbox_proto::orders::v1::OrderStatus;

use crate::event::{Event, Kind};

/// The mail composed for one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailText {
    pub subject: String,
    pub body: String,
    /// The Japanese headline (for the log line).
    pub ja: &'static str,
    /// The English headline (for the log line).
    pub en: &'static str,
}

/// The headline for an event, in Japanese and English.
pub fn headline(kind: Kind) -> (&'static str, &'static str) {
    match kind {
        Kind::Created => ("ご注文を受け付けました", "Your order has been received"),
        Kind::StatusChanged(OrderStatus::Paid) => ("お支払いを確認しました", "Payment confirmed"),
        Kind::StatusChanged(OrderStatus::Shipped) => {
            ("商品を発送しました", "Your order has been shipped")
        }
        Kind::StatusChanged(OrderStatus::Delivered) => {
            ("商品をお届けしました", "Your order has been delivered")
        }
        Kind::StatusChanged(OrderStatus::Cancelled) => (
            "ご注文をキャンセルしました",
            "Your order has been cancelled",
        ),
        // orders-svc never moves an order back to PENDING; should an event say so anyway, the
        // customer still gets exactly one (neutral) mail and the order's chain goes on.
        Kind::StatusChanged(OrderStatus::Pending | OrderStatus::Unspecified) => (
            "ご注文の状況が更新されました",
            "Your order has been updated",
        ),
    }
}

/// Subject and body for `event`.
pub fn compose(event: &Event) -> MailText {
    let (ja, en) = headline(event.kind);
    let id = event.order_id;
    MailText {
        subject: format!("[Order {id}] {ja} / {en}"),
        body: format!(
            "{ja}\n注文番号: {id}\n\n{en}.\nOrder number: {id}\n\n-- \n{}\n",
            idempotency_key(event.shard, event.seq)
        ),
        ja,
        en,
    }
}

/// The key a mail provider can use to drop a second send of the same mail: one per event, and
/// an event is (shard, seq). Shard 0 (every event of an unsharded orders-svc) keeps the key it
/// had before sharding, so a mail queued then and resent now is still recognised.
pub fn idempotency_key(shard: i32, seq: i64) -> String {
    if shard == 0 {
        format!("order-event-{seq}")
    } else {
        format!("order-event-{shard}-{seq}")
    }
}

/// The RFC 5322 Message-ID for a mail, derived from its idempotency key: a resend after a crash
/// carries the same Message-ID.
pub fn message_id(idempotency_key: &str) -> String {
    format!("<{idempotency_key}@outbox>")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_table() {
        let ev = Event {
            shard: 0,
            seq: 3,
            order_id: 43,
            prev_seq: None,
            kind: Kind::Created,
            status: OrderStatus::Pending,
            recipient: "a@example.com".into(),
            ts_ms: 0,
        };
        let m = compose(&ev);
        assert_eq!(
            m.subject,
            "[Order 43] ご注文を受け付けました / Your order has been received"
        );
        assert!(m.body.contains("order-event-3"));
        // Another shard's seq 3 is another event, with a key of its own.
        assert!(
            compose(&Event { shard: 2, ..ev })
                .body
                .contains("order-event-2-3")
        );
        for (status, expected) in [
            (OrderStatus::Paid, "お支払いを確認しました"),
            (OrderStatus::Shipped, "商品を発送しました"),
            (OrderStatus::Delivered, "商品をお届けしました"),
            (OrderStatus::Cancelled, "ご注文をキャンセルしました"),
        ] {
            assert_eq!(
                headline(Kind::StatusChanged(status)).0,
                expected,
                "{status:?}"
            );
        }
        assert_eq!(message_id(&idempotency_key(0, 5)), "<order-event-5@outbox>");
    }
}
