//! Order events as they arrive: decoding (protobuf, or the hand-published JSON shape `{seq, type, aggregate_id, prev_seq, payload}`) and validation, giving a
//! typed [`Event`] or a [`Poison`] reason that names what is wrong.
//!
//! The rules live here so that a message is judged once, before any database work: a poison
//! message never reaches the per-order transaction and never blocks anything.

use outbox_proto::orders::{
    events::v1::{ORDER_CREATED, ORDER_STATUS_CHANGED, OrderEvent, OrderPayload},
    v1::OrderStatus,
};
use prost::Message;
use serde::Deserialize;

/// Bodies larger than this are dead-lettered unread (a real event is a few hundred bytes).
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// The content type relay-svc publishes.
pub const CONTENT_TYPE_PROTOBUF: &str = "application/x-protobuf";
/// The content type of hand-published events in the JSON shape (`JsonEvent`).
pub const CONTENT_TYPE_JSON: &str = "application/json";

/// What happened to the order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The order's first event.
    Created,
    /// The order moved to a new status.
    StatusChanged(OrderStatus),
}

/// A validated event: every field a mail needs is present and consistent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The orders-svc shard (database) the event comes from: 0 unless orders-svc runs on several
    /// (`SHARDS`). Seqs are unique per shard, so `(shard, seq)` is the event.
    pub shard: i32,
    /// The serial number of the shard's outbox row (> 0).
    pub seq: i64,
    /// The order (> 0).
    pub order_id: i64,
    /// The seq of the order's previous event; `None` exactly for `OrderCreated`.
    pub prev_seq: Option<i64>,
    pub kind: Kind,
    /// The order's status after the event.
    pub status: OrderStatus,
    /// Who gets the mail.
    pub recipient: String,
    pub ts_ms: i64,
}

/// Why a message cannot be processed, ever; travels with it as the `x-death-reason` header.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Poison(pub String);

impl Event {
    /// The `type` string on the wire.
    pub fn event_type(&self) -> &'static str {
        match self.kind {
            Kind::Created => ORDER_CREATED,
            Kind::StatusChanged(_) => ORDER_STATUS_CHANGED,
        }
    }

    /// The event as an `OrderEvent` (how held events are stored).
    pub fn to_proto(&self) -> OrderEvent {
        OrderEvent {
            seq: self.seq as u64,
            r#type: self.event_type().to_owned(),
            aggregate_id: self.order_id,
            prev_seq: self.prev_seq.map(|p| p as u64),
            payload: Some(OrderPayload {
                id: self.order_id,
                status: self.status as i32,
                customer_email: self.recipient.clone(),
                previous_status: 0,
            }),
            ts_ms: self.ts_ms,
        }
    }
}

/// Who may publish: with `trusted` empty (`TRUSTED_PUBLISHERS` unset) everyone; otherwise only
/// messages whose AMQP `user_id` is in the list. RabbitMQ refuses a publish whose `user_id` is not
/// the publishing connection's user, so the property cannot be forged; a message without it is
/// refused too, since anyone can leave it out.
pub fn check_publisher(trusted: &[String], user_id: Option<&str>) -> Result<(), Poison> {
    if trusted.is_empty() {
        return Ok(());
    }
    match user_id {
        None => Err(Poison(
            "no user_id property: TRUSTED_PUBLISHERS is set and only its users' messages are processed"
                .into(),
        )),
        Some(u) if trusted.iter().any(|t| t == u) => Ok(()),
        Some(u) => Err(Poison(format!(
            "publisher {u:?} is not in TRUSTED_PUBLISHERS ({})",
            trusted.join(",")
        ))),
    }
}

/// The aggregate type of every event mail-svc applies: orders-svc's outbox rows are all of type
/// `order`, and the inbox keys its chains by type and id.
pub const AGGREGATE_TYPE: &str = "order";

