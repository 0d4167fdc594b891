//! What the relay's behaviour tests share: a fresh database with an outbox of the test's own
//! ([`db`]), the broker side they observe ([`broker`]), a relay run through the library
//! ([`relay`]), a TCP path a test can freeze ([`stall`]), and the chain check every test ends
//! with.

pub mod broker;
pub mod db;
pub mod relay;
pub mod stall;

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    future::Future,
    time::{Duration, Instant},
};

use outbox::wire::Envelope;

/// Generous: tests wait for outcomes, they never assert speed.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// Polls `check` until it returns true, failing the test after [`PATIENCE`] with `what`.
pub async fn wait_until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let start = Instant::now();
    while !check().await {
        assert!(start.elapsed() < PATIENCE, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until every one of `events` (aggregate, seq) reached `consumer` and `db`'s outbox is
/// empty (`what`: the moment, for the failure message).
pub async fn all_arrive(
    what: &str,
    consumer: &broker::Consumer,
    db: &db::Db,
    events: &[(i64, i64)],
) {
    let all: Vec<i64> = events.iter().map(|(_, s)| *s).collect();
    wait_until(&format!("every event consumed {what}"), || async {
        consumer.has_all(&all)
    })
    .await;
    wait_until("the outbox is drained", || async {
        db.unsent().await.is_empty()
    })
    .await;
}

/// Each aggregate's committed seqs in commit order, from (aggregate, seq) pairs.
pub fn chains_of(events: &[(i64, i64)]) -> BTreeMap<i64, Vec<i64>> {
    let mut chains: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for (aggregate, seq) in events {
        chains.entry(*aggregate).or_default().push(*seq);
    }
    chains
}

/// The guarantee, checked on what a consumer received: every committed seq arrived at least
/// once, and per aggregate the first arrivals follow the chain (each one's `prev_seq` is the
/// one before it). `chains` maps each aggregate to its committed seqs in commit order.
pub fn assert_complete_and_ordered(received: &[Envelope], chains: &BTreeMap<i64, Vec<i64>>) {
    let mut first: HashMap<i64, Vec<&Envelope>> = HashMap::new();
    let mut seen = HashSet::new();
    for e in received {
        if seen.insert(e.seq) {
            first.entry(e.aggregate_id).or_default().push(e);
        }
    }
    for (aggregate, chain) in chains {
        let got: Vec<i64> = first
            .get(aggregate)
            .map(|evs| evs.iter().map(|e| e.seq as i64).collect())
            .unwrap_or_default();
        assert_eq!(
            &got, chain,
            "aggregate {aggregate}: first arrivals must be every committed event, in chain order"
        );
        let mut prev = None;
        for e in &first[aggregate] {
            assert_eq!(
                e.prev_seq, prev,
                "aggregate {aggregate}: seq {} has the wrong prev_seq",
                e.seq
            );
            prev = Some(e.seq);
        }
    }
}
