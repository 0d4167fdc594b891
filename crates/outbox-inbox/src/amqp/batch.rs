//! One batch of deliveries, from judging to settling: poison dead-lettered unread, the rest
//! applied in one transaction, committed, then dead-lettered (chain conflicts) or acked together.

use std::{
    ops::ControlFlow,
    sync::atomic::{AtomicBool, Ordering},
    time::Duration,
};

use futures::future::Shared;
use lapin::{
    message::Delivery,
    options::{BasicAckOptions, BasicRejectOptions},
};
use outbox_support::backoff::Backoff;
use sqlx::{Connection, PgConnection, PgPool};

use super::{
    BrokerError, DeadLetterChannel, Judge, Unsettled, ack_together, bounded_reason, broker_call,
    counts::Counters,
    hooks::{Hooks, Retrying},
};
use crate::{
    ApplyError, Envelope, Handler, Inbox, Outcome,
    failure::Failure,
    failure::{classify, sqlstate},
};

/// How a session's transactions are tried (see the `Consumer`'s builder).
#[derive(Debug, Clone, Copy)]
pub(super) struct Attempts {
    pub(super) timeout: Option<Duration>,
    pub(super) backoff_min: Duration,
    pub(super) backoff_max: Duration,
}

/// What every batch of one session shares.
pub(super) struct Work<'a, J, M, S: Future> {
    pub(super) pool: &'a PgPool,
    pub(super) inbox: &'a Inbox,
    pub(super) judge: &'a J,
    pub(super) make_handler: &'a M,
    pub(super) dead_letters: &'a DeadLetterChannel<'a>,
    pub(super) unsettled: &'a Unsettled,
    pub(super) counters: &'a Counters,
    pub(super) hooks: &'a Hooks,
    pub(super) attempts: Attempts,
    /// Set when a handler stopped the consumer ([`Handler::committed`]).
    pub(super) stopped: &'a AtomicBool,
    pub(super) shutdown: Shared<S>,
}

/// A failed attempt at a transaction.
struct Failed {
    failure: Failure,
    message: String,
    sqlstate: Option<String>,
    /// The handler failed (not the inbox's own statements).
    handler: bool,
}

impl Failed {
    fn db(e: sqlx::Error) -> Self {
        Self {
            failure: classify(&e),
            sqlstate: sqlstate(&e),
            message: e.to_string(),
            handler: false,
        }
    }

    fn handler<H: Handler>(e: &H::Error) -> Self
    where
        H::Error: std::fmt::Display,
    {
        Self {
            failure: H::classify(e),
            message: e.to_string(),
            sqlstate: None,
            handler: true,
        }
    }
}

/// What one delivery's committed (or conflicting) transaction came to.
enum Applied<H> {
    Committed(Outcome, H),
    Conflict(String),
}

