//! `relay.admin.v1.RelayAdmin`: the operator's way out of a backlog and out of quarantine,
//! served on the relay's gRPC port and wrapped by `outboxctl backlog` / `outboxctl quarantine`.
//!
//! Reads need nothing; `RequeueQuarantined` and `DropQuarantined` need the `ADMIN_TOKEN`
//! ([`outbox_kit::admin`]), take a reason, and commit their change together with an
//! `admin_actions` row. Both are idempotent: a seq an earlier call of the same action moved is
//! reported as `already_*`, a seq nobody knows is NOT_FOUND, and then nothing changes at all.
//! They work on a standby as well as on the leader (they only touch the tables).

pub mod db;

use outbox_kit::admin::{self as kit, AdminToken};
use outbox_proto::relay::admin::v1::{
    DropQuarantinedRequest, DropQuarantinedResponse, ListBacklogRequest, ListBacklogResponse,
    ListQuarantinedRequest, ListQuarantinedResponse, OutboxRow, QuarantineSelector, QuarantinedRow,
    RequeueQuarantinedRequest, RequeueQuarantinedResponse, relay_admin_server::RelayAdmin,
};
use sqlx::PgPool;
use tonic::{Request, Response, Status};

use crate::error::{Error, grpc_status};

/// The service's name, for reflection and health.
pub const SERVICE_NAME: &str = "relay.admin.v1.RelayAdmin";

/// Serves `relay.admin.v1.RelayAdmin` from the orders database.
#[derive(Debug, Clone)]
pub struct RelayAdminGrpc {
    pool: PgPool,
    queries: crate::db::Queries,
    token: AdminToken,
}

impl RelayAdminGrpc {
    pub fn new(pool: PgPool, queries: crate::db::Queries, token: AdminToken) -> Self {
        Self {
            pool,
            queries,
            token,
        }
    }
}

fn selector(s: Option<QuarantineSelector>) -> Result<db::Selector, Status> {
    let s = s.unwrap_or_default();
    match (s.seqs.is_empty(), s.order_id) {
        (false, 0) => {
            let mut seqs = s
                .seqs
                .iter()
                .map(|v| kit::seq("select.seqs", *v))
                .collect::<Result<Vec<_>, _>>()?;
            seqs.sort_unstable();
            seqs.dedup();
            Ok(db::Selector::Seqs(seqs))
        }
        (true, id) if id > 0 => Ok(db::Selector::Order(id)),
        (true, 0) => Err(Status::invalid_argument("select: give seqs or an order_id")),
        (true, id) => Err(Status::invalid_argument(format!(
            "select.order_id: {id} is not a positive integer"
        ))),
        (false, _) => Err(Status::invalid_argument(
            "select: give seqs or an order_id, not both",
        )),
    }
}

