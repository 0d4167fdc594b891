//! The message format a relay gives each outbox row, in one place: the body envelope, the
//! message properties and the header names.
//!
//! The body is an [`Envelope`]: the row's chain position (`seq`, `prev_seq`), its type,
//! aggregate id and creation time around the caller's payload bytes. Its field numbers are those
//! of `orders.events.v1.OrderEvent`, whose `payload` (field 5) is an embedded message: a length
//! delimited field encodes the same whether it is declared `bytes` or a message, so the envelope
//! of an `OrderPayload` is byte for byte the `OrderEvent` the orders consumers decode.

use std::collections::BTreeMap;

/// `content_type` of every message a relay publishes: the body is a protobuf [`Envelope`].
pub const CONTENT_TYPE_PROTOBUF: &str = "application/x-protobuf";

/// Header: the aggregate id (AMQP long-long int).
pub const HEADER_AGGREGATE_ID: &str = "aggregate_id";
/// Header: the aggregate's previous seq (AMQP long-long int), absent on its first event.
pub const HEADER_PREV_SEQ: &str = "prev_seq";
/// Header: the W3C trace context of the relay's publish span, a child of the one stored with
/// the row.
pub const HEADER_TRACEPARENT: &str = crate::trace::TRACEPARENT;
/// Header: the W3C trace state, sent with [`HEADER_TRACEPARENT`] when the stored context has one.
/// The outbox stores it among the row's headers under this name.
pub const HEADER_TRACESTATE: &str = crate::trace::TRACESTATE;
/// Header: the aggregate type (AMQP long string), sent with every row's message.
pub const HEADER_AGGREGATE_TYPE: &str = "aggregate_type";
/// Header: the payload's content type when it is not [`CONTENT_TYPE_PROTOBUF`].
pub const HEADER_PAYLOAD_CONTENT_TYPE: &str = "payload_content_type";

/// Header: `"true"` on a message an operator sent again to one queue (outbox-relay's
/// `replay`); absent on every first publish. The message is otherwise the one first published
/// (same body, `message_id`, chain headers), so a consumer that dedupes by seq skips it where it
/// already handled that seq, and takes it where the seq never reached it.
pub const HEADER_REPLAY: &str = "x-outbox-replay";

/// Header: which of a sharded producer's outboxes (databases) the row comes from, its index
/// from 0, as a decimal string. Seqs are unique per outbox, so consumers key events by (shard,
/// seq). The producer sets it on its rows (with [`NewEvent::header`](crate::NewEvent::header))
/// when it writes to several; absent means shard 0. Read it with [`parse_shard`].
pub const HEADER_SHARD: &str = "shard";

/// The shard a [`HEADER_SHARD`] value names (absent: 0), or why it names none: the rule every
/// consumer applies, so that they all agree on which events are the same.
pub fn parse_shard(header: Option<&str>) -> Result<i32, String> {
    match header {
        None => Ok(0),
        Some(v) => v
            .trim()
            .parse::<i32>()
            .ok()
            .filter(|s| *s >= 0)
            .ok_or_else(|| format!("{HEADER_SHARD} header {v:?} is not a shard number")),
    }
}

/// Header names a caller cannot set with [`NewEvent::header`](crate::NewEvent::header): the
/// relay sets them.
pub const RESERVED_HEADERS: [&str; 6] = [
    HEADER_AGGREGATE_ID,
    HEADER_PREV_SEQ,
    HEADER_TRACEPARENT,
    HEADER_TRACESTATE,
    HEADER_AGGREGATE_TYPE,
    HEADER_PAYLOAD_CONTENT_TYPE,
];

/// The body of every published event. Consumers decode it (or the wire-compatible message of
/// their own domain) and apply `payload` in `prev_seq` chain order.
#[derive(Clone, PartialEq, prost::Message)]
pub struct Envelope {
    /// The outbox row's seq: unique per outbox, the consumer's idempotency key.
    #[prost(uint64, tag = "1")]
    pub seq: u64,
    /// The event type.
    #[prost(string, tag = "2")]
    pub r#type: String,
    /// The aggregate id.
    #[prost(int64, tag = "3")]
    pub aggregate_id: i64,
    /// The aggregate's previous event; absent for its first.
    #[prost(uint64, optional, tag = "4")]
    pub prev_seq: Option<u64>,
    /// The caller's payload, as appended.
    #[prost(bytes = "vec", tag = "5")]
    pub payload: Vec<u8>,
    /// When the row was appended, ms since the Unix epoch.
    #[prost(int64, tag = "6")]
    pub ts_ms: i64,
}

/// Parses the `headers` column (a JSON object of strings) as stored by
/// [`NewEvent::header`](crate::NewEvent::header).
pub fn parse_headers(json: &str) -> Result<BTreeMap<String, String>, String> {
    serde_json::from_str(json).map_err(|e| format!("headers are not a JSON object of strings: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    #[test]
    fn envelope_fields_keep_their_numbers() {
        let e = Envelope {
            seq: 1,
            r#type: "T".into(),
            aggregate_id: 2,
            prev_seq: None,
            payload: vec![8, 7],
            ts_ms: 3,
        };
        // seq=1, type="T", aggregate_id=2, payload (field 5, length 2), ts_ms=3.
        assert_eq!(
            e.encode_to_vec(),
            [0x08, 1, 0x12, 1, b'T', 0x18, 2, 0x2a, 2, 8, 7, 0x30, 3]
        );
    }

    #[test]
    fn the_shard_header_names_a_non_negative_shard() {
        assert_eq!(parse_shard(None), Ok(0));
        assert_eq!(parse_shard(Some("0")), Ok(0));
        assert_eq!(parse_shard(Some(" 3 ")), Ok(3));
        for bad in ["-1", "x", "", "1.5", "99999999999"] {
            let err = parse_shard(Some(bad)).expect_err(bad);
            assert!(err.contains("is not a shard number"), "{err}");
        }
    }
}