impl<J, M, H, S> Work<'_, J, M, S>
where
    J: Judge,
    M: Fn() -> H,
    H: Handler,
    H::Error: std::fmt::Display,
    S: Future<Output = ()>,
{
    fn stop(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        tracing::warn!("the handler stopped the consumer; unacked deliveries return to the queue");
    }

    fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    /// Judges every delivery (dead-lettering the poison on its own), applies the rest in one
    /// transaction and settles each as its outcome says. A database failure of the transaction
    /// tries the whole batch again after a backoff; a handler failure, or an event's data
    /// ([`Failure::Poison`]), applies the members one by one instead, so that one failing member
    /// holds back only itself. `Err` is a broker failure: what is not settled yet returns to the
    /// queue with the channel.
    pub(super) async fn batch(&self, deliveries: Vec<Delivery>) -> Result<(), BrokerError> {
        if self.is_stopped() {
            return Ok(());
        }
        let mut valid = Vec::with_capacity(deliveries.len());
        let mut envelopes = Vec::with_capacity(deliveries.len());
        for delivery in deliveries {
            match self.judge.judge(&delivery) {
                Ok(envelope) => {
                    valid.push(delivery);
                    envelopes.push(envelope);
                }
                Err(reason) => {
                    if !self.dead_letter(&delivery, &reason).await? {
                        return Ok(());
                    }
                }
            }
        }
        if valid.len() == 1 {
            return self.one(&valid[0], &envelopes[0]).await;
        }
        if valid.is_empty() {
            return Ok(());
        }
        let mut backoff = self.backoff();
        let (outcomes, mut handler) = loop {
            match self.attempt(self.apply_batch(&envelopes)).await {
                Ok(applied) => break applied,
                Err(f) if f.handler || f.failure == Failure::Poison => {
                    tracing::warn!(
                        error = %f.message,
                        size = valid.len(),
                        "a batch failed; applying its deliveries one by one"
                    );
                    for (delivery, envelope) in valid.iter().zip(&envelopes) {
                        if self.is_stopped() {
                            break;
                        }
                        self.one(delivery, envelope).await?;
                    }
                    return Ok(());
                }
                Err(f) => {
                    let what = format!("a batch of {}", valid.len());
                    if !self.wait_retry(&what, &f, &mut backoff).await {
                        return Ok(());
                    }
                }
            }
        };
        let mut acks = Vec::with_capacity(valid.len());
        let mut conflicts = Vec::new();
        let mut alone = Vec::new();
        for ((delivery, envelope), outcome) in valid.into_iter().zip(&envelopes).zip(outcomes) {
            match outcome {
                Some(Outcome::Conflict(conflict)) => {
                    conflicts.push((delivery, handler.conflict_reason(&conflict)));
                }
                Some(outcome) => {
                    self.counters.committed(&outcome);
                    if handler.committed(envelope, &outcome).is_break() {
                        self.stop();
                        return Ok(());
                    }
                    acks.push(delivery);
                }
                // Left out of the batch (its chain could not be staged): applied on its own.
                None => alone.push((delivery, envelope)),
            }
        }
        for (delivery, reason) in conflicts {
            if !self.dead_letter(&delivery, &reason).await? {
                return Ok(());
            }
        }
        ack_together(self.unsettled, &acks).await?;
        if !alone.is_empty() {
            tracing::warn!(
                deliveries = alone.len(),
                "a chain of the batch could not be staged; applying its deliveries on their own"
            );
        }
        for (delivery, envelope) in alone {
            if self.is_stopped() {
                break;
            }
            self.one(&delivery, envelope).await?;
        }
        Ok(())
    }

    /// One attempt at the whole batch in one transaction: [`Inbox::apply_batch`] (the locks and
    /// plan, each chain's events staged or handled, the inbox's and the handler's writes in one
    /// statement), [`Handler::before_commit`], the commit.
    async fn apply_batch(
        &self,
        envelopes: &[Envelope],
    ) -> Result<(Vec<Option<Outcome>>, H), Failed> {
        let mut conn = self.pool.acquire().await.map_err(Failed::db)?;
        let applied = self.apply_batch_on(&mut conn, envelopes).await;
        if let Err(f) = &applied
            && f.failure == Failure::Reconnect
        {
            // An unusable session (read-only after a switchover, broken) is not handed back to
            // the pool, or the next attempt may get it again, forever.
            conn.close_on_drop();
        }
        applied
    }

    async fn apply_batch_on(
        &self,
        conn: &mut PgConnection,
        envelopes: &[Envelope],
    ) -> Result<(Vec<Option<Outcome>>, H), Failed> {
        let mut tx = conn.begin().await.map_err(Failed::db)?;
        let mut handler = (self.make_handler)();
        let outcomes = match self
            .inbox
            .apply_batch(&mut tx, envelopes, &mut handler)
            .await
        {
            Ok(outcomes) => outcomes,
            // Dropping `tx` rolls back.
            Err(ApplyError::Handler { source, .. }) => return Err(Failed::handler::<H>(&source)),
            Err(ApplyError::Db(e)) => return Err(Failed::db(e)),
        };
        let committed: Vec<&Outcome> = outcomes
            .iter()
            .flatten()
            .filter(|o| !matches!(o, Outcome::Conflict(_)))
            .collect();
        handler
            .before_commit(&mut tx, &committed)
            .await
            .map_err(|e| Failed::handler::<H>(&e))?;
        tx.commit().await.map_err(Failed::db)?;
        Ok((outcomes, handler))
    }

    /// Applies one delivery in a transaction of its own (tried again after a backoff until it
    /// commits or shutdown comes) and settles it: acked, dead-lettered (a chain conflict, or an
    /// event whose data the database refuses), or left unacked at shutdown.
    async fn one(&self, delivery: &Delivery, envelope: &Envelope) -> Result<(), BrokerError> {
        let mut backoff = self.backoff();
        loop {
            match self.attempt(self.apply(envelope)).await {
                Ok(Applied::Committed(outcome, mut handler)) => {
                    self.counters.committed(&outcome);
                    if handler.committed(envelope, &outcome) == ControlFlow::Break(()) {
                        self.stop();
                        return Ok(());
                    }
                    return ack_together(self.unsettled, std::slice::from_ref(delivery)).await;
                }
                Ok(Applied::Conflict(reason)) => {
                    return self.dead_letter(delivery, &reason).await.map(drop);
                }
                Err(f) if f.failure == Failure::Poison => {
                    let reason = format!("cannot be stored: {}", f.message);
                    return self.dead_letter(delivery, &reason).await.map(drop);
                }
                Err(f) => {
                    let what = format!("seq {}", envelope.seq);
                    if !self.wait_retry(&what, &f, &mut backoff).await {
                        // Left unacked: the broker redelivers it when the channel closes.
                        return Ok(());
                    }
                }
            }
        }
    }

    /// One attempt: a transaction of its own, committed unless the event conflicts with its
    /// chain (then nothing was written, and it can never apply).
    async fn apply(&self, envelope: &Envelope) -> Result<Applied<H>, Failed> {
        let mut conn = self.pool.acquire().await.map_err(Failed::db)?;
        let applied = self.apply_on(&mut conn, envelope).await;
        if let Err(f) = &applied
            && f.failure == Failure::Reconnect
        {
            // As in `apply_batch`.
            conn.close_on_drop();
        }
        applied
    }

    async fn apply_on(
        &self,
        conn: &mut PgConnection,
        envelope: &Envelope,
    ) -> Result<Applied<H>, Failed> {
        let mut tx = conn.begin().await.map_err(Failed::db)?;
        let mut handler = (self.make_handler)();
        match self.inbox.apply(&mut tx, envelope, &mut handler).await {
            // Dropping `tx` rolls back: nothing was written.
            Ok(Outcome::Conflict(conflict)) => {
                Ok(Applied::Conflict(handler.conflict_reason(&conflict)))
            }
            // Processed (with the held successors it released), held, or a duplicate.
            Ok(outcome) => {
                handler
                    .before_commit(&mut tx, &[&outcome])
                    .await
                    .map_err(|e| Failed::handler::<H>(&e))?;
                tx.commit().await.map_err(Failed::db)?;
                Ok(Applied::Committed(outcome, handler))
            }
            Err(ApplyError::Handler { source, .. }) => Err(Failed::handler::<H>(&source)),
            Err(ApplyError::Db(e)) => Err(Failed::db(e)),
        }
    }

    fn backoff(&self) -> Backoff {
        Backoff::new(self.attempts.backoff_min, self.attempts.backoff_max)
    }

    /// Runs one attempt, bounded by the attempt timeout: no answer within it is a broken
    /// connection ([`Failure::Reconnect`]). A socket gone silent gives no error at all; only
    /// this frees the attempt.
    async fn attempt<T>(
        &self,
        attempt: impl Future<Output = Result<T, Failed>>,
    ) -> Result<T, Failed> {
        let Some(limit) = self.attempts.timeout else {
            return attempt.await;
        };
        tokio::time::timeout(limit, attempt)
            .await
            .unwrap_or_else(|_| {
                Err(Failed {
                    failure: Failure::Reconnect,
                    message: format!("no answer from the database within {limit:?}"),
                    sqlstate: None,
                    handler: false,
                })
            })
    }

    /// Counts and reports a failed attempt and waits out the backoff; false when shutdown came
    /// first.
    async fn wait_retry(&self, what: &str, f: &Failed, backoff: &mut Backoff) -> bool {
        let delay = backoff.next_delay();
        self.counters.retried();
        tracing::warn!(
            error = %f.message,
            sqlstate = f.sqlstate.as_deref().unwrap_or("-"),
            failure = ?f.failure,
            failures = backoff.failures(),
            ?delay,
            "{what} failed; trying it again"
        );
        if let Some(on_retry) = &self.hooks.on_retry {
            on_retry(&Retrying {
                what,
                error: &f.message,
                sqlstate: f.sqlstate.as_deref(),
                failure: f.failure,
                attempt: backoff.failures(),
                delay,
            });
        }
        tokio::select! {
            () = self.shutdown.clone() => false,
            () = tokio::time::sleep(delay) => true,
        }
    }

    /// Publishes the delivery to the dead-letter exchange with `reason`, records it (the
    /// consumer's `record_dead_letters`, tried until it is written or shutdown comes) and acks
    /// it once the broker confirmed the copy; when the copy cannot be published, rejects it so
    /// that the queue's own dead-lettering takes it (without the reason). False: shutdown came
    /// before it was recorded, and it is left unacked (it comes back and is judged again).
    async fn dead_letter(&self, delivery: &Delivery, reason: &str) -> Result<bool, BrokerError> {
        let reason = bounded_reason(reason);
        tracing::warn!(%reason, tag = delivery.delivery_tag, "dead-lettering a delivery");
        let copied = self.dead_letters.publish(delivery, &reason).await;
        if !self.record_dead_letter(delivery, &reason).await {
            return Ok(false);
        }
        let settled = match copied {
            // The copy is safe: only now the original goes.
            Ok(()) => broker_call("ack", delivery.ack(BasicAckOptions::default())).await,
            Err(e) => {
                tracing::error!(error = %e, %reason, "dead-letter publish failed; rejecting");
                let reject = delivery.reject(BasicRejectOptions { requeue: false });
                broker_call("reject", reject).await
            }
        };
        settled?;
        self.unsettled.settled(&[delivery.delivery_tag]);
        self.counters.dead_lettered();
        if let Some(on_dead_letter) = &self.hooks.on_dead_letter {
            on_dead_letter(delivery, &reason);
        }
        Ok(true)
    }

    /// Runs the `record_dead_letters` hook until it succeeds (or fails on the event's data:
    /// logged, not retried); false when shutdown came first.
    async fn record_dead_letter(&self, delivery: &Delivery, reason: &str) -> bool {
        let Some(record) = &self.hooks.record_dead_letter else {
            return true;
        };
        let mut backoff = self.backoff();
        loop {
            let attempt = async {
                let mut conn = self.pool.acquire().await.map_err(Failed::db)?;
                let recorded = record(&mut conn, delivery, reason)
                    .await
                    .map_err(Failed::db);
                if let Err(f) = &recorded
                    && f.failure == Failure::Reconnect
                {
                    conn.close_on_drop();
                }
                recorded
            };
            match self.attempt(attempt).await {
                Ok(()) => return true,
                Err(f) if f.failure == Failure::Poison => {
                    tracing::error!(error = %f.message, "cannot record a dead letter");
                    return true;
                }
                Err(f) => {
                    if !self
                        .wait_retry("recording a dead letter", &f, &mut backoff)
                        .await
                    {
                        return false;
                    }
                }
            }
        }
    }
}
