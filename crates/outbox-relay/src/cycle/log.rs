//! The lines an operator greps: seq ranges, and one line per published event with its trace id.

use std::collections::HashSet;

use crate::db::OutboxRow;

/// `6..8` for contiguous seqs, `6..12 (5 events)` otherwise (`seqs` non-empty, any order).
pub(super) fn seq_ranges(seqs: &[i64]) -> String {
    let min = seqs.iter().min().copied().unwrap_or_default();
    let max = seqs.iter().max().copied().unwrap_or_default();
    if (max - min + 1) as usize == seqs.len() {
        format!("{min}..{max}")
    } else {
        format!("{min}..{max} ({} events)", seqs.len())
    }
}

/// One line per published event with its trace id, so an operator can follow one Upsert's trace
/// from orders-svc through the relay to mail-svc by grepping the id.
pub(super) fn log_published_events<'a>(
    batch: impl Iterator<Item = &'a OutboxRow>,
    published: &[i64],
) {
    if !tracing::enabled!(tracing::Level::INFO) {
        return;
    }
    let published: HashSet<i64> = published.iter().copied().collect();
    for row in batch.filter(|r| published.contains(&r.seq)) {
        let trace_id = row.trace().map(|t| t.trace_id()).unwrap_or_default();
        tracing::info!(
            trace_id = %trace_id,
            "relay: sent seq={} order={} type={}",
            row.seq,
            row.aggregate_id,
            row.event_type
        );
    }
}

#[cfg(test)]
mod tests {
    use super::seq_ranges;

    #[test]
    fn ranges_read_first_seq_dot_dot_last_seq() {
        assert_eq!(seq_ranges(&[3]), "3..3");
        assert_eq!(seq_ranges(&[6, 7, 8]), "6..8");
        assert_eq!(seq_ranges(&[8, 6, 7]), "6..8");
        assert_eq!(seq_ranges(&[6, 8, 12]), "6..12 (3 events)");
    }
}
