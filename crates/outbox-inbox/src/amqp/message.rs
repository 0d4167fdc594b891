//! The inbox envelope of a message an outbox relay published, in the format of
//! [`outbox::wire`].

use lapin::{BasicProperties, message::Delivery, types::AMQPValue};
use outbox::wire;
use prost::Message;

use crate::Envelope;

impl Envelope {
    /// The envelope of a delivery published by `outbox-relay` (format: [`outbox::wire`]): the
    /// body is a [`wire::Envelope`], whose `aggregate_id`, `seq`, `prev_seq` and `payload` (the
    /// bytes appended with `outbox::NewEvent`) it takes, with the `traceparent` header and the
    /// producer's shard ([`wire::HEADER_SHARD`], absent: 0) and the aggregate's type
    /// ([`wire::HEADER_AGGREGATE_TYPE`], absent: empty).
    ///
    /// `Err` says why the message can never be applied: a content type other than
    /// [`wire::CONTENT_TYPE_PROTOBUF`], a body that is not an envelope, a `seq` that is not a
    /// positive `i64`, a `prev_seq` not below it (it would wait for itself or a later event), a
    /// shard header that names no shard.
    /// Dead-letter such a message with that reason, before any database work.
    ///
    /// An inbox envelope has no event type (a held event keeps only its payload): a handler
    /// that needs the type finds it in the payload, e.g. a JSON object tagged with it.
    pub fn from_delivery(delivery: &Delivery) -> Result<Self, String> {
        from_message(&delivery.properties, &delivery.data)
    }
}

fn from_message(properties: &BasicProperties, body: &[u8]) -> Result<Envelope, String> {
    if let Some(ct) = properties.content_type()
        && ct.as_str() != wire::CONTENT_TYPE_PROTOBUF
    {
        return Err(format!(
            "content type {:?}, not {} (an outbox envelope)",
            ct.as_str(),
            wire::CONTENT_TYPE_PROTOBUF
        ));
    }
    let e = wire::Envelope::decode(body).map_err(|e| format!("not an outbox envelope: {e}"))?;
    let seq = i64::try_from(e.seq)
        .ok()
        .filter(|s| *s > 0)
        .ok_or_else(|| format!("seq {} is not a positive i64", e.seq))?;
    let prev_seq = match e.prev_seq {
        None => None,
        Some(p) => Some(
            i64::try_from(p)
                .ok()
                .filter(|p| (1..seq).contains(p))
                .ok_or_else(|| format!("prev_seq {p} is not a positive seq below seq {seq}"))?,
        ),
    };
    let header = |name: &str| {
        properties
            .headers()
            .as_ref()
            .and_then(|h| h.inner().get(name))
            .and_then(|v| match v {
                AMQPValue::LongString(s) => {
                    Some(String::from_utf8_lossy(s.as_bytes()).into_owned())
                }
                AMQPValue::ShortString(s) => Some(s.as_str().to_owned()),
                _ => None,
            })
    };
    let shard = wire::parse_shard(header(wire::HEADER_SHARD).as_deref())?;
    Ok(Envelope::new(e.aggregate_id, seq, prev_seq, e.payload)
        .with_shard(shard)
        .with_aggregate_type(header(wire::HEADER_AGGREGATE_TYPE).unwrap_or_default())
        .with_traceparent(header(wire::HEADER_TRACEPARENT)))
}

#[cfg(test)]
mod tests {
    use lapin::types::FieldTable;

    use super::*;

    fn body(seq: u64, prev_seq: Option<u64>) -> Vec<u8> {
        wire::Envelope {
            seq,
            r#type: "InvoicePaid".into(),
            aggregate_id: 7,
            prev_seq,
            payload: br#"{"type":"InvoicePaid"}"#.to_vec(),
            ts_ms: 1,
        }
        .encode_to_vec()
    }

    fn shard_header(value: &str) -> FieldTable {
        let mut headers = FieldTable::default();
        headers.insert(
            wire::HEADER_SHARD.into(),
            AMQPValue::LongString(value.into()),
        );
        headers
    }

    fn protobuf() -> BasicProperties {
        BasicProperties::default().with_content_type(wire::CONTENT_TYPE_PROTOBUF.into())
    }

    #[test]
    fn a_relayed_message_gives_its_chain_position_payload_and_trace() {
        let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let mut headers = FieldTable::default();
        headers.insert(
            wire::HEADER_TRACEPARENT.into(),
            AMQPValue::LongString(tp.into()),
        );
        let mut delivery =
            Delivery::mock(1, "".into(), "invoice.paid".into(), false, body(9, Some(4)));
        delivery.properties = protobuf().with_headers(headers);
        let e = Envelope::from_delivery(&delivery).expect("valid");
        let want = Envelope::new(7, 9, Some(4), br#"{"type":"InvoicePaid"}"#.to_vec())
            .with_traceparent(Some(tp.into()));
        assert_eq!(e, want);
        // A first event; no content type and no headers are accepted too.
        let first = from_message(&BasicProperties::default(), &body(3, None)).expect("valid");
        assert_eq!(
            (first.shard, first.seq, first.prev_seq, first.traceparent),
            (0, 3, None, None)
        );
        // A sharded producer's event names its shard.
        let sharded = from_message(&protobuf().with_headers(shard_header("2")), &body(3, None));
        assert_eq!(sharded.expect("valid").chain(), crate::Chain::new(2, "", 7));
    }

    #[test]
    fn what_can_never_apply_is_refused_with_the_reason() {
        let json = BasicProperties::default().with_content_type("application/json".into());
        for (props, body, says) in [
            (json, body(9, None), "content type \"application/json\""),
            (
                protobuf(),
                b"not an envelope".to_vec(),
                "not an outbox envelope",
            ),
            (protobuf(), body(0, None), "seq 0 is not a positive i64"),
            (protobuf(), body(u64::MAX, None), "is not a positive i64"),
            (
                protobuf(),
                body(9, Some(9)),
                "prev_seq 9 is not a positive seq below seq 9",
            ),
            (protobuf(), body(9, Some(0)), "prev_seq 0"),
            (
                protobuf().with_headers(shard_header("-1")),
                body(9, None),
                "shard header \"-1\" is not a shard number",
            ),
        ] {
            let err = from_message(&props, &body).expect_err(says);
            assert!(err.contains(says), "{err:?} should say {says:?}");
        }
    }
}
