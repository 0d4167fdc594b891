//! W3C trace context (`traceparent`) carried across the hop: orders-svc stores it with the
//! outbox row, relay-svc sends it as an AMQP header, mail-svc continues it. The trace id is what
//! an operator greps across the three services' logs.

use rand::Rng;

/// A parsed `traceparent`: `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceParent {
    /// The trace's id: 32 lowercase hex digits.
    pub trace_id: String,
    /// The id of the span this one continues: 16 lowercase hex digits.
    pub parent_id: String,
    /// The trace flags: 2 hex digits (`01` = sampled).
    pub flags: String,
}

impl TraceParent {
    /// Parses a header value; `None` when it is not a valid version-00 traceparent.
    pub fn parse(value: &str) -> Option<Self> {
        let mut parts = value.trim().split('-');
        let (version, trace_id, parent_id, flags) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        let hex = |s: &str, len: usize| {
            s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        };
        let valid = parts.next().is_none()
            && version == "00"
            && hex(trace_id, 32)
            && hex(parent_id, 16)
            && hex(flags, 2)
            && trace_id.bytes().any(|b| b != b'0')
            && parent_id.bytes().any(|b| b != b'0');
        valid.then(|| Self {
            trace_id: trace_id.to_owned(),
            parent_id: parent_id.to_owned(),
            flags: flags.to_owned(),
        })
    }

    /// A new trace (sampled), for a request that arrived without one.
    pub fn new_root() -> Self {
        let mut rng = rand::rng();
        Self {
            trace_id: format!("{:032x}", rng.random_range(1..=u128::MAX)),
            parent_id: format!("{:016x}", rng.random_range(1..=u64::MAX)),
            flags: "01".to_owned(),
        }
    }

    /// The same trace with a new span of ours as the parent of whatever comes next.
    pub fn child(&self) -> Self {
        Self {
            trace_id: self.trace_id.clone(),
            parent_id: format!("{:016x}", rand::rng().random_range(1..=u64::MAX)),
            flags: self.flags.clone(),
        }
    }

    /// Continues `header` when it is a valid traceparent, or starts a new trace.
    pub fn continue_or_start(header: Option<&str>) -> Self {
        header
            .and_then(Self::parse)
            .map(|t| t.child())
            .unwrap_or_else(Self::new_root)
    }
}

impl std::fmt::Display for TraceParent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "00-{}-{}-{}", self.trace_id, self.parent_id, self.flags)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_continues() {
        let header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
        let parsed = TraceParent::parse(header).expect("valid");
        assert_eq!(parsed.to_string(), header);
        let next = TraceParent::continue_or_start(Some(header));
        assert_eq!(next.trace_id, parsed.trace_id);
        assert_ne!(next.parent_id, parsed.parent_id);
        assert!(TraceParent::parse(&next.to_string()).is_some());
    }

    #[test]
    fn rejects_garbage_and_starts_fresh() {
        for bad in [
            "",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
        ] {
            assert!(TraceParent::parse(bad).is_none(), "{bad}");
        }
        let fresh = TraceParent::continue_or_start(Some("nonsense"));
        assert!(TraceParent::parse(&fresh.to_string()).is_some());
    }
}
