//! Invoices: a small service that embeds the three outbox crates, as any user of them would.
//!
//! - **Write** ([`Billing::issue`], [`Billing::pay`], [`Billing::void`]): each change of an
//!   invoice appends its [`InvoiceEvent`] to `billing.invoice_outbox` in the caller's
//!   transaction (crate `outbox`): the event exists if and only if the change commits.
//! - **Relay** ([`Billing::relay`]): publishes that outbox to a topic exchange
//!   (`outbox-relay`).
//! - **Read** ([`Billing::consume`], in [`ledger`]): applies each event to `billing.ledger`
//!   exactly once, in each invoice's order (`outbox-inbox`); poison is dead-lettered.

pub mod event;
pub mod ledger;

use std::sync::Arc;

use outbox::{NewEvent, Outbox};
use outbox_inbox::Inbox;
use outbox_relay::{Relay, Settings, Status};
use sqlx::{PgConnection, PgPool};
use tokio_util::sync::CancellationToken;

pub use event::InvoiceEvent;

/// The outbox table (and, with suffixes, its chain heads and quarantine).
pub const OUTBOX_TABLE: &str = "billing.invoice_outbox";
/// The inbox tables' prefix: `billing.ledger_inbox_progress` and `billing.ledger_inbox_held`.
pub const INBOX_PREFIX: &str = "billing.ledger_inbox";
/// The relay's leader lock: each outbox relayed from one database needs a key of its own.
pub const RELAY_LOCK_KEY: i64 = 0x696e_766f_6963_6573; // "invoices"

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The invoice's state refuses the change (nothing was written).
    #[error("invoice {id}: {reason}")]
    Refused { id: i64, reason: &'static str },
    /// An amount that is not positive.
    #[error("amount_cents must be positive, got {0}")]
    InvalidAmount(i64),
    /// A payload that is no [`InvoiceEvent`].
    #[error("{0}")]
    BadEvent(String),
    /// An event the outbox refuses.
    #[error(transparent)]
    Outbox(#[from] outbox::Error),
    /// The inbox's names.
    #[error(transparent)]
    Inbox(#[from] outbox_inbox::Error),
    /// A migration.
    #[error(transparent)]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// The broker.
    #[error(transparent)]
    Amqp(#[from] lapin::Error),
    /// A dead letter the broker did not take.
    #[error(transparent)]
    DeadLetter(#[from] outbox_inbox::amqp::BrokerError),
    /// The database.
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

/// The service: its database, its outbox, its inbox. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Billing {
    pool: PgPool,
    outbox: Outbox,
    inbox: Inbox,
}

impl Billing {
    /// The service on `pool`, with its tables migrated: its own, the outbox's and the inbox's
    /// (each migrator keeps a history of its own).
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
        let event = InvoiceEvent::InvoiceIssued {
            customer,
            amount_cents,
        };
        self.append(tx, id, event).await?;
        Ok(id)
    }

    /// Records a payment of an open invoice (at most what it owes) in the caller's transaction.
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

    /// Voids an open invoice in the caller's transaction, writing off what it still owes.
    pub async fn void(&self, tx: &mut PgConnection, id: i64, reason: &str) -> Result<(), Error> {
        let written_off_cents = owed(tx, id).await?;
        sqlx::query("update billing.invoices set status = 'voided' where id = $1")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        let reason = reason.to_owned();
        let event = InvoiceEvent::InvoiceVoided {
            reason,
            written_off_cents,
        };
        self.append(tx, id, event).await
    }

    /// Wakes the relay now rather than at its next poll. Call it after commit, never inside the
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
        let (event_type, routing_key) = event.type_and_routing_key();
        let payload = serde_json::to_vec(&event).expect("an invoice event serialises");
        // The crate chains the invoice's events (`prev_seq`) under a lock in `tx`, and stores
        // the current span's trace context with the row.
        let new = NewEvent::new("invoice", id, event_type, routing_key, payload)
            .content_type("application/json");
        self.outbox.append(tx, new).await?;
        Ok(())
    }

    /// The relay of this service's outbox (in the service's database, its pool's), publishing to
    /// `exchange` until `shutdown`; run it with `tokio::spawn(relay.run())`. Any number may run:
    /// one leads, the others stand by.
    pub fn relay(&self, amqp_url: &str, exchange: &str, shutdown: CancellationToken) -> Relay {
        let mut settings = Settings::new(amqp_url, exchange);
        settings.table = self.outbox.table().clone();
        settings.leader_lock_key = RELAY_LOCK_KEY;
        let status = Arc::new(Status::default());
        Relay::new(settings, self.pool.clone(), status, shutdown)
    }
}

fn positive(amount_cents: i64) -> Result<(), Error> {
    match amount_cents {
        1.. => Ok(()),
        _ => Err(Error::InvalidAmount(amount_cents)),
    }
}

/// What an open invoice still owes, with its row locked in the caller's transaction: the
/// invoice first, the head of its event chain (by the append) after. Every path takes them in
/// this order, so two changes of one invoice wait for each other instead of deadlocking.
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
