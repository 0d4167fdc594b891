//! `mail.admin.v1.MailAdmin`: the operator's way out of a held chain, the dead-letter queue and
//! FAILED mails, served on mail-svc's gRPC port and wrapped by `outboxctl held`, `outboxctl
//! dead-letters` and `outboxctl mails`.
//!
//! Reads need nothing; `ReleaseHeld`, `RedriveDeadLetters` and `RetryMails` need the
//! `ADMIN_TOKEN` ([`outbox_kit::admin`]), take a reason, and leave an `admin_actions` row
//! (the database changes commit together with it; a redrive, which moves messages outside the
//! database, commits it with the dead letters about to move before the first one moves, then
//! completes it with those that did: no move goes unrecorded). Each is idempotent: repeating a call changes nothing more (a released order
//! answers `already_released`, a retried mail is no longer FAILED, a redriven message is no
//! longer a dead letter, so a repeated redrive matches nothing: NOT_FOUND).
//!
//! Layout: [`db`] (SQL), [`release`] (`ReleaseHeld`, on top of [`crate::process`]),
//! [`dead_letters`] (list and redrive over AMQP).

pub mod db;
pub mod dead_letters;
pub mod release;

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use outbox_kit::admin::{self as kit, AdminToken};
use outbox_proto::mail::admin::v1::{
    DeadLetter, DeadLetterFilter, FailedMail, HeldOrder, ListDeadLettersRequest,
    ListDeadLettersResponse, ListFailedMailsRequest, ListFailedMailsResponse, ListHeldRequest,
    ListHeldResponse, MailFilter, RedriveDeadLettersRequest, RedriveDeadLettersResponse,
    ReleaseHeldRequest, ReleaseHeldResponse, RetryMailsRequest, RetryMailsResponse,
    mail_admin_server::MailAdmin,
};
use sqlx::{Connection, PgPool};
use tonic::{Request, Response, Status};

use crate::error::Error;
use dead_letters::{DeadLetterError, DeadLetters, Filter};

/// Serves `mail.admin.v1.MailAdmin`.
#[derive(Debug, Clone)]
pub struct MailAdminGrpc {
    pool: PgPool,
    dead_letters: DeadLetters,
    token: AdminToken,
    /// TRUSTED_PUBLISHERS: a redrive is refused when it names others but not our own user
    /// (every copy would be dead-lettered again).
    trusted_publishers: Vec<String>,
}

impl MailAdminGrpc {
    pub fn new(
        pool: PgPool,
        dead_letters: DeadLetters,
        token: AdminToken,
        trusted_publishers: Vec<String>,
    ) -> Self {
        Self {
            pool,
            dead_letters,
            token,
            trusted_publishers,
        }
    }
}

