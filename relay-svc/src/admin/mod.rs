//! `relay.admin.v1.RelayAdmin`: the operator's way out of a backlog and out of quarantine, and
//! the replay of published events to one consumer, served on the relay's gRPC port and wrapped
//! by `outboxctl backlog` / `outboxctl quarantine` / `outboxctl replay`.
//!
//! Reads need nothing; `RequeueQuarantined`, `DropQuarantined` and `Replay` need the
//! `ADMIN_TOKEN` ([`outbox_kit::admin`]), take a reason, and write an `admin_actions` row (the
//! moves out of quarantine in the same transaction as their change; the replay before it sends
//! anything, completed with what was sent, see [`replay`]). The moves are idempotent: a seq an earlier call of the same action moved is
//! reported as `already_*`, a seq nobody knows is NOT_FOUND, and then nothing changes at all.
//! They work on a standby as well as on the leader (they only touch the tables).
//!
//! Shards (`RELAY_SHARDS`): the listings read every shard and name each row's shard (figures
//! summed, rows merged oldest first by [`oldest_first`]); seqs are per shard, so a mutation acts
//! on the one shard its request names ([`Databases::one`], default 0) and writes its audit row in
//! that shard's database. Without `RELAY_SHARDS` there is one shard, 0, and every answer is the
//! unsharded one. A listing reads the shards at once and answers from those that answer, naming
//! the others in `unavailable_shards` ([`from_every_shard`]): an operator needs the backlog most
//! when a shard is down.
//!
//! Fleet mode (`FLEET_DATABASE_URL`): the shards are the registry's databases, each by its
//! source id ([`targets`]); any instance answers for every database, owned or not.

pub mod db;
pub mod replay;
pub mod targets;

use std::{future::Future, sync::Arc, time::Duration};

use outbox_kit::admin::{self as kit, AdminToken};
use outbox_proto::relay::admin::v1::{
    DropQuarantinedRequest, DropQuarantinedResponse, ListBacklogRequest, ListBacklogResponse,
    ListQuarantinedRequest, ListQuarantinedResponse, OutboxRow, QuarantineSelector, QuarantinedRow,
    ReplayRequest, ReplayResponse, RequeueQuarantinedRequest, RequeueQuarantinedResponse,
    UnavailableShard, relay_admin_server::RelayAdmin,
};
use tonic::{Request, Response, Status};

use outbox_relay::{Error, operator::Unsent};

use self::{
    db::Move,
    targets::{Databases, Target},
};
use crate::error::grpc_status;

/// How long a listing waits for one shard's database before it leaves the shard out (a pool
/// refuses within its 5 s acquire timeout; this bounds a server that accepts and then hangs).
pub const SHARD_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves `relay.admin.v1.RelayAdmin` from the outbox database of each shard.
#[derive(Debug, Clone)]
pub struct RelayAdminGrpc {
    databases: Arc<Databases>,
    token: AdminToken,
}

impl RelayAdminGrpc {
    /// Serves `databases` (see [`Databases::fixed`] and [`Databases::fleet`]).
    pub fn new(databases: Databases, token: AdminToken) -> Self {
        Self {
            databases: Arc::new(databases),
            token,
        }
    }
}

/// What the shards that answered a listing said, each with its shard, lowest shard first, and
/// the shards left out.
#[derive(Debug)]
pub struct Answered<T> {
    pub parts: Vec<(u32, T)>,
    pub unavailable: Vec<UnavailableShard>,
}

