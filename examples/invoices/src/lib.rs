//! Invoices: a small service that embeds the three outbox crates, as a user of them would.
//!
//! - **Write** ([`Billing::issue`], [`Billing::pay`], [`Billing::void`]): each change of an
//!   invoice appends its [`InvoiceEvent`] to `billing.invoice_outbox` in the caller's
//!   transaction (`outbox`), so the event exists if and only if the change commits.
//! - **Relay** ([`Billing::relay`]): publishes that outbox to a topic exchange (`outbox-relay`).
//! - **Read** ([`Billing::consume`]): applies each event to `billing.ledger` exactly once and in
//!   each invoice's order, whatever order and however often the broker delivers it
//!   (`outbox-inbox`); poison goes to the dead-letter queue with its reason.

use std::sync::Arc;

use futures::StreamExt;
use lapin::{
    Connection,
    message::Delivery,
    options::{BasicAckOptions, BasicConsumeOptions, BasicQosOptions},
    types::FieldTable,
};
use outbox::{NewEvent, Outbox};
use outbox_inbox::{
    Envelope, Handler, Inbox, Outcome,
    amqp::{DeadLetterChannel, Disposition, Topology},
};
use outbox_relay::{Relay, Settings, Status};
use serde::{Deserialize, Serialize};
use sqlx::{PgConnection, PgPool, postgres::PgConnectOptions};
use tokio_util::sync::CancellationToken;

/// The outbox table (and, with suffixes, its heads and quarantine).
pub const OUTBOX_TABLE: &str = "billing.invoice_outbox";
/// The inbox tables' prefix: `billing.ledger_inbox_progress` and `billing.ledger_inbox_held`.
pub const INBOX_PREFIX: &str = "billing.ledger_inbox";
/// The relay's leader lock: every outbox relayed from one database needs its own key.
pub const RELAY_LOCK_KEY: i64 = 0x696e_766f_6963_6573; // "invoices"
/// Deliveries the consumer holds unacked; the rest wait in the queue for any instance.
const PREFETCH: u16 = 32;

/// What happens to an invoice: the JSON payload of its outbox events. Tagged with its type, so a
/// held event (the inbox keeps only the payload) still says what it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum InvoiceEvent {
    /// Issued to `customer`, who owes `amount_cents`.
    InvoiceIssued {
        /// Who owes it.
        customer: String,
        /// What is owed.
        amount_cents: i64,
    },
    /// A payment (the invoice is paid once the payments reach its amount).
    InvoicePaid {
        /// What was paid.
        amount_cents: i64,
    },
    /// Cancelled; what was still owed is written off.
    InvoiceVoided {
        /// Why.
        reason: String,
        /// What was still owed.
        written_off_cents: i64,
    },
}

