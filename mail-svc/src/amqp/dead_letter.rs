//! Dead-lettering a delivery: the confirmed copy with its reason (`outbox-inbox`'s
//! [`DeadLetterChannel`]), this instance's durable dead-letter counter, then the ack, or a reject
//! the broker dead-letters itself when the copy cannot be published.

use lapin::{
    message::Delivery,
    options::{BasicAckOptions, BasicRejectOptions},
};
use outbox_inbox::amqp::{
    DEAD_LETTER_ATTEMPTS, DeadLetterChannel, Unsettled, bounded_reason, broker_call,
};
use sqlx::{Postgres, pool::PoolConnection};
use tokio_util::sync::CancellationToken;

use super::consumer::{Consumer, Handled};
use crate::{db, retry};

impl Consumer {
    /// Dead-letters a delivery with `reason`, counts it, and settles it (ack, or a reject the
    /// broker dead-letters itself when the copy cannot be published).
    pub(super) async fn reject(
        &self,
        dl: &DeadLetterChannel<'_>,
        unsettled: &Unsettled,
        delivery: &Delivery,
        reason: &str,
        shutdown: &CancellationToken,
    ) -> anyhow::Result<Handled> {
        let reason = bounded_reason(reason);
        let seq = delivery
            .properties
            .message_id()
            .as_ref()
            .map_or("?", |m| m.as_str());
        tracing::warn!("[mail] dead-letter seq={seq} reason={reason}");
        let copied = dl.publish(delivery, &reason).await;
        if !self.count_dead_letter(shutdown).await {
            // Shutting down: the original is not settled; it comes back and is judged (and
            // counted) again. If the copy was published, the dead-letter queue has two.
            return Ok(Handled::Shutdown);
        }
        metrics::counter!(crate::metrics::DEAD_LETTERED).increment(1);
        match copied {
            Ok(()) => {
                broker_call("ack", delivery.ack(BasicAckOptions::default())).await?;
            }
            Err(e) => {
                // The broker moves it to the same dead-letter queue through the queue's
                // x-dead-letter-exchange, with an `x-death` header instead of our reason.
                tracing::error!(
                    error = format!("{e:#}"),
                    "[mail] dead-letter seq={seq}: the copy could not be published \
                     {DEAD_LETTER_ATTEMPTS} times; rejecting it so the broker dead-letters it"
                );
                let reject = delivery.reject(BasicRejectOptions { requeue: false });
                broker_call("reject", reject).await?;
            }
        }
        unsettled.settled(&[delivery.delivery_tag]);
        Ok(Handled::Acked)
    }

    /// Adds one to this instance's dead-letter counter row; false when shutdown came first.
    async fn count_dead_letter(&self, shutdown: &CancellationToken) -> bool {
        let (pool, instance) = (&self.pool, self.instance.as_str());
        let counted = retry::until_done(shutdown, "counting a dead letter", || async move {
            let mut conn: PoolConnection<Postgres> = pool.acquire().await?;
            let result = db::bump(&mut conn, instance, db::DEAD_LETTERED, 1).await;
            if let Err(e) = &result
                && retry::classify(e) == retry::Failure::Reconnect
            {
                // As in `process::apply`: a read-only or broken session is not reused.
                conn.close_on_drop();
            }
            result
        })
        .await;
        match counted {
            None => false,
            Some(Err(e)) => {
                tracing::error!(error = %e, "cannot count a dead letter");
                true
            }
            Some(Ok(())) => true,
        }
    }
}
