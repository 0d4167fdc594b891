//! One batch of deliveries, from judging to settling: poison dead-lettered unread, the rest
//! applied in one transaction, committed, then dead-lettered (chain conflicts) or acked together.

use futures::future::Shared;
use lapin::{
    message::Delivery,
    options::{BasicAckOptions, BasicRejectOptions},
};
use outbox_support::backoff::Backoff;
use sqlx::PgPool;

use super::{
    BrokerError, DeadLetterChannel, Disposition, Judge, RETRY_MAX, RETRY_MIN, Unsettled,
    ack_together, broker_call, counts::Counters,
};
use crate::{ApplyError, Envelope, Handler, Inbox, Outcome};

/// What every batch of one session shares.
pub(super) struct Work<'a, J, M, S: Future> {
    pub(super) pool: &'a PgPool,
    pub(super) inbox: &'a Inbox,
    pub(super) judge: &'a J,
    pub(super) make_handler: &'a M,
    pub(super) dead_letters: &'a DeadLetterChannel<'a>,
    pub(super) unsettled: &'a Unsettled,
    pub(super) counters: &'a Counters,
    pub(super) shutdown: Shared<S>,
}

impl<J, M, H, S> Work<'_, J, M, S>
where
    J: Judge,
    M: Fn() -> H,
    H: Handler,
    H::Error: std::fmt::Display,
    S: Future<Output = ()>,
{
    /// Judges every delivery (dead-lettering the poison on its own), applies the rest in one
    /// transaction and settles each as its outcome says. When the transaction fails (a handler
    /// error on one member, a database error), nothing of it was written: the members are applied
    /// one by one instead, so that one failing member holds back only itself. `Err` is a broker
    /// failure: what is not settled yet returns to the queue with the channel.
    pub(super) async fn batch(&self, deliveries: Vec<Delivery>) -> Result<(), BrokerError> {
        let mut valid = Vec::with_capacity(deliveries.len());
        let mut envelopes = Vec::with_capacity(deliveries.len());
        for delivery in deliveries {
            match self.judge.judge(&delivery) {
                Ok(envelope) => {
                    valid.push(delivery);
                    envelopes.push(envelope);
                }
                Err(reason) => self.dead_letter(&delivery, &reason).await?,
            }
        }
        if valid.len() == 1 {
            return self.one(&valid[0], &envelopes[0]).await;
        }
        if valid.is_empty() {
            return Ok(());
        }
        let outcomes = match self.apply_batch(&envelopes).await {
            Ok(outcomes) => outcomes,
            Err(error) => {
                tracing::warn!(
                    %error,
                    size = valid.len(),
                    "a batch failed; applying its deliveries one by one"
                );
                for (delivery, envelope) in valid.iter().zip(&envelopes) {
                    self.one(delivery, envelope).await?;
                }
                return Ok(());
            }
        };
        let mut acks = Vec::with_capacity(valid.len());
        for (delivery, outcome) in valid.into_iter().zip(outcomes) {
            match outcome {
                Some(Outcome::Conflict(conflict)) => {
                    self.dead_letter(&delivery, &conflict.to_string()).await?;
                }
                Some(outcome) => {
                    self.counters.committed(&outcome);
                    acks.push(delivery);
                }
                // Only an excluded chain has none, and this batch excludes none.
                None => acks.push(delivery),
            }
        }
        ack_together(self.unsettled, &acks).await
    }

    /// One attempt at the whole batch in one transaction: the locks and plan of
    /// [`Inbox::batch`], the handler for every event it processes (in each chain's order), the
    /// inbox's writes in one statement, the commit.
    async fn apply_batch(&self, envelopes: &[Envelope]) -> Result<Vec<Option<Outcome>>, String> {
        let mut tx = self.pool.begin().await.map_err(|e| e.to_string())?;
        let batch = self
            .inbox
            .batch(&mut tx, envelopes)
            .await
            .map_err(|e| e.to_string())?;
        let mut handler = (self.make_handler)();
        for p in batch.processed() {
            let e = p.envelope;
            if let Err(error) = handler.handle(&mut tx, e).await {
                // Dropping `tx` rolls back.
                return Err(format!("handling seq {}: {error}", e.seq));
            }
        }
        let outcomes = batch
            .write(&mut tx, |_| {})
            .await
            .map_err(|e| e.to_string())?;
        tx.commit().await.map_err(|e| e.to_string())?;
        Ok(outcomes)
    }

    /// Applies one delivery in a transaction of its own (retried after a backoff until it
    /// commits or shutdown comes) and settles it.
    async fn one(&self, delivery: &Delivery, envelope: &Envelope) -> Result<(), BrokerError> {
        match self.dispose(envelope).await {
            Disposition::Ack => ack_together(self.unsettled, std::slice::from_ref(delivery)).await,
            Disposition::DeadLetter { reason } => self.dead_letter(delivery, &reason).await,
            // Left unacked: the broker redelivers it when the channel closes.
            _ => Ok(()),
        }
    }

    /// The delivery's disposition: applied, and retried after a backoff on a database or
    /// handler error, until it commits or shutdown comes.
    async fn dispose(&self, envelope: &Envelope) -> Disposition {
        let mut backoff = Backoff::new(RETRY_MIN, RETRY_MAX);
        loop {
            match self.apply(envelope).await {
                Ok(disposition) => return disposition,
                Err(error) => {
                    let delay = backoff.next_delay();
                    tracing::warn!(
                        %error,
                        seq = envelope.seq,
                        aggregate_id = envelope.aggregate_id,
                        failures = backoff.failures(),
                        ?delay,
                        "applying a delivery failed; trying it again"
                    );
                    tokio::select! {
                        () = self.shutdown.clone() => return Disposition::Retry,
                        () = tokio::time::sleep(delay) => {}
                    }
                }
            }
        }
    }

    /// One attempt: a transaction of its own, committed unless the event conflicts with its
    /// chain (then nothing was written, and it can never apply).
    async fn apply(&self, envelope: &Envelope) -> Result<Disposition, String> {
        let mut tx = self.pool.begin().await.map_err(|e| e.to_string())?;
        let mut handler = (self.make_handler)();
        match self.inbox.apply(&mut tx, envelope, &mut handler).await {
            Ok(Outcome::Conflict(conflict)) => Ok(Disposition::dead_letter(conflict.to_string())),
            // Processed (with the held successors it released), held, or a duplicate.
            Ok(outcome) => {
                tx.commit().await.map_err(|e| e.to_string())?;
                self.counters.committed(&outcome);
                Ok(Disposition::Ack)
            }
            // Dropping `tx` rolls back.
            Err(ApplyError::Handler { seq, source }) => {
                Err(format!("handling seq {seq}: {source}"))
            }
            Err(ApplyError::Db(e)) => Err(e.to_string()),
        }
    }

    /// Publishes the delivery to the dead-letter exchange with `reason` and acks it once the
    /// broker confirmed the copy; when the copy cannot be published, rejects it so that the
    /// queue's own dead-lettering takes it (without the reason).
    async fn dead_letter(&self, delivery: &Delivery, reason: &str) -> Result<(), BrokerError> {
        tracing::warn!(%reason, tag = delivery.delivery_tag, "dead-lettering a delivery");
        let settled = match self.dead_letters.publish(delivery, reason).await {
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
        Ok(())
    }
}
