//! The tonic implementation of `mail.v1.MailService`: what was mailed, and how the consumer is
//! doing. Every number comes from the database, so it is true across restarts and instances.

use chrono::{DateTime, Utc};
use outbox_proto::mail::v1::{
    GetStatusRequest, ListMailsRequest, ListMailsResponse, Mail, MailState, MailStatus,
    mail_service_server::MailService,
};
use sqlx::PgPool;
use tonic::{Request, Response, Status};

use std::sync::Arc;

use crate::{amqp::consumer::BrokerState, db, error::Error};

/// Serves `ListMails` and `GetStatus` from the pool (and what the broker says about this
/// instance's consumer connection).
#[derive(Debug, Clone)]
pub struct MailGrpc {
    pool: PgPool,
    broker: Arc<BrokerState>,
}

impl MailGrpc {
    pub fn new(pool: PgPool) -> Self {
        Self {
            pool,
            broker: Arc::default(),
        }
    }

    /// Reports what the broker says about the consumer's connection (blocked) from `broker`.
    pub fn with_broker(mut self, broker: Arc<BrokerState>) -> Self {
        self.broker = broker;
        self
    }
}

fn timestamp(t: DateTime<Utc>) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: t.timestamp(),
        nanos: t.timestamp_subsec_nanos() as i32,
    }
}

fn to_proto(m: db::MailRow) -> Mail {
    let state = if m.sent_at.is_some() {
        MailState::Sent
    } else if m.failed_at.is_some() {
        MailState::Failed
    } else {
        MailState::Queued
    };
    Mail {
        shard: m.shard.max(0) as u32,
        seq: m.seq as u64,
        r#type: m.event_type,
        subject: m.subject,
        recipient: m.recipient,
        state: state as i32,
        sent_at: m.sent_at.map(timestamp),
        body: m.body,
        idempotency_key: m.idempotency_key,
        queued_at: Some(timestamp(m.queued_at)),
        traceparent: m.traceparent.unwrap_or_default(),
        last_error: m.last_error.unwrap_or_default(),
        attempts: m.attempts.max(0) as u32,
        next_attempt_at: m
            .next_attempt_at
            .filter(|_| state == MailState::Queued)
            .map(timestamp),
    }
}

#[tonic::async_trait]
impl MailService for MailGrpc {
    #[tracing::instrument(skip_all, fields(order_id = request.get_ref().order_id))]
    async fn list_mails(
        &self,
        request: Request<ListMailsRequest>,
    ) -> Result<Response<ListMailsResponse>, Status> {
        let order_id = request.into_inner().order_id;
        if order_id <= 0 {
            return Err(Error::InvalidArgument {
                field: "order_id",
                reason: "must be a positive integer".into(),
            }
            .into());
        }
        let mails = db::list_mails(&self.pool, order_id)
            .await
            .map_err(Error::from)?;
        Ok(Response::new(ListMailsResponse {
            mails: mails.into_iter().map(to_proto).collect(),
        }))
    }

    async fn get_status(
        &self,
        _request: Request<GetStatusRequest>,
    ) -> Result<Response<MailStatus>, Status> {
        let s = db::stats(&self.pool).await.map_err(Error::from)?;
        let u = |v: i64| v.max(0) as u64;
        let (broker_blocked_reason, blocked_for) = self.broker.blocked().unwrap_or_default();
        Ok(Response::new(MailStatus {
            broker_blocked_reason,
            broker_blocked_ms: blocked_for.as_millis() as u64,
            processed: u(s.processed),
            skipped: u(s.skipped),
            held: u(s.held),
            dead_lettered: u(s.dead_lettered),
            oldest_held_age_ms: u(s.oldest_held_age_ms),
            unsent_mails: u(s.unsent),
        }))
    }
}