/// Runs one read per shard (shard 0's first) at once, each bounded by [`SHARD_READ_TIMEOUT`]. A
/// shard that fails or does not answer is left out and named; when none answers, the call fails
/// as the first shard's read did (with one shard: exactly as that read).
pub async fn from_every_shard<T, F>(
    reads: impl IntoIterator<Item = (u32, F)>,
) -> Result<Answered<T>, Status>
where
    F: Future<Output = Result<T, Error>>,
{
    let bounded = reads.into_iter().map(|(shard, read)| async move {
        let answer = match tokio::time::timeout(SHARD_READ_TIMEOUT, read).await {
            Ok(answer) => answer.map_err(grpc_status),
            Err(_) => Err(Status::unavailable(format!(
                "no answer within {SHARD_READ_TIMEOUT:?}"
            ))),
        };
        (shard, answer)
    });
    let mut answered = Answered {
        parts: Vec::new(),
        unavailable: Vec::new(),
    };
    let mut first_failure = None;
    for (shard, answer) in futures::future::join_all(bounded).await {
        match answer {
            Ok(part) => answered.parts.push((shard, part)),
            Err(status) => {
                tracing::warn!(
                    shard,
                    error = status.message(),
                    "[admin] shard left out of a listing"
                );
                answered.unavailable.push(UnavailableShard {
                    shard,
                    error: status.message().to_owned(),
                });
                first_failure.get_or_insert(status);
            }
        }
    }
    match first_failure {
        Some(status) if answered.parts.is_empty() => Err(status),
        _ => Ok(answered),
    }
}

