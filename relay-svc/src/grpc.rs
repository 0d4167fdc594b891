//! The tonic implementation of `relay.v1.RelayService`.

use std::{sync::Arc, time::Duration};

use outbox_proto::relay::v1::{GetStatusRequest, RelayStatus, relay_service_server::RelayService};
use sqlx::PgPool;
use tonic::{Request, Response, Status as GrpcStatus};

use outbox_relay::{Snapshot, Status, operator::Operator};

/// A status call waits this long for fresh backlog figures before answering from the last ones.
const FRESH_BACKLOG_TIMEOUT: Duration = Duration::from_secs(2);

/// Serves `GetStatus` from the instance's live figures.
#[derive(Debug, Clone)]
pub struct RelayGrpc {
    /// Each shard's pool and relay figures, shard 0 first (one without `RELAY_SHARDS`).
    shards: Vec<(PgPool, Arc<Status>)>,
    operator: Operator,
}

impl RelayGrpc {
    /// Serves the figures of each shard's status, reading the backlog of the outbox of
    /// `operator` in each shard's pool.
    pub fn new(shards: Vec<(PgPool, Arc<Status>)>, operator: Operator) -> Self {
        Self { shards, operator }
    }
}

/// One answer for several shards' relays: backlog, published and failures summed (failures: the
/// worst shard's streak), the oldest unsent row of any shard, the highest seq confirmed in any
/// shard (seqs are per shard: for one shard it is exactly that shard's), active when this
/// instance leads at least one shard. One shard: its figures unchanged.
pub fn combine(shards: &[Snapshot]) -> Snapshot {
    shards.iter().fold(Snapshot::default(), |a, s| Snapshot {
        backlog: a.backlog + s.backlog,
        oldest_unsent_age_ms: a.oldest_unsent_age_ms.max(s.oldest_unsent_age_ms),
        last_published_seq: a.last_published_seq.max(s.last_published_seq),
        active: a.active || s.active,
        consecutive_failures: a.consecutive_failures.max(s.consecutive_failures),
        published_total: a.published_total + s.published_total,
        held_orders: a.held_orders + s.held_orders,
        quarantined: a.quarantined + s.quarantined,
        quarantined_total: a.quarantined_total + s.quarantined_total,
        refused_total: a.refused_total + s.refused_total,
        oldest_writer_age_ms: a.oldest_writer_age_ms.max(s.oldest_writer_age_ms),
        broker_blocked_ms: a.broker_blocked_ms.max(s.broker_blocked_ms),
        amqp_reconnects: a.amqp_reconnects + s.amqp_reconnects,
    })
}

/// The `GetStatus` answer from the live figures, and the reason the broker gave while it
/// blocks publishing (empty when it does not).
pub fn to_proto(s: Snapshot, broker_blocked_reason: String) -> RelayStatus {
    RelayStatus {
        backlog: s.backlog,
        oldest_unsent_age_ms: s.oldest_unsent_age_ms,
        last_published_seq: s.last_published_seq,
        active: s.active,
        consecutive_failures: s.consecutive_failures,
        published_total: s.published_total,
        broker_blocked_reason,
        broker_blocked_ms: s.broker_blocked_ms,
    }
}

#[tonic::async_trait]
impl RelayService for RelayGrpc {
    /// Backlog figures are read from the table for the answer (so a standby reports them too and
    /// they match the table); while the database is away the last known figures are returned.
    async fn get_status(
        &self,
        _request: Request<GetStatusRequest>,
    ) -> Result<Response<RelayStatus>, GrpcStatus> {
        let mut snapshots = Vec::with_capacity(self.shards.len());
        // The longest-blocked shard's reason (every shard's relay talks to the same broker).
        let mut blocked: Option<(String, Duration)> = None;
        for (pool, status) in &self.shards {
            if let Some((reason, for_)) = status.broker_blocked()
                && blocked.as_ref().is_none_or(|(_, longest)| for_ > *longest)
            {
                blocked = Some((reason, for_));
            }
            match tokio::time::timeout(FRESH_BACKLOG_TIMEOUT, self.operator.backlog(pool)).await {
                Ok(Ok(backlog)) => status.set_backlog(backlog),
                Ok(Err(e)) => tracing::debug!(error = %e, "status: backlog not refreshed"),
                Err(_) => tracing::debug!("status: backlog query timed out"),
            }
            snapshots.push(status.snapshot());
        }
        let reason = blocked.map(|(reason, _)| reason).unwrap_or_default();
        Ok(Response::new(to_proto(combine(&snapshots), reason)))
    }
}
