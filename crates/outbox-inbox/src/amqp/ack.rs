//! Acks after commit, together, and broker calls that cannot hang.

use std::{collections::BTreeSet, time::Duration};

use lapin::{message::Delivery, options::BasicAckOptions};

/// What a broker call failed with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BrokerError {
    /// The broker or the connection failed.
    #[error(transparent)]
    Amqp(#[from] lapin::Error),
    /// The connection was lost while consuming (missed heartbeats: a silent network; a failed
    /// socket; closed by the broker).
    #[error("the broker connection was lost ({})", .0.describe())]
    Lost(outbox_support::amqp::Lost),
    /// No answer within [`BROKER_CALL_TIMEOUT`]: the connection is taken for dead.
    #[error("{what} got no answer in {timeout:?}")]
    Timeout {
        /// The call (`ack`, `dead-letter publish`, ...).
        what: String,
        /// How long it waited.
        timeout: Duration,
    },
    /// The broker refused a confirmed publish (`basic.nack`).
    #[error("the broker refused the {what} (nack)")]
    Nacked {
        /// What was published.
        what: String,
    },
    /// A mandatory publish came back: nothing is bound to take it.
    #[error("the {what} was unroutable: {queue} is not bound")]
    Unroutable {
        /// What was published.
        what: String,
        /// The queue that should have taken it.
        queue: String,
    },
}

/// How long a call to the broker (an ack, a confirmed publish) may take before the connection is
/// considered dead (start a new session; the delivery then comes back unacked).
pub const BROKER_CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs a broker call, bounded by [`BROKER_CALL_TIMEOUT`].
pub async fn broker_call<T>(
    what: &str,
    call: impl Future<Output = lapin::Result<T>>,
) -> Result<T, BrokerError> {
    match tokio::time::timeout(BROKER_CALL_TIMEOUT, call).await {
        Ok(result) => Ok(result?),
        Err(_) => Err(BrokerError::Timeout {
            what: what.to_owned(),
            timeout: BROKER_CALL_TIMEOUT,
        }),
    }
}

/// The delivery tags of one channel that are neither acked nor rejected yet (delivered to this
/// consumer, waiting for a batch or in one). Record each delivery with
/// [`Unsettled::delivered`] as it arrives; settling removes it.
#[derive(Debug, Default)]
pub struct Unsettled(std::sync::Mutex<BTreeSet<u64>>);

impl Unsettled {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeSet<u64>> {
        // Plain data: a panic while holding the lock cannot leave it inconsistent.
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A delivery arrived.
    pub fn delivered(&self, tag: u64) {
        self.lock().insert(tag);
    }

    /// These deliveries were acked or rejected.
    pub fn settled(&self, tags: &[u64]) {
        let mut set = self.lock();
        for t in tags {
            set.remove(t);
        }
    }

    /// Whether acking `tags` with `multiple` on the highest acks exactly them: every unsettled
    /// tag up to the highest is one of them (a `multiple` ack settles everything up to its tag on
    /// the channel, so a lower tag of another batch still in flight must not be below it).
    pub fn is_prefix(&self, tags: &[u64]) -> bool {
        let Some(&max) = tags.iter().max() else {
            return false;
        };
        let mine: BTreeSet<u64> = tags.iter().copied().collect();
        self.lock().range(..=max).all(|t| mine.contains(t))
    }
}

/// Acks committed deliveries together: one `basic.ack` with `multiple` on the highest tag when
/// no other unsettled delivery lies below it, else one ack each (pipelined on the channel).
pub async fn ack_together(
    unsettled: &Unsettled,
    deliveries: &[Delivery],
) -> Result<(), BrokerError> {
    let tags: Vec<u64> = deliveries.iter().map(|d| d.delivery_tag).collect();
    let Some(highest) = deliveries.iter().max_by_key(|d| d.delivery_tag) else {
        return Ok(());
    };
    if deliveries.len() > 1 && unsettled.is_prefix(&tags) {
        let multiple = BasicAckOptions { multiple: true };
        broker_call("ack", highest.ack(multiple)).await?;
    } else {
        let acks = deliveries
            .iter()
            .map(|d| broker_call("ack", d.ack(BasicAckOptions::default())));
        futures::future::try_join_all(acks).await?;
    }
    unsettled.settled(&tags);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_multiple_ack_is_used_only_when_it_settles_exactly_the_batch() {
        let u = Unsettled::default();
        for t in 1..=6 {
            u.delivered(t);
        }
        assert!(u.is_prefix(&[1, 2, 3]));
        assert!(!u.is_prefix(&[2, 3]), "tag 1 of another batch lies below");
        u.settled(&[1]);
        assert!(u.is_prefix(&[3, 2]));
        assert!(!u.is_prefix(&[]));
    }
}