/// An event's `aggregate_type` header (absent: an order, as from a publisher that predates the
/// header) must name an order: another type's ids are another chain, never mailed.
pub fn check_aggregate_type(header: Option<&str>) -> Result<(), Poison> {
    match header {
        None => Ok(()),
        Some(t) if t == AGGREGATE_TYPE => Ok(()),
        Some(t) => Err(Poison(format!(
            "aggregate_type {t:?} is not {AGGREGATE_TYPE:?} (mail-svc mails orders only)"
        ))),
    }
}

/// The message header orders-svc sets on each event when it writes to several shards (`SHARDS`).
pub const SHARD_HEADER: &str = outbox::wire::HEADER_SHARD;

/// The shard an event's header names (absent: 0), by the outbox crates' one rule.
pub fn shard(header: Option<&str>) -> Result<i32, Poison> {
    outbox::wire::parse_shard(header).map_err(Poison)
}

/// Decodes and validates one message body. `content_type` absent means protobuf (relay-svc's
/// format); `application/json` (any parameters, e.g. `; charset=utf-8`) is the hand-published JSON shape
/// (`{seq, type, aggregate_id, prev_seq, payload}`).
pub fn decode(content_type: Option<&str>, body: &[u8]) -> Result<Event, Poison> {
    if body.len() > MAX_BODY_BYTES {
        return Err(Poison(format!(
            "body {} bytes exceeds {MAX_BODY_BYTES}",
            body.len()
        )));
    }
    let mime = content_type
        .map(|c| {
            c.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_else(|| CONTENT_TYPE_PROTOBUF.to_owned());
    let raw = match mime.as_str() {
        CONTENT_TYPE_PROTOBUF | "application/protobuf" => from_proto(
            OrderEvent::decode(body).map_err(|e| Poison(format!("undecodable protobuf: {e}")))?,
        )?,
        CONTENT_TYPE_JSON => from_json(
            serde_json::from_slice(body).map_err(|e| Poison(format!("undecodable JSON: {e}")))?,
        )?,
        _ => {
            return Err(Poison(format!(
                "unknown content type {:?} (expected {CONTENT_TYPE_PROTOBUF} or {CONTENT_TYPE_JSON})",
                content_type.unwrap_or_default()
            )));
        }
    };
    check(raw, Recipient::Check)
}

/// Decodes an event this service stored itself (a held event). Its recipient was checked when it
/// arrived and is not checked again: an event held by an earlier version, whose address rule
/// differed, is still released and mailed rather than left blocking its order.
pub fn decode_stored(bytes: &[u8]) -> Result<Event, Poison> {
    let ev = OrderEvent::decode(bytes).map_err(|e| Poison(format!("undecodable protobuf: {e}")))?;
    check(from_proto(ev)?, Recipient::AsStored)
}

/// Whether the recipient is judged by the address rule.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Recipient {
    Check,
    AsStored,
}

/// Both wire formats, before the rules.
struct Raw {
    seq: i64,
    event_type: String,
    aggregate_id: i64,
    prev_seq: Option<i64>,
    payload: Option<RawPayload>,
    ts_ms: i64,
}

struct RawPayload {
    id: i64,
    /// `Err` holds the unreadable value, for the reason text.
    status: Result<OrderStatus, String>,
    customer_email: String,
}

fn to_i64(field: &str, value: u64) -> Result<i64, Poison> {
    i64::try_from(value).map_err(|_| Poison(format!("{field} {value} is out of range")))
}

fn from_proto(ev: OrderEvent) -> Result<Raw, Poison> {
    Ok(Raw {
        seq: to_i64("seq", ev.seq)?,
        event_type: ev.r#type,
        aggregate_id: ev.aggregate_id,
        prev_seq: ev.prev_seq.map(|p| to_i64("prev_seq", p)).transpose()?,
        payload: ev.payload.map(|p| RawPayload {
            id: p.id,
            status: OrderStatus::try_from(p.status).map_err(|_| p.status.to_string()),
            customer_email: p.customer_email,
        }),
        ts_ms: ev.ts_ms,
    })
}

/// The hand-published JSON shape (`seq`, `type`, `aggregate_id`, `prev_seq`, `payload`, `ts_ms`);
/// `customer_email` is this project's addition (a mail needs a recipient).
#[derive(Debug, Deserialize)]
struct JsonEvent {
    seq: i64,
    #[serde(rename = "type")]
    event_type: String,
    aggregate_id: i64,
    #[serde(default)]
    prev_seq: Option<i64>,
    #[serde(default)]
    payload: Option<JsonPayload>,
    #[serde(default)]
    ts_ms: i64,
}

#[derive(Debug, Deserialize)]
struct JsonPayload {
    id: i64,
    #[serde(default)]
    status: Option<String>,
    #[serde(default)]
    customer_email: Option<String>,
}

fn from_json(ev: JsonEvent) -> Result<Raw, Poison> {
    Ok(Raw {
        seq: ev.seq,
        event_type: ev.event_type,
        aggregate_id: ev.aggregate_id,
        prev_seq: ev.prev_seq,
        payload: ev.payload.map(|p| RawPayload {
            id: p.id,
            status: match p.status {
                None => Ok(OrderStatus::Unspecified),
                Some(s) => parse_status(&s).ok_or(s),
            },
            customer_email: p.customer_email.unwrap_or_default(),
        }),
        ts_ms: ev.ts_ms,
    })
}

/// `shipped`, `SHIPPED` or `ORDER_STATUS_SHIPPED`.
fn parse_status(s: &str) -> Option<OrderStatus> {
    let upper = s.trim().to_ascii_uppercase();
    let full = if upper.starts_with("ORDER_STATUS_") {
        upper
    } else {
        format!("ORDER_STATUS_{upper}")
    };
    OrderStatus::from_str_name(&full).filter(|s| *s != OrderStatus::Unspecified)
}

fn check(raw: Raw, recipient: Recipient) -> Result<Event, Poison> {
    let bad = |s: String| Err(Poison(s));
    if raw.seq <= 0 {
        return bad(format!("seq must be > 0 (got {})", raw.seq));
    }
    if raw.aggregate_id <= 0 {
        return bad(format!(
            "aggregate_id must be > 0 (got {})",
            raw.aggregate_id
        ));
    }
    if let Some(p) = raw.prev_seq {
        if p <= 0 {
            return bad(format!("prev_seq must be > 0 (got {p})"));
        }
        if p >= raw.seq {
            return bad(format!("prev_seq {p} must be < seq {}", raw.seq));
        }
    }
    let Some(payload) = raw.payload else {
        return bad("payload missing".into());
    };
    if payload.id != raw.aggregate_id {
        return bad(format!(
            "payload.id {} != aggregate_id {}",
            payload.id, raw.aggregate_id
        ));
    }
    let status = payload
        .status
        .map_err(|s| Poison(format!("payload.status {s:?} is not an order status")))?;
    let kind = match raw.event_type.as_str() {
        ORDER_CREATED => {
            if raw.prev_seq.is_some() {
                return bad("OrderCreated must not have a prev_seq".into());
            }
            Kind::Created
        }
        ORDER_STATUS_CHANGED => {
            if raw.prev_seq.is_none() {
                return bad("OrderStatusChanged needs a prev_seq".into());
            }
            if status == OrderStatus::Unspecified {
                return bad("payload.status missing for OrderStatusChanged".into());
            }
            Kind::StatusChanged(status)
        }
        other => return bad(format!("unknown type {other:?}")),
    };
    if payload.customer_email.trim().is_empty() {
        return bad("payload.customer_email missing".into());
    }
    // The same rule orders-svc applies at Upsert: an address it accepted is mailed here.
    if recipient == Recipient::Check
        && let Err(e) = outbox_kit::email::validate(&payload.customer_email)
    {
        return bad(format!("payload.customer_email {e}"));
    }
    Ok(Event {
        shard: 0,
        seq: raw.seq,
        order_id: raw.aggregate_id,
        prev_seq: raw.prev_seq,
        kind,
        status,
        recipient: payload.customer_email,
        ts_ms: raw.ts_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> OrderEvent {
        Event {
            shard: 0,
            seq: 5,
            order_id: 44,
            prev_seq: Some(4),
            kind: Kind::StatusChanged(OrderStatus::Paid),
            status: OrderStatus::Paid,
            recipient: "a@example.com".into(),
            ts_ms: 1,
        }
        .to_proto()
    }

    fn reason(ct: Option<&str>, body: &[u8]) -> String {
        decode(ct, body).expect_err("poison").0
    }

    #[test]
    fn protobuf_round_trip() {
        let ev = decode(None, &good().encode_to_vec()).expect("valid");
        assert_eq!(ev.to_proto(), good());
        assert_eq!(decode_stored(&good().encode_to_vec()), Ok(ev));
    }

    #[test]
    fn json_seed_shape() {
        let body = br#"{"seq":3,"type":"OrderStatusChanged","aggregate_id":43,"prev_seq":2,
            "payload":{"id":43,"status":"shipped","customer_email":"t@example.jp"},"ts_ms":1792076127301}"#;
        let ev = decode(Some("application/json; charset=utf-8"), body).expect("valid");
        assert_eq!(ev.kind, Kind::StatusChanged(OrderStatus::Shipped));
        assert_eq!((ev.seq, ev.order_id, ev.prev_seq), (3, 43, Some(2)));
        let no_mail = br#"{"seq":3,"type":"OrderCreated","aggregate_id":43,"payload":{"id":43,"status":"pending"}}"#;
        assert_eq!(
            reason(Some("application/json"), no_mail),
            "payload.customer_email missing"
        );
    }

    /// Every address the shared rule accepts is one the mailer can use: lettre parses it and
    /// builds a message to it. Checked on edge cases and on random strings over a hostile alphabet.
    #[test]
    fn accepted_addresses_pass_lettre() {
        use rand::{Rng, SeedableRng, rngs::StdRng};
        use std::str::FromStr;
        let check = |addr: &str| {
            if outbox_kit::email::validate(addr).is_err() {
                return false;
            }
            let to = lettre::Address::from_str(addr).unwrap_or_else(|e| {
                panic!("{addr:?} accepted by the rule, refused by lettre: {e}")
            });
            lettre::Message::builder()
                .from("shop@example.com".parse().expect("from"))
                .to(lettre::message::Mailbox::new(None, to))
                .subject("s")
                .body(String::from("b"))
                .unwrap_or_else(|e| panic!("{addr:?}: lettre cannot build a mail: {e}"));
            true
        };
        let local64 = format!("{}@example.com", "a".repeat(64));
        for addr in [
            "a@b.co",
            "!#$%&'*+-/=?^_`{|}~@example.com",
            "o'brien@x-y.example.jp",
            local64.as_str(),
        ] {
            assert!(check(addr), "{addr}");
        }
        let alphabet: Vec<char> = "ab0-._@+'\"!#%&*/=?^`{|}~ ,;:<>()[]\\\0é".chars().collect();
        let mut rng = StdRng::seed_from_u64(11);
        let mut accepted = 0;
        for _ in 0..200_000 {
            let len = rng.random_range(3..16);
            let mut s: String = (0..len)
                .map(|_| alphabet[rng.random_range(0..alphabet.len())])
                .collect();
            if !s.contains('@') {
                s.push_str("@x.co");
            }
            accepted += usize::from(check(&s));
        }
        assert!(
            accepted > 100,
            "the fuzz reaches accepted addresses ({accepted})"
        );
    }

    #[test]
    fn held_events_keep_the_recipient_they_were_stored_with() {
        let mut e = good();
        e.payload.as_mut().unwrap().customer_email = "old_rule@x_y.com".into();
        assert!(decode(None, &e.encode_to_vec()).is_err());
        let ev = decode_stored(&e.encode_to_vec()).expect("stored events are not re-judged");
        assert_eq!(ev.recipient, "old_rule@x_y.com");
        assert!(decode_stored(&[0xff]).is_err());
    }

    #[test]
    fn addresses_orders_svc_refuses_are_poison() {
        let long_local = format!("{}@example.com", "a".repeat(65));
        for bad in [
            "john..doe@example.com",
            ".a@x.com",
            "a@-x.com",
            "a@x..com",
            long_local.as_str(),
        ] {
            let mut e = good();
            e.payload.as_mut().unwrap().customer_email = bad.into();
            let r = reason(None, &e.encode_to_vec());
            assert!(r.starts_with("payload.customer_email "), "{bad}: {r}");
            assert!(r.len() < 200, "the reason does not repeat the address: {r}");
        }
    }

    #[test]
    fn trusted_publishers() {
        let relay = ["relay-svc".to_owned()];
        assert_eq!(check_publisher(&[], None), Ok(()));
        assert_eq!(check_publisher(&[], Some("anyone")), Ok(()));
        assert_eq!(check_publisher(&relay, Some("relay-svc")), Ok(()));
        let no_user = check_publisher(&relay, None).unwrap_err().0;
        assert!(no_user.starts_with("no user_id property"), "{no_user}");
        assert_eq!(
            check_publisher(&relay, Some("guest")).unwrap_err().0,
            "publisher \"guest\" is not in TRUSTED_PUBLISHERS (relay-svc)"
        );
        // Names are compared exactly.
        assert!(check_publisher(&relay, Some("Relay-svc")).is_err());
    }

    #[test]
    fn poison_reasons() {
        let with = |f: &dyn Fn(&mut OrderEvent)| {
            let mut e = good();
            f(&mut e);
            reason(Some(CONTENT_TYPE_PROTOBUF), &e.encode_to_vec())
        };
        assert!(reason(None, &[0xff, 0xff, 0xff]).starts_with("undecodable protobuf"));
        assert!(reason(Some("text/plain"), b"hi").starts_with("unknown content type"));
        assert!(reason(Some("application/json"), b"{").starts_with("undecodable JSON"));
        assert_eq!(
            reason(None, &vec![0u8; MAX_BODY_BYTES + 1]),
            format!("body {} bytes exceeds {MAX_BODY_BYTES}", MAX_BODY_BYTES + 1)
        );
        assert_eq!(with(&|e| e.r#type = "Foo".into()), "unknown type \"Foo\"");
        assert_eq!(with(&|e| e.seq = 0), "seq must be > 0 (got 0)");
        assert_eq!(
            with(&|e| e.seq = u64::MAX),
            format!("seq {} is out of range", u64::MAX)
        );
        assert_eq!(
            with(&|e| e.aggregate_id = -1),
            "aggregate_id must be > 0 (got -1)"
        );
        assert_eq!(
            with(&|e| e.prev_seq = Some(9)),
            "prev_seq 9 must be < seq 5"
        );
        assert_eq!(with(&|e| e.payload = None), "payload missing");
        assert_eq!(
            with(&|e| e.payload.as_mut().unwrap().id = 7),
            "payload.id 7 != aggregate_id 44"
        );
        assert_eq!(
            with(&|e| e.payload.as_mut().unwrap().customer_email.clear()),
            "payload.customer_email missing"
        );
        assert_eq!(
            with(&|e| e.prev_seq = None),
            "OrderStatusChanged needs a prev_seq"
        );
        assert!(with(&|e| e.payload.as_mut().unwrap().status = 99).contains("not an order status"));
    }

    #[test]
    fn the_shard_header_names_the_shard() {
        assert_eq!(shard(None), Ok(0));
        assert_eq!(shard(Some("0")), Ok(0));
        assert_eq!(shard(Some("3")), Ok(3));
        let bad = shard(Some("x")).expect_err("not a number");
        assert!(bad.0.contains("\"x\" is not a shard number"), "{bad}");
    }
}
