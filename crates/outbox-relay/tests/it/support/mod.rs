//! What the relay's behaviour tests share: a fresh database with an outbox of the test's own
//! ([`db`]), the broker side they observe ([`broker`]), a relay run through the library
//! ([`relay`]), a TCP path a test can freeze ([`stall`]), and the chain check every test ends
//! with.

pub mod broker;
pub mod db;
pub mod relay;
pub mod stall;

use std::collections::{BTreeMap, HashSet};

use outbox::wire::Envelope;
use outbox_testkit::chains::{self, Link};
pub use outbox_testkit::{chains::chains_of, wait_until};

/// Waits until every one of `events` (aggregate, seq) reached `consumer` and `db`'s outbox is
/// empty (`what`: the moment, for the failure message).
pub async fn all_arrive(
    what: &str,
    consumer: &broker::Consumer,
    db: &db::Db,
    events: &[(i64, i64)],
) {
    let all: Vec<i64> = events.iter().map(|(_, s)| *s).collect();
    // Patience runs out only without progress: a drain of thousands of rows through proxies on a
    // machine busy with other tests may take longer than PATIENCE, a stuck one makes no progress.
    let mut progress = (std::time::Instant::now(), 0usize);
    loop {
        // Distinct events: a relay publishing the same batch again and again makes no progress.
        let got: HashSet<i64> = consumer.seqs().into_iter().collect();
        let missing: Vec<i64> = all.iter().copied().filter(|s| !got.contains(s)).collect();
        if missing.is_empty() {
            break;
        }
        if got.len() > progress.1 {
            progress = (std::time::Instant::now(), got.len());
        }
        if progress.0.elapsed() >= outbox_testkit::PATIENCE {
            // What a stuck drain looks like: how far it got, and whether the rows are still in
            // the outbox (not published) or gone from it (published, not consumed: lost).
            let unsent: HashSet<i64> = db.unsent().await.into_iter().collect();
            let gone: Vec<i64> = missing
                .iter()
                .copied()
                .filter(|s| !unsent.contains(s))
                .collect();
            panic!(
                "no progress for {:?} waiting for: every event consumed {what}: {} of {} missing \
                 ({} still in the outbox, {} gone from it: {:?}); first missing: {:?}",
                outbox_testkit::PATIENCE,
                missing.len(),
                all.len(),
                missing.len() - gone.len(),
                gone.len(),
                &gone[..gone.len().min(10)],
                &missing[..missing.len().min(10)],
            );
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    wait_until("the outbox is drained", || async {
        db.unsent().await.is_empty()
    })
    .await;
}

/// The guarantee ([`chains::assert_complete_and_ordered`]) on the envelopes a consumer
/// received, in arrival order.
#[track_caller]
pub fn assert_complete_and_ordered(received: &[Envelope], chains: &BTreeMap<i64, Vec<i64>>) {
    let links = received.iter().map(|e| Link {
        aggregate: e.aggregate_id,
        seq: e.seq as i64,
        prev_seq: e.prev_seq.map(|p| p as i64),
    });
    chains::assert_complete_and_ordered(links, chains);
}