fn u(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

fn seqs(v: Vec<i64>) -> Vec<u64> {
    v.into_iter().map(u).collect()
}

/// The answer when some seqs are unknown, or an order has nothing in quarantine.
fn not_found(sel: &db::Selector, m: &db::Moved) -> Option<Status> {
    if !m.unknown.is_empty() {
        let list: Vec<String> = m.unknown.iter().map(i64::to_string).collect();
        return Some(Status::not_found(format!(
            "not in quarantine (nothing changed): seq {}",
            list.join(", ")
        )));
    }
    match sel {
        db::Selector::Order(id) if m.done.is_empty() && m.already.is_empty() => {
            Some(Status::not_found(format!(
                "order {id} has no row in quarantine (nothing changed)"
            )))
        }
        _ => None,
    }
}

#[tonic::async_trait]
impl RelayAdmin for RelayAdminGrpc {
    async fn list_backlog(
        &self,
        request: Request<ListBacklogRequest>,
    ) -> Result<Response<ListBacklogResponse>, Status> {
        let limit = kit::limit(request.get_ref().limit, 20, 1000)?;
        let backlog = crate::db::backlog(&self.queries, &self.pool)
            .await
            .map_err(grpc_status)?;
        let rows = db::oldest(&self.pool, limit).await.map_err(grpc_status)?;
        let (quarantined, held_back) = db::quarantine_counts(&self.pool)
            .await
            .map_err(grpc_status)?;
        let oldest_age_ms = rows.first().map_or(0, |r| u(r.age_ms));
        Ok(Response::new(ListBacklogResponse {
            count: backlog.rows,
            oldest_age_ms,
            rows: rows
                .into_iter()
                .map(|r| OutboxRow {
                    seq: u(r.seq),
                    order_id: r.aggregate_id,
                    r#type: r.event_type,
                    prev_seq: r.prev_seq.map(u),
                    age_ms: u(r.age_ms),
                })
                .collect(),
            quarantined: u(quarantined),
            held_back: u(held_back),
        }))
    }

    async fn list_quarantined(
        &self,
        request: Request<ListQuarantinedRequest>,
    ) -> Result<Response<ListQuarantinedResponse>, Status> {
        let r = request.get_ref();
        let limit = kit::limit(r.limit, 100, 1000)?;
        let order_id = kit::order_id(r.order_id)?;
        let rows = db::quarantined(&self.pool, limit, order_id)
            .await
            .map_err(grpc_status)?;
        let (count, _) = db::quarantine_counts(&self.pool)
            .await
            .map_err(grpc_status)?;
        Ok(Response::new(ListQuarantinedResponse {
            count: u(count),
            rows: rows
                .into_iter()
                .map(|q| QuarantinedRow {
                    seq: u(q.seq),
                    order_id: q.aggregate_id,
                    r#type: q.event_type,
                    prev_seq: q.prev_seq.map(u),
                    reason: q.reason,
                    age_ms: u(q.age_ms),
                    quarantined_age_ms: u(q.quarantined_age_ms),
                    held_back: u(q.held_back),
                })
                .collect(),
        }))
    }

    async fn requeue_quarantined(
        &self,
        request: Request<RequeueQuarantinedRequest>,
    ) -> Result<Response<RequeueQuarantinedResponse>, Status> {
        self.token.authorize(&request)?;
        let operator = kit::operator(&request);
        let r = request.into_inner();
        let moved = self
            .move_quarantined(Move::Requeue, r.select, &r.reason, operator)
            .await?;
        Ok(Response::new(RequeueQuarantinedResponse {
            requeued: seqs(moved.done),
            already_requeued: seqs(moved.already),
        }))
    }

    async fn drop_quarantined(
        &self,
        request: Request<DropQuarantinedRequest>,
    ) -> Result<Response<DropQuarantinedResponse>, Status> {
        self.token.authorize(&request)?;
        let operator = kit::operator(&request);
        let r = request.into_inner();
        let dropped = self
            .move_quarantined(Move::Drop, r.select, &r.reason, operator)
            .await?;
        Ok(Response::new(DropQuarantinedResponse {
            dropped: seqs(dropped.done),
            already_dropped: seqs(dropped.already),
        }))
    }
}

/// What an operator does with quarantined rows.
#[derive(Debug, Clone, Copy)]
enum Move {
    /// Back into the outbox.
    Requeue,
    /// Gone for good (kept in the audit row).
    Drop,
}

impl RelayAdminGrpc {
    /// Validates the selector and reason, moves the rows and writes the audit row in one
    /// transaction, committed only when every selected seq was known (NOT_FOUND otherwise).
    async fn move_quarantined(
        &self,
        action: Move,
        select: Option<QuarantineSelector>,
        reason: &str,
        operator: Option<String>,
    ) -> Result<db::Moved, Status> {
        let sel = selector(select)?;
        let reason = kit::reason(reason)?;
        let mut tx = db::begin(&self.pool).await.map_err(grpc_status)?;
        let moved = match action {
            Move::Requeue => db::requeue(&mut tx, &sel, &reason, operator.as_deref()).await,
            Move::Drop => db::drop_rows(&mut tx, &sel, &reason, operator.as_deref()).await,
        }
        .map_err(grpc_status)?;
        if let Some(status) = not_found(&sel, &moved) {
            return Err(status);
        }
        tx.commit()
            .await
            .map_err(Error::from_db)
            .map_err(grpc_status)?;
        tracing::warn!(
            done = ?moved.done, already = ?moved.already, operator, reason,
            "[admin] {} quarantined rows",
            match action {
                Move::Requeue => "requeued",
                Move::Drop => "dropped",
            }
        );
        Ok(moved)
    }
}
