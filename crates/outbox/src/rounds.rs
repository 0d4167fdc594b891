//! Rounds: the one rule that keeps each aggregate's events in order when many are handled at once.
//!
//! Round k holds the k-th item of every key, in input order. The outbox appends a batch round by
//! round (each aggregate's events chain in the order given), and the relay publishes a batch
//! wave by wave (wave k goes out only once wave k-1 is confirmed, so a nack, a return or a broken
//! connection can cause a duplicate but never let an aggregate's later event overtake an earlier
//! one).

use std::{collections::HashMap, hash::Hash};

/// The rounds of `keys` (one key per item, in order): indices into the items, round by round.
/// Pure; every index appears exactly once, and in increasing order within a round.
pub fn of<K: Eq + Hash>(keys: impl IntoIterator<Item = K>) -> Vec<Vec<usize>> {
    let mut rounds: Vec<Vec<usize>> = Vec::new();
    let mut seen: HashMap<K, usize> = HashMap::new();
    for (i, key) in keys.into_iter().enumerate() {
        let k = seen.entry(key).or_default();
        if rounds.len() <= *k {
            rounds.push(Vec::new());
        }
        rounds[*k].push(i);
        *k += 1;
    }
    rounds
}

#[cfg(test)]
mod tests {
    use super::of;

    #[test]
    fn each_keys_kth_item_is_in_round_k() {
        let cases: [(&[i64], &[&[usize]]); 5] = [
            (&[], &[]),
            (&[7], &[&[0]]),
            // Distinct keys: one round.
            (&[1, 2, 3], &[&[0, 1, 2]]),
            // One key: one item per round, in order.
            (&[5, 5, 5], &[&[0], &[1], &[2]]),
            // Interleaved: input order kept inside each round.
            (&[1, 2, 1, 3, 2, 1], &[&[0, 1, 3], &[2, 4], &[5]]),
        ];
        for (keys, want) in cases {
            let got = of(keys.iter().copied());
            let want: Vec<Vec<usize>> = want.iter().map(|w| w.to_vec()).collect();
            assert_eq!(got, want, "{keys:?}");
        }
    }

    #[test]
    fn keys_may_be_pairs() {
        // Two aggregate types sharing an id are two chains.
        let got = of([("order", 1), ("invoice", 1), ("order", 1)]);
        assert_eq!(got, vec![vec![0, 1], vec![2]]);
    }
}
