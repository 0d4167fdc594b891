//! The read side: the consumer that applies each event to `billing.ledger` exactly once, in
//! each invoice's chain order, whatever order and however often the broker delivers it.

use futures::StreamExt;
use lapin::{
    Connection,
    message::Delivery,
    options::{BasicAckOptions, BasicConsumeOptions, BasicQosOptions},
    types::FieldTable,
};
use outbox_inbox::{
    ApplyError, Envelope, Handler, Outcome,
    amqp::{DeadLetterChannel, Disposition, Topology},
};
use sqlx::PgConnection;
use tokio_util::sync::CancellationToken;

use crate::{Billing, Error, InvoiceEvent};

/// Deliveries the consumer holds unacked; the rest wait in the queue for any instance.
const PREFETCH: u16 = 32;

impl Billing {
    /// Consumes `topology`'s queue (declaring it, with its dead-letter queue) into the ledger
    /// until `shutdown`. A broker or database error ends it, and what is unacked goes back to
    /// the queue (a production consumer reconnects and retries: see mail-svc's).
    pub async fn consume(
        &self,
        amqp: &Connection,
        topology: &Topology,
        shutdown: CancellationToken,
    ) -> Result<(), Error> {
        let ch = amqp.create_channel().await?;
        topology.declare(&ch).await?;
        // A confirm-mode channel of its own: poison is acked only once the broker has taken
        // its dead-letter copy.
        let dead_letters = DeadLetterChannel::new(amqp, topology);
        dead_letters.open().await?;
        ch.basic_qos(PREFETCH, BasicQosOptions::default()).await?;
        // Manual acks (no_ack is false): a delivery leaves the queue only once it is settled.
        let options = BasicConsumeOptions::default();
        let queue = topology.queue.as_str().into();
        let mut deliveries = ch
            .basic_consume(queue, "".into(), options, FieldTable::default())
            .await?;
        loop {
            let delivery = tokio::select! {
                _ = shutdown.cancelled() => break,
                next = deliveries.next() => match next {
                    Some(delivery) => delivery?,
                    None => break,
                },
            };
            if let Disposition::DeadLetter { reason } = self.apply(&delivery).await? {
                dead_letters.publish(&delivery, &reason).await?;
            }
            // Only after the commit: a crash before the ack redelivers the message, and the
            // inbox skips it as a duplicate.
            delivery.ack(BasicAckOptions::default()).await?;
        }
        dead_letters.close().await;
        let _ = ch.close(200, "bye".into()).await;
        Ok(())
    }

    /// Applies one delivery in a transaction of its own and says how to settle it.
    async fn apply(&self, delivery: &Delivery) -> Result<Disposition, Error> {
        // Judged before any database work: poison never enters a transaction, nor the held
        // table, where it would stop its invoice's chain.
        let judged = Envelope::from_delivery(delivery)
            .and_then(|envelope| InvoiceEvent::parse(&envelope.payload).map(|_| envelope));
        let envelope = match judged {
            Ok(envelope) => envelope,
            Err(reason) => return Ok(Disposition::dead_letter(reason)),
        };
        let mut tx = self.pool.begin().await?;
        let outcome = self.inbox.apply(&mut tx, &envelope, &mut LedgerLine).await;
        match outcome.map_err(|e| match e {
            ApplyError::Handler { source, .. } => source,
            ApplyError::Db(e) => Error::Db(e),
        })? {
            // Nothing was written for it (dropping `tx` rolls back), and it can never apply.
            Outcome::Conflict(conflict) => Ok(Disposition::dead_letter(conflict.to_string())),
            // Processed (with the held successors it released), held, or a duplicate.
            _ => {
                tx.commit().await?;
                Ok(Disposition::Ack)
            }
        }
    }
}

/// The inbox's handler: one ledger line per event, written in the inbox's transaction.
struct LedgerLine;

impl Handler for LedgerLine {
    type Error = Error;

    async fn handle(&mut self, tx: &mut PgConnection, event: &Envelope) -> Result<(), Error> {
        // Every delivery was judged, so this fails only on a held row someone edited.
        let invoice = InvoiceEvent::parse(&event.payload).map_err(Error::BadEvent)?;
        sqlx::query(
            "insert into billing.ledger (invoice_id, seq, event, amount_cents)
             values ($1, $2, $3, $4)",
        )
        .bind(event.aggregate_id)
        .bind(event.seq)
        .bind(invoice.type_and_routing_key().0)
        .bind(invoice.owed_change())
        .execute(tx)
        .await?;
        Ok(())
    }
}
