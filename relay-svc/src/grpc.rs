//! The tonic implementation of `relay.v1.RelayService`.

use std::{sync::Arc, time::Duration};

use outbox_proto::relay::v1::{GetStatusRequest, RelayStatus, relay_service_server::RelayService};
use sqlx::PgPool;
use tonic::{Request, Response, Status as GrpcStatus};

use crate::{
    db::{self, Queries},
    status::{Snapshot, Status},
};

/// A status call waits this long for fresh backlog figures before answering from the last ones.
const FRESH_BACKLOG_TIMEOUT: Duration = Duration::from_secs(2);

/// Serves `GetStatus` from the instance's live figures.
#[derive(Debug, Clone)]
pub struct RelayGrpc {
    pool: PgPool,
    queries: Queries,
    status: Arc<Status>,
}

impl RelayGrpc {
    /// Serves the figures of `status`, reading the backlog of the outbox of `queries`.
    pub fn new(pool: PgPool, queries: Queries, status: Arc<Status>) -> Self {
        Self {
            pool,
            queries,
            status,
        }
    }
}

/// The `GetStatus` answer from the live figures.
pub fn to_proto(s: Snapshot) -> RelayStatus {
    RelayStatus {
        backlog: s.backlog,
        oldest_unsent_age_ms: s.oldest_unsent_age_ms,
        last_published_seq: s.last_published_seq,
        active: s.active,
        consecutive_failures: s.consecutive_failures,
        published_total: s.published_total,
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
        match tokio::time::timeout(
            FRESH_BACKLOG_TIMEOUT,
            db::backlog(&self.queries, &self.pool),
        )
        .await
        {
            Ok(Ok(backlog)) => self.status.set_backlog(backlog),
            Ok(Err(e)) => tracing::debug!(error = %e, "status: backlog not refreshed"),
            Err(_) => tracing::debug!("status: backlog query timed out"),
        }
        Ok(Response::new(to_proto(self.status.snapshot())))
    }
}
