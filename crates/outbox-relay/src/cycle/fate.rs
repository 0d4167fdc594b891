//! The per-row rule table: what becomes of a row after its wave. Only a broken connection is a
//! failure of the whole relay; everything else concerns the row's order alone.

use crate::publisher::Outcome;

/// What becomes of one row after its wave (or without one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fate {
    /// Acked and not returned: delete it.
    Delete,
    /// It can never be encoded: move it to quarantine; its order waits for an operator.
    Quarantine(String),
    /// Returned or nacked: it stays; its order waits for its own retry.
    HoldOrder(String),
    /// It stays and is read again at once: an earlier event of its order was not delivered in
    /// this batch, or the wave was not answered (the connection broke: a global failure).
    Stay,
}

/// The rule for one row, from what happened to it. Only a broken connection (no answer) is a
/// failure of the whole relay; everything else concerns this row's order alone.
pub(crate) fn decide(encoded: Result<Option<&Outcome>, &str>) -> Fate {
    match encoded {
        Err(reason) => Fate::Quarantine(reason.to_owned()),
        Ok(None) => Fate::Stay,
        Ok(Some(Outcome::Delivered)) => Fate::Delete,
        Ok(Some(Outcome::Returned {
            reply_code,
            reply_text,
        })) => Fate::HoldOrder(format!("returned by the broker: {reply_code} {reply_text}")),
        Ok(Some(Outcome::Nacked)) => Fate::HoldOrder("nacked by the broker".into()),
        Ok(Some(Outcome::Failed(_))) => Fate::Stay,
    }
}

#[cfg(test)]
mod tests {
    use super::{Fate, decide};
    use crate::publisher::Outcome;

    #[test]
    fn per_row_problems_concern_only_their_order() {
        let returned = Outcome::Returned {
            reply_code: 312,
            reply_text: "NO_ROUTE".into(),
        };
        let cases = [
            (Ok(Some(&Outcome::Delivered)), Fate::Delete),
            (
                Ok(Some(&returned)),
                Fate::HoldOrder("returned by the broker: 312 NO_ROUTE".into()),
            ),
            (
                Ok(Some(&Outcome::Nacked)),
                Fate::HoldOrder("nacked by the broker".into()),
            ),
            // No answer: the connection broke, a failure of the whole relay (backoff, reconnect).
            (Ok(Some(&Outcome::Failed("closed".into()))), Fate::Stay),
            // Not sent (behind an earlier event of its order, or the wave never went out).
            (Ok(None), Fate::Stay),
            (
                Err("unknown event_type"),
                Fate::Quarantine("unknown event_type".into()),
            ),
        ];
        for (input, want) in cases {
            assert_eq!(decide(input), want, "{input:?}");
        }
    }
}