impl InvoiceEvent {
    /// The event's type, also its `type` tag in the JSON.
    pub fn name(&self) -> &'static str {
        match self {
            Self::InvoiceIssued { .. } => "InvoiceIssued",
            Self::InvoicePaid { .. } => "InvoicePaid",
            Self::InvoiceVoided { .. } => "InvoiceVoided",
        }
    }

    /// The routing key it is published under (consumers bind `invoice.#` or a single key).
    pub fn routing_key(&self) -> &'static str {
        match self {
            Self::InvoiceIssued { .. } => "invoice.issued",
            Self::InvoicePaid { .. } => "invoice.paid",
            Self::InvoiceVoided { .. } => "invoice.voided",
        }
    }

    /// What it does to the amount owed: the ledger line's amount.
    pub fn owed_change(&self) -> i64 {
        match self {
            Self::InvoiceIssued { amount_cents, .. } => *amount_cents,
            Self::InvoicePaid { amount_cents } => -amount_cents,
            Self::InvoiceVoided {
                written_off_cents, ..
            } => -written_off_cents,
        }
    }

    /// Parses a payload; the error is the reason a poison message is dead-lettered with.
    pub fn parse(payload: &[u8]) -> Result<Self, String> {
        serde_json::from_slice(payload).map_err(|e| format!("not an invoice event: {e}"))
    }
}

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request the invoice's state refuses.
    #[error("invoice {id}: {reason}")]
    Refused {
        /// The invoice.
        id: i64,
        /// Why.
        reason: &'static str,
    },
    /// An amount that is not positive.
    #[error("amount_cents must be positive, got {0}")]
    InvalidAmount(i64),
    /// A payload the ledger cannot read (only from a released held event: the consumer judges
    /// every delivery before it applies it).
    #[error("{0}")]
    BadEvent(String),
    /// The outbox refused an append.
    #[error(transparent)]
    Outbox(#[from] outbox::Error),
    /// The inbox's tables.
    #[error(transparent)]
    Inbox(#[from] outbox_inbox::Error),
    /// Migrating.
    #[error(transparent)]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The broker.
    #[error(transparent)]
    Amqp(#[from] lapin::Error),
    /// A dead-letter publish.
    #[error(transparent)]
    DeadLetter(#[from] outbox_inbox::amqp::BrokerError),
    /// The database.
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

impl From<outbox_inbox::ApplyError<Error>> for Error {
    fn from(e: outbox_inbox::ApplyError<Error>) -> Self {
        match e {
            outbox_inbox::ApplyError::Handler { source, .. } => source,
            outbox_inbox::ApplyError::Db(e) => Error::Db(e),
        }
    }
}

/// The service: its database, its outbox and its inbox.
#[derive(Debug, Clone)]
pub struct Billing {
    pool: PgPool,
    outbox: Outbox,
    inbox: Inbox,
}

impl Billing {
    /// The service on `pool`, its tables migrated: its own, the outbox's, the inbox's (each with
    /// its own migration history).
    pub async fn new(pool: PgPool) -> Result<Self, Error> {
        sqlx::migrate!("./migrations").run(&pool).await?;
        let outbox = Outbox::new(OUTBOX_TABLE)?;
        outbox.table().migrator().run(&pool).await?;
        let inbox = Inbox::new(INBOX_PREFIX)?;
        inbox.tables().migrator()?.run(&pool).await?;
        Ok(Self {
            pool,
            outbox,
            inbox,
        })
    }

    /// Issues an invoice in the caller's transaction; returns its id.
    pub async fn issue(
        &self,
        tx: &mut PgConnection,
        customer: &str,
        amount_cents: i64,
    ) -> Result<i64, Error> {
        positive(amount_cents)?;
        let id = sqlx::query_scalar(
            "insert into billing.invoices (customer, amount_cents) values ($1, $2) returning id",
        )
        .bind(customer)
        .bind(amount_cents)
        .fetch_one(&mut *tx)
        .await?;
        let customer = customer.to_owned();
        self.append(
            tx,
            id,
            InvoiceEvent::InvoiceIssued {
                customer,
                amount_cents,
            },
        )
        .await?;
        Ok(id)
    }

    /// Records a payment of an open invoice in the caller's transaction (at most what is owed).
    pub async fn pay(
        &self,
        tx: &mut PgConnection,
        id: i64,
        amount_cents: i64,
    ) -> Result<(), Error> {
        positive(amount_cents)?;
        if amount_cents > owed(tx, id).await? {
            return Err(Error::Refused {
                id,
                reason: "the payment exceeds what is owed",
            });
        }
        sqlx::query(
            "update billing.invoices set paid_cents = paid_cents + $2,
                    status = case when paid_cents + $2 = amount_cents then 'paid' else status end
              where id = $1",
        )
        .bind(id)
        .bind(amount_cents)
        .execute(&mut *tx)
        .await?;
        self.append(tx, id, InvoiceEvent::InvoicePaid { amount_cents })
            .await
    }

    /// Voids an open invoice in the caller's transaction, writing off what is still owed.
    pub async fn void(&self, tx: &mut PgConnection, id: i64, reason: &str) -> Result<(), Error> {
        let written_off_cents = owed(tx, id).await?;
        sqlx::query("update billing.invoices set status = 'voided' where id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        let reason = reason.to_owned();
        self.append(
            tx,
            id,
            InvoiceEvent::InvoiceVoided {
                reason,
                written_off_cents,
            },
        )
        .await
    }

    /// Wakes the relay now rather than at its next poll. After commit, never inside the
    /// transaction (a NOTIFY there would serialise every committing writer).
    pub async fn notify(&self) -> Result<(), Error> {
        Ok(self.outbox.notify(&self.pool).await?)
    }

    async fn append(
        &self,
        tx: &mut PgConnection,
        id: i64,
        event: InvoiceEvent,
    ) -> Result<(), Error> {
        let payload = serde_json::to_vec(&event).expect("an invoice event serialises");
        // No trace context here: the crate takes the current span's.
        let new = NewEvent::new("invoice", id, event.name(), event.routing_key(), payload)
            .content_type("application/json");
        self.outbox.append(tx, new).await?;
        Ok(())
    }

    /// The relay of this service's outbox, publishing to `exchange` until `shutdown`; run it with
    /// `tokio::spawn(relay.run())`. Any number may run: one leads, the others stand by.
    pub fn relay(
        &self,
        database_url: &str,
        amqp_url: &str,
        exchange: &str,
        shutdown: CancellationToken,
    ) -> Result<Relay, Error> {
        let mut settings = Settings::new(database_url, amqp_url, exchange);
        settings.table = self.outbox.table().clone();
        settings.leader_lock_key = RELAY_LOCK_KEY;
        let pg: PgConnectOptions = database_url.parse()?;
        let status = Arc::new(Status::default());
        Ok(Relay::new(
            settings,
            pg,
            self.pool.clone(),
            status,
            shutdown,
        ))
    }

    /// Consumes `topology`'s queue (declaring it, with its dead-letter queue) into the ledger
    /// until `shutdown`. A broker or database error ends it; what is unacked comes back to the
    /// queue. (A production consumer reconnects and retries; mail-svc's shows how.)
    pub async fn consume(
        &self,
        amqp: &Connection,
        topology: &Topology,
        shutdown: CancellationToken,
    ) -> Result<(), Error> {
        let ch = amqp.create_channel().await?;
        topology.declare(&ch).await?;
        // A confirm-mode channel of its own: a poison message is acked only once the broker
        // has taken its dead-letter copy.
        let dead_letters = DeadLetterChannel::new(amqp, topology);
        dead_letters.open().await?;
        ch.basic_qos(PREFETCH, BasicQosOptions::default()).await?;
        // Manual acks (no_ack is false): a delivery leaves the queue only once it is settled.
        let mut deliveries = ch
            .basic_consume(
                topology.queue.as_str().into(),
                "".into(),
                BasicConsumeOptions::default(),
                FieldTable::default(),
            )
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
            // Only now, after the commit: a crash before the ack redelivers the message, and
            // the inbox skips it as a duplicate.
            delivery.ack(BasicAckOptions::default()).await?;
        }
        dead_letters.close().await;
        let _ = ch.close(200, "bye".into()).await;
        Ok(())
    }

    /// Applies one delivery in its own transaction and says how to settle it.
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
        match self
            .inbox
            .apply(&mut tx, &envelope, &mut LedgerWriter)
            .await?
        {
            // Nothing was written for it (the transaction rolls back when dropped); it never
            // applies, so it is not retried.
            Outcome::Conflict(conflict) => Ok(Disposition::dead_letter(conflict.to_string())),
            // Processed (with the held successors it released), held, or a duplicate.
            _ => {
                tx.commit().await?;
                Ok(Disposition::Ack)
            }
        }
    }
}

/// The inbox's handler: one ledger line per event, in the inbox's transaction.
struct LedgerWriter;

impl Handler for LedgerWriter {
    type Error = Error;

    async fn handle(&mut self, tx: &mut PgConnection, event: &Envelope) -> Result<(), Error> {
        let invoice = InvoiceEvent::parse(&event.payload).map_err(Error::BadEvent)?;
        sqlx::query(
            "insert into billing.ledger (invoice_id, seq, event, amount_cents)
             values ($1, $2, $3, $4)",
        )
        .bind(event.aggregate_id)
        .bind(event.seq)
        .bind(invoice.name())
        .bind(invoice.owed_change())
        .execute(tx)
        .await?;
        Ok(())
    }
}

fn positive(amount_cents: i64) -> Result<(), Error> {
    if amount_cents > 0 {
        Ok(())
    } else {
        Err(Error::InvalidAmount(amount_cents))
    }
}

/// What an open invoice still owes, its row locked for the caller's transaction: the invoice
/// first, the outbox's head of its chain after (every path locks in this order: no deadlocks).
async fn owed(tx: &mut PgConnection, id: i64) -> Result<i64, Error> {
    let row: Option<(String, i64)> = sqlx::query_as(
        "select status, amount_cents - paid_cents from billing.invoices where id = $1 for update",
    )
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    match row {
        Some((status, owed)) if status == "open" => Ok(owed),
        Some(_) => Err(Error::Refused {
            id,
            reason: "not open",
        }),
        None => Err(Error::Refused {
            id,
            reason: "no such invoice",
        }),
    }
}
