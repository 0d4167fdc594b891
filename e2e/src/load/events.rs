//! Order events as relay-svc publishes them (body and properties), and publishing many of them
//! with confirms to pre-load a queue ([`preload`], kit's).

use lapin::{
    BasicProperties,
    types::{AMQPValue, FieldTable},
};
use outbox_proto::orders::{
    events::v1::{ORDER_CREATED, ORDER_STATUS_CHANGED, OrderEvent, OrderPayload},
    v1::OrderStatus,
};

/// A realistic event body: what relay-svc publishes for a status change.
pub fn sample_event(seq: u64, order: i64, prev_seq: Option<u64>) -> OrderEvent {
    OrderEvent {
        seq,
        r#type: if prev_seq.is_some() {
            ORDER_STATUS_CHANGED
        } else {
            ORDER_CREATED
        }
        .into(),
        aggregate_id: order,
        prev_seq,
        payload: Some(OrderPayload {
            id: order,
            status: if prev_seq.is_some() {
                OrderStatus::Paid
            } else {
                OrderStatus::Pending
            } as i32,
            customer_email: format!("customer{order}@example.com"),
            previous_status: if prev_seq.is_some() {
                OrderStatus::Pending as i32
            } else {
                0
            },
        }),
        ts_ms: 1_792_076_127_301,
    }
}

/// Persistent protobuf messages, as relay-svc publishes them.
pub fn persistent() -> BasicProperties {
    BasicProperties::default()
        .with_delivery_mode(2)
        .with_content_type("application/x-protobuf".into())
}

/// The properties relay-svc gives an event (its wire format: message id, type, timestamp, app
/// id and the chain headers), so the ceiling asks the broker for the same work per message.
pub fn event_properties(
    seq: u64,
    order: i64,
    prev_seq: Option<u64>,
    event_type: &str,
) -> BasicProperties {
    let mut headers = FieldTable::default();
    headers.insert("aggregate_id".into(), AMQPValue::LongLongInt(order));
    if let Some(p) = prev_seq {
        headers.insert("prev_seq".into(), AMQPValue::LongLongInt(p as i64));
    }
    persistent()
        .with_message_id(seq.to_string().into())
        .with_type(event_type.into())
        .with_timestamp(1_792_076_127)
        .with_app_id("relay-svc".into())
        .with_headers(headers)
}

pub use outbox_testkit::preload;
