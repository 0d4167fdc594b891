//! The relay's guarantee, checked on what a consumer received: every committed event arrives at
//! least once, and per aggregate the first arrivals follow the chain the writers committed.

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    fmt::Debug,
    hash::Hash,
};

/// One received event as the check reads it: the aggregate whose chain it is in, its seq, and
/// the seq it names as its predecessor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link<S> {
    pub aggregate: i64,
    pub seq: S,
    pub prev_seq: Option<S>,
}

/// Each aggregate's committed seqs in commit order, from (aggregate, seq) pairs in commit order.
pub fn chains_of<S: Copy>(events: &[(i64, S)]) -> BTreeMap<i64, Vec<S>> {
    let mut chains: BTreeMap<i64, Vec<S>> = BTreeMap::new();
    for (aggregate, seq) in events {
        chains.entry(*aggregate).or_default().push(*seq);
    }
    chains
}

/// Asserts the guarantee on `received` (in arrival order): every committed seq arrived at least
/// once, and per aggregate the first arrivals follow the chain (each one's `prev_seq` is the one
/// before it). `chains` maps each aggregate to its committed seqs in commit order
/// ([`chains_of`]).
#[track_caller]
pub fn assert_complete_and_ordered<S>(
    received: impl IntoIterator<Item = Link<S>>,
    chains: &BTreeMap<i64, Vec<S>>,
) where
    S: Copy + Eq + Hash + Debug,
{
    let mut first: HashMap<i64, Vec<Link<S>>> = HashMap::new();
    let mut seen = HashSet::new();
    for link in received {
        if seen.insert(link.seq) {
            first.entry(link.aggregate).or_default().push(link);
        }
    }
    for (aggregate, chain) in chains {
        let links = first.get(aggregate).map(Vec::as_slice).unwrap_or_default();
        let got: Vec<S> = links.iter().map(|l| l.seq).collect();
        assert_eq!(
            &got, chain,
            "aggregate {aggregate}: first arrivals must be every committed event, in chain order"
        );
        let mut prev = None;
        for l in links {
            assert_eq!(
                l.prev_seq, prev,
                "aggregate {aggregate}: seq {:?} has the wrong prev_seq",
                l.seq
            );
            prev = Some(l.seq);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(aggregate: i64, seq: u64, prev_seq: Option<u64>) -> Link<u64> {
        Link {
            aggregate,
            seq,
            prev_seq,
        }
    }

    #[test]
    fn duplicates_after_the_first_arrival_are_ignored() {
        let chains = chains_of(&[(1, 1_u64), (2, 2), (1, 3)]);
        let received = [
            link(1, 1, None),
            link(2, 2, None),
            link(1, 1, None),
            link(1, 3, Some(1)),
            link(2, 2, None),
        ];
        assert_complete_and_ordered(received, &chains);
    }

    #[test]
    #[should_panic(expected = "aggregate 1: first arrivals must be every committed event")]
    fn a_missing_event_fails() {
        let chains = chains_of(&[(1, 1_u64), (1, 3)]);
        assert_complete_and_ordered([link(1, 1, None)], &chains);
    }

    #[test]
    #[should_panic(expected = "aggregate 1: seq 3 has the wrong prev_seq")]
    fn a_broken_link_fails() {
        let chains = chains_of(&[(1, 1_u64), (1, 3)]);
        assert_complete_and_ordered([link(1, 1, None), link(1, 3, Some(2))], &chains);
    }
}
