//! The rule, as a pure function with its table test.

/// What to do with an event, given its aggregate's watermark (see [`decide`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Decision {
    /// A duplicate: at or below the watermark.
    Skip,
    /// Next in the chain: handle it now.
    Process,
    /// Early: hold it until this seq is processed.
    Hold(i64),
    /// Contradicts the chain: no correct producer sends it.
    Conflict,
}

/// The rule for event `seq` (predecessor `prev`) of an aggregate whose watermark (the seq of its
/// last processed event, `None` before the first) is `watermark`:
///
/// - `seq <= watermark` -> [`Decision::Skip`] (deduplication never expires);
/// - `prev == watermark` -> [`Decision::Process`];
/// - `prev > watermark` (or no watermark yet and `prev` is set) -> [`Decision::Hold`];
/// - otherwise (`seq` above the watermark but `prev` below it, or a first event of an aggregate
///   that has events) -> [`Decision::Conflict`].
pub fn decide(watermark: Option<i64>, seq: i64, prev: Option<i64>) -> Decision {
    match (watermark, prev) {
        (Some(w), _) if seq <= w => Decision::Skip,
        (w, p) if w == p => Decision::Process,
        (None, Some(p)) => Decision::Hold(p),
        (Some(w), Some(p)) if p > w => Decision::Hold(p),
        _ => Decision::Conflict,
    }
}

#[cfg(test)]
mod tests {
    use super::{Decision::*, *};

    #[test]
    fn decision_table() {
        assert_eq!(decide(None, 3, None), Process);
        assert_eq!(decide(None, 5, Some(4)), Hold(4));
        assert_eq!(decide(Some(3), 3, None), Skip);
        assert_eq!(decide(Some(4), 2, Some(1)), Skip);
        assert_eq!(decide(Some(4), 4, Some(3)), Skip);
        assert_eq!(decide(Some(4), 5, Some(4)), Process);
        assert_eq!(decide(Some(4), 9, Some(7)), Hold(7));
        assert_eq!(decide(Some(4), 9, Some(2)), Conflict);
        assert_eq!(decide(Some(4), 9, None), Conflict);
    }
}
