//! The read side: the consumer that applies each event to `billing.ledger` exactly once, in
//! each invoice's chain order, whatever order and however often the broker delivers it. The
//! loop is the crate's ([`outbox_inbox::amqp::Consumer`]); this service brings its judge and
//! its handler.

use std::num::NonZeroU16;

use lapin::Connection;
use outbox_inbox::{
    Envelope, Handler,
    amqp::{Consumer, Topology},
};
use sqlx::PgConnection;
use tokio_util::sync::CancellationToken;

use crate::{Billing, Error, InvoiceEvent};

/// Deliveries the consumer holds unacked; the rest wait in the queue for any instance.
const PREFETCH: NonZeroU16 = NonZeroU16::new(32).expect("non-zero");

impl Billing {
    /// Consumes `topology`'s queue (declaring it, with its dead-letter queue) into the ledger
    /// until `shutdown`, one delivery at a time. A database error is retried after a backoff; a
    /// broker error ends it, and what is unacked goes back to the queue (a production consumer
    /// reconnects: `Consumer::run_reconnecting` does, over a list of brokers).
    pub async fn consume(
        &self,
        amqp: &Connection,
        topology: &Topology,
        shutdown: CancellationToken,
    ) -> Result<(), Error> {
        let consumer = Consumer::new(topology.clone()).with_prefetch(PREFETCH);
        consumer
            .run(
                amqp,
                &self.pool,
                &self.inbox,
                judge,
                || LedgerLine,
                shutdown.cancelled(),
            )
            .await?;
        Ok(())
    }
}

/// Poison (a payload that is no invoice event) is dead-lettered before any database work: it
/// never enters a transaction, nor the held table, where it would stop its invoice's chain.
fn judge(envelope: &Envelope) -> Result<(), String> {
    InvoiceEvent::parse(&envelope.payload).map(drop)
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