/// Merges each shard's rows (each list in seq order, tagged with its shard, lowest shard first)
/// into at most `limit` rows tagged with their shard: each shard's rows keep their seq order, and
/// across shards the older head goes first (a tie: the lower shard). One shard: its rows as they
/// are.
pub fn oldest_first<T>(
    per_shard: Vec<(u32, Vec<T>)>,
    age_ms: impl Fn(&T) -> i64,
    limit: usize,
) -> Vec<(u32, T)> {
    let mut lists: Vec<_> = per_shard
        .into_iter()
        .map(|(shard, rows)| (shard, rows.into_iter().peekable()))
        .collect();
    let mut merged = Vec::new();
    while merged.len() < limit {
        let mut best: Option<(usize, i64)> = None;
        for (i, (_, rows)) in lists.iter_mut().enumerate() {
            if let Some(age) = rows.peek().map(&age_ms)
                && best.is_none_or(|(_, b)| age > b)
            {
                best = Some((i, age));
            }
        }
        let Some((i, _)) = best else { break };
        let (shard, rows) = &mut lists[i];
        let row = rows.next().expect("peeked");
        merged.push((*shard, row));
    }
    merged
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

/// A validated limit (1 ..= 1000) as a length.
fn limit_len(limit: i64) -> usize {
    usize::try_from(limit).unwrap_or(0)
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
        let targets = self.databases.all().await?;
        let answered = from_every_shard(
            targets
                .iter()
                .map(|t| (t.shard, Self::backlog_of(t, limit))),
        )
        .await?;
        let (mut count, mut quarantined, mut held_back) = (0, 0, 0);
        let mut per_shard = Vec::with_capacity(answered.parts.len());
        for (shard, part) in answered.parts {
            count += part.count;
            quarantined += part.quarantined;
            held_back += part.held_back;
            per_shard.push((shard, part.oldest));
        }
        let rows = oldest_first(per_shard, |r| r.age_ms, limit_len(limit));
        let oldest_age_ms = rows.first().map_or(0, |(_, r)| u(r.age_ms));
        Ok(Response::new(ListBacklogResponse {
            count,
            oldest_age_ms,
            rows: rows
                .into_iter()
                .map(|(shard, r)| OutboxRow {
                    seq: u(r.seq),
                    order_id: r.aggregate_id,
                    r#type: r.event_type,
                    prev_seq: r.prev_seq.map(u),
                    age_ms: u(r.age_ms),
                    shard,
                })
                .collect(),
            quarantined,
            held_back,
            unavailable_shards: answered.unavailable,
        }))
    }

    async fn list_quarantined(
        &self,
        request: Request<ListQuarantinedRequest>,
    ) -> Result<Response<ListQuarantinedResponse>, Status> {
        let r = request.get_ref();
        let limit = kit::limit(r.limit, 100, 1000)?;
        let order_id = kit::order_id(r.order_id)?;
        let targets = self.databases.all().await?;
        let answered = from_every_shard(targets.iter().map(|t| {
            (t.shard, async move {
                let rows = t.operator.quarantined(&t.pool, limit, order_id).await?;
                let (count, _) = t.operator.quarantine_counts(&t.pool).await?;
                Ok((u(count), rows))
            })
        }))
        .await?;
        let mut count = 0;
        let mut per_shard = Vec::with_capacity(answered.parts.len());
        for (shard, (c, rows)) in answered.parts {
            count += c;
            per_shard.push((shard, rows));
        }
        let rows = oldest_first(per_shard, |q| q.age_ms, limit_len(limit));
        Ok(Response::new(ListQuarantinedResponse {
            count,
            rows: rows
                .into_iter()
                .map(|(shard, q)| QuarantinedRow {
                    seq: u(q.seq),
                    order_id: q.aggregate_id,
                    r#type: q.event_type,
                    prev_seq: q.prev_seq.map(u),
                    reason: q.reason,
                    age_ms: u(q.age_ms),
                    quarantined_age_ms: u(q.quarantined_age_ms),
                    held_back: u(q.held_back),
                    shard,
                })
                .collect(),
            unavailable_shards: answered.unavailable,
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
            .move_quarantined(Move::Requeue, r.shard, r.select, &r.reason, operator)
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
            .move_quarantined(Move::Drop, r.shard, r.select, &r.reason, operator)
            .await?;
        Ok(Response::new(DropQuarantinedResponse {
            dropped: seqs(dropped.done),
            already_dropped: seqs(dropped.already),
        }))
    }

    async fn replay(
        &self,
        request: Request<ReplayRequest>,
    ) -> Result<Response<ReplayResponse>, Status> {
        self.token.authorize(&request)?;
        let operator = kit::operator(&request);
        let r = request.into_inner();
        let (replay, reason) = replay::checked(&r)?;
        let t = self.databases.one(r.shard).await?;
        let seqs = replay::run(&t.broker, &t.pool, &replay, &reason, operator.as_deref()).await?;
        Ok(Response::new(ReplayResponse {
            seqs,
            queue: replay.queue,
        }))
    }
}

/// One shard's part of a backlog listing.
struct BacklogPart {
    count: u64,
    oldest: Vec<Unsent>,
    quarantined: u64,
    held_back: u64,
}

impl RelayAdminGrpc {
    async fn backlog_of(t: &Target, limit: i64) -> Result<BacklogPart, Error> {
        let (operator, pool) = (&t.operator, &t.pool);
        let backlog = operator.backlog(pool).await?;
        let oldest = operator.oldest_unsent(pool, limit).await?;
        let (quarantined, held_back) = operator.quarantine_counts(pool).await?;
        Ok(BacklogPart {
            count: backlog.rows,
            oldest,
            quarantined: u(quarantined),
            held_back: u(held_back),
        })
    }

    /// Validates the shard, selector and reason, moves the rows and writes the audit row in one
    /// transaction of the shard's database, committed only when every selected seq was known
    /// there (NOT_FOUND otherwise).
    async fn move_quarantined(
        &self,
        action: Move,
        shard: u32,
        select: Option<QuarantineSelector>,
        reason: &str,
        operator: Option<String>,
    ) -> Result<db::Moved, Status> {
        let sel = selector(select)?;
        let reason = kit::reason(reason)?;
        let t = self.databases.one(shard).await?;
        let mut tx = db::begin(&t.pool).await.map_err(grpc_status)?;
        let moved = db::move_quarantined(
            action,
            &t.operator,
            &mut tx,
            &sel,
            &reason,
            operator.as_deref(),
        )
        .await
        .map_err(grpc_status)?;
        if let Some(status) = not_found(&sel, &moved) {
            // Several shards: the same seq may well exist on another one.
            return Err(match self.databases.several() {
                false => status,
                true => Status::not_found(format!("shard {shard}: {}", status.message())),
            });
        }
        tx.commit()
            .await
            .map_err(Error::from_db)
            .map_err(grpc_status)?;
        tracing::warn!(
            shard, done = ?moved.done, already = ?moved.already, operator, reason,
            "[admin] {} quarantined rows",
            match action {
                Move::Requeue => "requeued",
                Move::Drop => "dropped",
            }
        );
        Ok(moved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_shard_is_one_the_relay_serves() {
        let settings = outbox_relay::Settings::new(outbox_kit::defaults::AMQP_URL, "x");
        for (shard, count, ok) in [
            (0, 1, true),
            (1, 1, false),
            (0, 2, true),
            (1, 2, true),
            (2, 2, false),
            (u32::MAX, 3, false),
        ] {
            let pools = (0..count)
                .map(|_| {
                    sqlx::postgres::PgPoolOptions::new()
                        .connect_lazy("postgres://127.0.0.1/none")
                        .expect("a lazy pool")
                })
                .collect();
            match Databases::fixed(pools, &settings).one(shard).await {
                Ok(t) => assert!(ok && t.shard == shard, "{shard} of {count}"),
                Err(e) => {
                    assert!(!ok, "{shard} of {count}: {e:?}");
                    assert_eq!(e.code(), tonic::Code::InvalidArgument);
                    assert!(e.message().starts_with("shard: "), "{}", e.message());
                }
            }
        }
    }

    /// (seq, age) rows.
    fn merge(per_shard: &[&[(i64, i64)]], limit: usize) -> Vec<(u32, i64)> {
        oldest_first(
            (0..)
                .zip(per_shard.iter().map(|rows| rows.to_vec()))
                .collect(),
            |r| r.1,
            limit,
        )
        .into_iter()
        .map(|(shard, r)| (shard, r.0))
        .collect()
    }

    #[test]
    fn shards_merge_oldest_first_keeping_each_shards_seq_order() {
        // One shard: as it is, even where the ages are not in seq order.
        assert_eq!(
            merge(&[&[(1, 5), (2, 9), (3, 1)]], 10),
            [(0, 1), (0, 2), (0, 3)]
        );
        assert_eq!(merge(&[&[(1, 5), (2, 9)]], 1), [(0, 1)]);
        // Two shards, the same seqs: the older head first, a tie to the lower shard.
        assert_eq!(
            merge(&[&[(1, 50), (2, 20)], &[(1, 70), (2, 20), (3, 10)]], 10),
            [(1, 1), (0, 1), (0, 2), (1, 2), (1, 3)]
        );
        assert_eq!(merge(&[&[(1, 50)], &[(1, 70)]], 1), [(1, 1)]);
        assert_eq!(merge(&[&[], &[(4, 1)]], 10), [(1, 4)]);
        assert!(merge(&[&[], &[]], 10).is_empty());
    }

    #[test]
    fn a_left_out_shard_leaves_the_others_tags_alone() {
        let merged = oldest_first(vec![(0, vec![(1, 5)]), (2, vec![(1, 9)])], |r| r.1, 10);
        let tagged: Vec<(u32, i64)> = merged.into_iter().map(|(s, r)| (s, r.0)).collect();
        assert_eq!(tagged, [(2, 1), (0, 1)]);
    }

    #[tokio::test]
    async fn a_listing_answers_from_the_shards_that_answer() {
        let reads = [Ok(10), Err(Error::OutboxMissing), Ok(30)].map(|r| async move { r });
        let answered = from_every_shard((0..).zip(reads))
            .await
            .expect("two shards answered");
        assert_eq!(answered.parts, [(0, 10), (2, 30)]);
        let left_out: Vec<u32> = answered.unavailable.iter().map(|u| u.shard).collect();
        assert_eq!(left_out, [1]);
        assert!(
            answered.unavailable[0].error.contains("outbox"),
            "{:?}",
            answered.unavailable
        );

        // No shard answers: the call fails as shard 0's read did.
        let reads = [Err(Error::OutboxMissing), Err(Error::OutboxMissing)]
            .map(|r: Result<i32, Error>| async move { r });
        let e = from_every_shard((0..).zip(reads))
            .await
            .expect_err("no shard answered");
        assert_eq!(e.code(), tonic::Code::Unavailable);
    }
}
