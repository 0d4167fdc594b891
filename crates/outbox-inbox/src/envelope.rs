//! [`Envelope`]: one event as the inbox sees it.

use crate::Chain;

/// One event as the inbox sees it: its aggregate, its place in the aggregate's chain, and the
/// payload handed to the handler (stored as is while the event is held).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Envelope {
    /// The producer's shard the event comes from: its outbox's database, when the producer
    /// writes to several (0 for one). Seqs are unique per outbox, so `(shard, seq)` is the
    /// event's identity and `(shard, aggregate_type, aggregate_id)` its chain's.
    pub shard: i32,
    /// What kind of aggregate it belongs to (the outbox row's `aggregate_type`; empty when the
    /// producer does not say). Types may share ids: each `(type, id)` is a chain of its own.
    pub aggregate_type: String,
    /// The aggregate whose chain the event belongs to.
    pub aggregate_id: i64,
    /// The event's seq: unique per outbox (per shard), its idempotency key.
    pub seq: i64,
    /// The aggregate's previous event; `None` for its first.
    pub prev_seq: Option<i64>,
    /// What the handler needs to process the event (typically the message body).
    pub payload: Vec<u8>,
    /// The W3C trace context the event arrived with, kept while it is held.
    pub traceparent: Option<String>,
}

impl Envelope {
    /// An event of `aggregate_id` with its chain position and payload.
    pub fn new(aggregate_id: i64, seq: i64, prev_seq: Option<i64>, payload: Vec<u8>) -> Self {
        Self {
            shard: 0,
            aggregate_type: String::new(),
            aggregate_id,
            seq,
            prev_seq,
            payload,
            traceparent: None,
        }
    }

    /// From shard `shard` of a sharded producer (default 0). A negative shard is a producer's
    /// bug: `Envelope::from_delivery` (feature `amqp`) refuses one.
    pub fn with_shard(mut self, shard: i32) -> Self {
        self.shard = shard;
        self
    }

    /// Of aggregate type `aggregate_type` (default empty: a producer that does not say).
    pub fn with_aggregate_type(mut self, aggregate_type: impl Into<String>) -> Self {
        self.aggregate_type = aggregate_type.into();
        self
    }

    /// Its chain: its aggregate (type and id) in its shard.
    pub fn chain(&self) -> Chain {
        Chain::new(self.shard, self.aggregate_type.clone(), self.aggregate_id)
    }

    /// The trace context it arrived with.
    pub fn with_traceparent(mut self, traceparent: Option<String>) -> Self {
        self.traceparent = traceparent;
        self
    }
}