fn u(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

fn shard(s: i32) -> u32 {
    u32::try_from(s).unwrap_or(0)
}

fn timestamp(t: DateTime<Utc>) -> prost_types::Timestamp {
    prost_types::Timestamp {
        seconds: t.timestamp(),
        nanos: t.timestamp_subsec_nanos() as i32,
    }
}

fn db_err(e: sqlx::Error) -> Status {
    Error::from(e).into()
}

fn broker_unavailable(e: &anyhow::Error) -> Status {
    tracing::warn!(
        error = format!("{e:#}"),
        "[admin] dead-letter queue unavailable"
    );
    Status::unavailable(format!("the dead-letter queue cannot be read: {e:#}"))
}

fn dead_letter_filter(f: Option<DeadLetterFilter>) -> Result<Filter, Status> {
    let f = f.unwrap_or_default();
    let given = usize::from(!f.seqs.is_empty()) + usize::from(f.order_id != 0) + usize::from(f.all);
    if given != 1 {
        return Err(Status::invalid_argument(
            "filter: give exactly one of seqs, order_id or all",
        ));
    }
    if f.all {
        return Ok(Filter::All);
    }
    if f.order_id != 0 {
        return kit::order_id(f.order_id)
            .map(|o| Filter::Order(o.unwrap_or_default()))
            .map_err(|_| {
                Status::invalid_argument(format!(
                    "filter.order_id: {} is not a positive integer",
                    f.order_id
                ))
            });
    }
    let (shard, seqs) = shard_seqs(f.shard, &f.seqs)?;
    Ok(Filter::Seqs { shard, seqs })
}

/// A filter's seqs, sorted and distinct, and the shard they are of (`filter.shard`).
fn shard_seqs(shard: u32, seqs: &[u64]) -> Result<(i32, Vec<i64>), Status> {
    let shard = i32::try_from(shard).map_err(|_| {
        Status::invalid_argument(format!("filter.shard: {shard} is not a shard number"))
    })?;
    let mut seqs = seqs
        .iter()
        .map(|s| kit::seq("filter.seqs", *s))
        .collect::<Result<Vec<_>, _>>()?;
    seqs.sort_unstable();
    seqs.dedup();
    Ok((shard, seqs))
}

fn mail_filter(f: Option<MailFilter>) -> Result<db::MailFilter, Status> {
    let f = f.unwrap_or_default();
    let given =
        usize::from(!f.seqs.is_empty()) + usize::from(f.order_id != 0) + usize::from(f.all_failed);
    if given != 1 {
        return Err(Status::invalid_argument(
            "filter: give exactly one of seqs, order_id or all_failed",
        ));
    }
    if f.all_failed {
        return Ok(db::MailFilter::AllFailed);
    }
    if f.order_id != 0 {
        if f.order_id < 0 {
            return Err(Status::invalid_argument(format!(
                "filter.order_id: {} is not a positive integer",
                f.order_id
            )));
        }
        return Ok(db::MailFilter::Order(f.order_id));
    }
    let (shard, seqs) = shard_seqs(f.shard, &f.seqs)?;
    Ok(db::MailFilter::Seqs { shard, seqs })
}

fn to_proto(e: dead_letters::Entry) -> DeadLetter {
    DeadLetter {
        shard: shard(e.shard),
        seq: u(e.seq),
        order_id: e.order_id,
        r#type: e.event_type,
        routing_key: e.routing_key,
        reason: e.reason,
        redrive_count: e.redrive_count,
        message_id: e.message_id,
        body_bytes: u32::try_from(e.body_bytes).unwrap_or(u32::MAX),
        published_at: e.timestamp.map(|s| prost_types::Timestamp {
            seconds: i64::try_from(s).unwrap_or(0),
            nanos: 0,
        }),
    }
}

#[tonic::async_trait]
impl MailAdmin for MailAdminGrpc {
    async fn list_held(
        &self,
        request: Request<ListHeldRequest>,
    ) -> Result<Response<ListHeldResponse>, Status> {
        let limit = kit::limit(request.get_ref().limit, 100, 1000)?;
        let (total, orders) = db::held(&self.pool, limit).await.map_err(db_err)?;
        // Which of the missing seqs are dead letters: one look at the queue for all of them.
        let mut dead = HashSet::new();
        let mut unavailable = String::new();
        if !orders.is_empty() {
            match self
                .dead_letters
                .list(dead_letters::MAX_SCAN, &Filter::All)
                .await
            {
                Ok((_, entries)) => dead.extend(entries.iter().map(|e| (e.shard, e.seq))),
                Err(e) => unavailable = format!("{e:#}"),
            }
        }
        Ok(Response::new(ListHeldResponse {
            held_events: u(total),
            orders: orders
                .into_iter()
                .map(|o| {
                    let waiting_for = o.waiting_for();
                    HeldOrder {
                        shard: shard(o.shard),
                        order_id: o.order_id,
                        processed_up_to: o.last_seq.map(u),
                        waiting_for: u(waiting_for),
                        held_seqs: o.seqs.iter().map(|s| u(*s)).collect(),
                        oldest_held_age_ms: u(o.oldest_age_ms),
                        waiting_for_dead_lettered: dead.contains(&(o.shard, waiting_for)),
                    }
                })
                .collect(),
            dead_letters_unavailable: unavailable,
        }))
    }

    async fn release_held(
        &self,
        request: Request<ReleaseHeldRequest>,
    ) -> Result<Response<ReleaseHeldResponse>, Status> {
        self.token.authorize(&request)?;
        let operator = kit::operator(&request);
        let r = request.into_inner();
        if r.order_id <= 0 {
            return Err(Status::invalid_argument(format!(
                "order_id: {} is not a positive integer",
                r.order_id
            )));
        }
        let reason = kit::reason(&r.reason)?;
        let done = release::release(&self.pool, r.order_id, &reason, operator.as_deref())
            .await
            .map_err(|e| match e {
                release::ReleaseError::NothingHeld(_) => Status::not_found(e.to_string()),
                release::ReleaseError::Corrupt(m) => {
                    tracing::error!("[admin] release of order {}: {m}", r.order_id);
                    Status::failed_precondition(m)
                }
                release::ReleaseError::Db(e) => db_err(e),
            })?;
        if !done.already {
            tracing::warn!(
                "[admin] released order={} skipped={:?} released={:?} operator={operator:?} reason={reason:?}",
                r.order_id,
                done.skipped,
                done.released
            );
        }
        Ok(Response::new(ReleaseHeldResponse {
            skipped: done.skipped.into_iter().map(u).collect(),
            released: done.released.into_iter().map(u).collect(),
            already_released: done.already,
        }))
    }

    async fn list_dead_letters(
        &self,
        request: Request<ListDeadLettersRequest>,
    ) -> Result<Response<ListDeadLettersResponse>, Status> {
        let r = request.get_ref();
        let limit = kit::limit(r.limit, 100, 1000)?;
        let filter = match kit::order_id(r.order_id)? {
            Some(o) => Filter::Order(o),
            None => Filter::All,
        };
        let (count, entries) = self
            .dead_letters
            .list(limit as usize, &filter)
            .await
            .map_err(|e| broker_unavailable(&e))?;
        Ok(Response::new(ListDeadLettersResponse {
            count,
            messages: entries.into_iter().map(to_proto).collect(),
        }))
    }

    async fn redrive_dead_letters(
        &self,
        request: Request<RedriveDeadLettersRequest>,
    ) -> Result<Response<RedriveDeadLettersResponse>, Status> {
        self.token.authorize(&request)?;
        let operator = kit::operator(&request);
        let r = request.into_inner();
        let filter = dead_letter_filter(r.filter)?;
        let reason = kit::reason(&r.reason)?;
        let limit = kit::limit(r.limit, 100, 1000)? as usize;
        if let Some(own) = self.dead_letters.own_user()
            && !self.trusted_publishers.is_empty()
            && !self.trusted_publishers.iter().any(|t| t == own)
        {
            return Err(Status::failed_precondition(format!(
                "redriven messages are published as mail-svc's broker user {own:?}, which \
                 TRUSTED_PUBLISHERS ({}) does not list: they would be dead-lettered again. Add \
                 {own:?} to TRUSTED_PUBLISHERS (nothing changed)",
                self.trusted_publishers.join(",")
            )));
        }
        // Recorded before the first move, with the dead letters about to move.
        let record = |about_to_move: Vec<dead_letters::Entry>| {
            let detail = serde_json::json!({
                "filter": format!("{filter:?}"),
                "orders": about_to_move.iter().map(|e| e.order_id).collect::<Vec<_>>(),
                // The seq is 0 for a body that cannot be read; the message id still names it.
                "message_ids": about_to_move.iter().map(|e| e.message_id.as_str()).collect::<Vec<_>>(),
            });
            let ids: Vec<i64> = about_to_move.iter().map(|e| e.seq).collect();
            let (reason, operator) = (reason.as_str(), operator.as_deref());
            async move {
                let mut conn = self.pool.acquire().await?;
                let mut tx = conn.begin().await?;
                let id = outbox_kit::admin::audit(
                    &mut tx,
                    "RedriveDeadLetters",
                    &ids,
                    reason,
                    operator,
                    detail,
                )
                .await?;
                tx.commit().await?;
                Ok(id)
            }
        };
        let result = self.dead_letters.redrive(&filter, limit, record).await;
        let (done, err) = match result {
            Ok(done) => (done, None),
            Err((done, e)) => (done, Some(e)),
        };
        if let Some(id) = done.audit_id {
            // The row says what was about to move; now what did (fewer when the broker failed).
            let ids: Vec<i64> = done.moved.iter().map(|e| e.seq).collect();
            let outcome = serde_json::json!({
                "moved_message_ids": done.moved.iter().map(|e| e.message_id.as_str()).collect::<Vec<_>>(),
                "error": err.as_ref().map(ToString::to_string),
            });
            let complete = async {
                let mut conn = self.pool.acquire().await?;
                outbox_kit::admin::audit_outcome(&mut conn, id, &ids, outcome).await
            };
            if let Err(e) = complete.await {
                tracing::error!(error = %e, audit_id = id, redriven = ?ids,
                    "[admin] redriven, but its audit row could not be completed");
            }
        }
        match err {
            None => Ok(Response::new(RedriveDeadLettersResponse {
                redriven: done.moved.iter().map(|e| u(e.seq)).collect(),
                remaining: done.remaining,
            })),
            Some(e @ DeadLetterError::NoMatch(_)) => Err(Status::not_found(e.to_string())),
            Some(DeadLetterError::NotRecorded(e)) => {
                tracing::error!(error = %e, reason, operator, "[admin] redrive not done: its audit row could not be written");
                Err(db_err(e))
            }
            Some(DeadLetterError::Broker(e)) => {
                let moved: Vec<i64> = done.moved.iter().map(|e| e.seq).collect();
                tracing::warn!(error = format!("{e:#}"), ?moved, "[admin] redrive stopped");
                Err(Status::unavailable(format!(
                    "redrive stopped after moving seq {moved:?}: {e:#}"
                )))
            }
        }
    }

    async fn list_failed_mails(
        &self,
        request: Request<ListFailedMailsRequest>,
    ) -> Result<Response<ListFailedMailsResponse>, Status> {
        let r = request.get_ref();
        let limit = kit::limit(r.limit, 100, 1000)?;
        let order_id = kit::order_id(r.order_id)?;
        let (count, mails) = db::failed(&self.pool, limit, order_id)
            .await
            .map_err(db_err)?;
        Ok(Response::new(ListFailedMailsResponse {
            count: u(count),
            mails: mails
                .into_iter()
                .map(|m| FailedMail {
                    shard: shard(m.shard),
                    seq: u(m.seq),
                    order_id: m.order_id,
                    r#type: m.event_type,
                    recipient: m.recipient,
                    last_error: m.last_error.unwrap_or_default(),
                    attempts: u32::try_from(m.attempts).unwrap_or(0),
                    failed_at: Some(timestamp(m.failed_at)),
                })
                .collect(),
        }))
    }

    async fn retry_mails(
        &self,
        request: Request<RetryMailsRequest>,
    ) -> Result<Response<RetryMailsResponse>, Status> {
        self.token.authorize(&request)?;
        let operator = kit::operator(&request);
        let r = request.into_inner();
        let filter = mail_filter(r.filter)?;
        let reason = kit::reason(&r.reason)?;
        let mut conn = self.pool.acquire().await.map_err(db_err)?;
        let mut tx = conn.begin().await.map_err(db_err)?;
        let out = db::retry(&mut tx, &filter, &reason, operator.as_deref())
            .await
            .map_err(db_err)?;
        if !out.unknown.is_empty() {
            return Err(Status::not_found(format!(
                "no mail for seq {:?} (nothing changed)",
                out.unknown
            )));
        }
        if out.retried.is_empty() && out.not_failed.is_empty() {
            return Err(Status::not_found(match filter {
                db::MailFilter::Order(o) => {
                    format!("order {o} has no FAILED mail (nothing changed)")
                }
                _ => "there is no FAILED mail (nothing changed)".to_owned(),
            }));
        }
        tx.commit().await.map_err(db_err)?;
        if !out.retried.is_empty() {
            tracing::warn!(retried = ?out.retried, operator, reason, "[admin] mails retried");
        }
        Ok(Response::new(RetryMailsResponse {
            retried: out.retried.into_iter().map(u).collect(),
            not_failed: out.not_failed.into_iter().map(u).collect(),
        }))
    }
}
