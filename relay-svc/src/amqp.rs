//! The messages relay-svc publishes: [`outbox_relay::publisher`]'s (topology, envelope messages,
//! confirms, return matching), plus [`OrdersEncoder`] for the rows of the first orders outbox.

use lapin::types::FieldTable;
use outbox_proto::orders::events::v1::{self as events, OrderEvent, OrderPayload};
use outbox_relay::{
    db::OutboxRow,
    publisher::{Encoder, Outgoing},
};
use prost::Message;

/// Encodes every row of the orders database: a row written through the `outbox` crate as
/// [`Outgoing::from_row`] does; a row of the first orders outbox (no routing key: written before
/// orders-svc migration 0003, or by a replica of that version) exactly as relay-svc always did —
/// routing key from the event type, body an `OrderEvent` around the decoded `OrderPayload`. A row
/// of an unknown event type or with a payload that is not an `OrderPayload` is refused (and
/// quarantined).
#[derive(Debug, Clone, Copy, Default)]
pub struct OrdersEncoder;

impl Encoder for OrdersEncoder {
    fn encode(&self, row: &OutboxRow) -> Result<Outgoing, String> {
        if row.routing_key.is_some() {
            return Outgoing::from_row(row);
        }
        let Some(routing_key) = events::routing_key(&row.event_type) else {
            return Err(format!("unknown event_type {:?}", row.event_type));
        };
        let payload = OrderPayload::decode(row.payload.as_slice())
            .map_err(|e| format!("payload is not an OrderPayload: {e}"))?;
        let event = OrderEvent {
            seq: row.seq as u64,
            r#type: row.event_type.clone(),
            aggregate_id: row.aggregate_id,
            prev_seq: row.prev_seq.map(|p| p as u64),
            payload: Some(payload),
            ts_ms: row.created_at.timestamp_millis(),
        };
        Ok(Outgoing::with_body(
            row,
            routing_key.to_owned(),
            event.encode_to_vec(),
            FieldTable::default(),
        ))
    }
}
