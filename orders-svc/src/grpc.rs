//! The tonic implementation of `orders.v1.OrderService`.

use std::{sync::Arc, time::Instant};

use chrono::{DateTime, Utc};
use outbox::trace::TraceHeaders;
use outbox_proto::orders::v1::{
    GetOrderRequest, Order, UpsertOrderRequest, UpsertOrderResponse,
    order_service_server::OrderService,
};
use sqlx::PgPool;
use tonic::{Request, Response, Status};
use tracing::Instrument;

use crate::{
    batch::ShardedWrites,
    db::{self, OrderRow},
    error::Error,
    order::UpsertCommand,
    wake::RelayWaker,
};

/// Serves `Upsert` through its shard's group commit (which pokes that shard's relay waker after
/// each batch that appended events) and `GetOrder` from its shard's pool.
#[derive(Debug, Clone)]
pub struct OrdersGrpc {
    pools: Vec<PgPool>,
    writes: ShardedWrites,
}

impl OrdersGrpc {
    /// Starts the group commits' writers on the current runtime; `shards` holds each shard's
    /// pool and relay waker, shard 0 first.
    pub fn new(shards: Vec<(PgPool, Arc<RelayWaker>)>) -> Self {
        let pools = shards.iter().map(|(pool, _)| pool.clone()).collect();
        let writes = ShardedWrites::start(shards);
        Self { pools, writes }
    }
}

#[tonic::async_trait]
impl OrderService for OrdersGrpc {
    async fn upsert(
        &self,
        request: Request<UpsertOrderRequest>,
    ) -> Result<Response<UpsertOrderResponse>, Status> {
        let span = tracing::info_span!(
            "upsert",
            otel.name = "Upsert",
            otel.kind = "server",
            order_id = request.get_ref().id,
            seq = tracing::field::Empty,
            trace_id = tracing::field::Empty,
        );
        // The caller's trace, when it sent one; otherwise the span starts a new trace.
        let header = |name| request.metadata().get(name).and_then(|v| v.to_str().ok());
        if let Some(caller) =
            header("traceparent").and_then(|tp| TraceHeaders::parse(tp, header("tracestate")))
        {
            caller.continue_in(&span);
        }
        // The Upsert span's own context goes with the event (the writer appends it explicitly:
        // the group commit's task runs outside this span).
        let trace = TraceHeaders::of_span(&span);
        if let Some(trace) = &trace {
            span.record("trace_id", trace.trace_id());
        }
        self.upsert_in_trace(request.into_inner(), trace)
            .instrument(span)
            .await
    }

    async fn get_order(
        &self,
        request: Request<GetOrderRequest>,
    ) -> Result<Response<Order>, Status> {
        let id = request.into_inner().id;
        if id <= 0 {
            return Err(Error::invalid("id", "must be a positive integer").into());
        }
        let pool = &self.pools[crate::shard::of(id, self.pools.len())];
        let order = db::get_order(pool, id).await?;
        Ok(Response::new(to_proto(&order)))
    }
}

impl OrdersGrpc {
    /// Upsert inside its span; `trace` is that span's context, stored with the event.
    async fn upsert_in_trace(
        &self,
        req: UpsertOrderRequest,
        trace: Option<TraceHeaders>,
    ) -> Result<Response<UpsertOrderResponse>, Status> {
        let started = Instant::now();
        let result = async {
            // Validated before it is queued: bad input never reaches a batch.
            let cmd = UpsertCommand::parse(req.id, req.status, &req.customer_email)?;
            self.writes.upsert(cmd, trace).await
        }
        .await;
        let outcome_label = match &result {
            Ok(o) if o.event_seq.is_some() => "changed",
            Ok(_) => "unchanged",
            Err(Error::InvalidArgument { .. } | Error::EmailRequiredOnCreate { .. }) => {
                "invalid_argument"
            }
            Err(Error::ForbiddenTransition { .. }) => "failed_precondition",
            Err(_) => "error",
        };
        metrics::counter!(crate::metrics::UPSERTS, "outcome" => outcome_label).increment(1);
        metrics::histogram!(crate::metrics::UPSERT_DURATION).record(started.elapsed());
        let outcome = result?;

        if let Some(seq) = outcome.event_seq {
            tracing::Span::current().record("seq", seq);
            tracing::info!(
                status = outcome.order.status.as_str(),
                created = outcome.created,
                "event appended"
            );
        }
        Ok(Response::new(UpsertOrderResponse {
            order: Some(to_proto(&outcome.order)),
            created: outcome.created,
            event_seq: outcome.event_seq.map(|s| s as u64),
        }))
    }
}

fn to_proto(row: &OrderRow) -> Order {
    Order {
        id: row.id,
        status: row.status.to_proto() as i32,
        customer_email: row.customer_email.clone(),
        version: row.version as u64,
        last_event_seq: row.last_event_seq as u64,
        created_at: Some(timestamp(row.created_at)),
        updated_at: Some(timestamp(row.updated_at)),
    }
}

fn timestamp(t: DateTime<Utc>) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: t.timestamp(),
        nanos: t.timestamp_subsec_nanos() as i32,
    }
}
