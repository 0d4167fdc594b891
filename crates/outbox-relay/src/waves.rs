//! Wave planning: which rows of a batch may be published together.
//!
//! Wave k holds the k-th row of every aggregate in the batch, in batch (seq) order. All messages
//! of a wave are pipelined on one confirm channel; the next wave goes out only once this one is
//! answered, and an aggregate whose row was not delivered sends nothing more in the batch. So a
//! nack, a return or a broken connection can cause duplicates, never let a later event of an
//! aggregate reach a queue before an earlier one.

use std::collections::HashMap;

/// The waves of a batch whose rows belong to `aggregates` (one id per row, in seq order):
/// indices into the batch, wave by wave. Pure; every index appears exactly once.
pub fn plan(aggregates: impl IntoIterator<Item = i64>) -> Vec<Vec<usize>> {
    let mut waves: Vec<Vec<usize>> = Vec::new();
    let mut per_aggregate: HashMap<i64, usize> = HashMap::new();
    for (i, aggregate) in aggregates.into_iter().enumerate() {
        let k = per_aggregate.entry(aggregate).or_default();
        if waves.len() <= *k {
            waves.push(Vec::new());
        }
        waves[*k].push(i);
        *k += 1;
    }
    waves
}

#[cfg(test)]
mod tests {
    use super::plan;

    #[test]
    fn each_aggregates_kth_row_is_in_wave_k() {
        let cases: [(&[i64], &[&[usize]]); 5] = [
            (&[], &[]),
            (&[7], &[&[0]]),
            // Distinct aggregates: one wave.
            (&[1, 2, 3], &[&[0, 1, 2]]),
            // One aggregate: one row per wave, in seq order.
            (&[5, 5, 5], &[&[0], &[1], &[2]]),
            // Interleaved: batch order kept inside each wave.
            (&[1, 2, 1, 3, 2, 1], &[&[0, 1, 3], &[2, 4], &[5]]),
        ];
        for (aggregates, want) in cases {
            let got = plan(aggregates.iter().copied());
            let want: Vec<Vec<usize>> = want.iter().map(|w| w.to_vec()).collect();
            assert_eq!(got, want, "{aggregates:?}");
        }
    }
}
