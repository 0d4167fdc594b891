//! The events of an invoice: the JSON payloads of its outbox rows.

use serde::{Deserialize, Serialize};

/// What happens to an invoice. Tagged with its type (`{"type":"InvoicePaid",...}`), so that a
/// held event, of which the inbox keeps only the payload, still says what it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum InvoiceEvent {
    /// Issued to `customer`, who owes `amount_cents`.
    InvoiceIssued { customer: String, amount_cents: i64 },
    /// A payment; the invoice is paid once its payments reach its amount.
    InvoicePaid { amount_cents: i64 },
    /// Cancelled; what was still owed is written off.
    InvoiceVoided {
        reason: String,
        written_off_cents: i64,
    },
}

impl InvoiceEvent {
    /// Its type (the outbox row's `event_type`, the JSON tag) and the routing key it is
    /// published under (a consumer binds `invoice.#`, or one key).
    pub fn type_and_routing_key(&self) -> (&'static str, &'static str) {
        match self {
            Self::InvoiceIssued { .. } => ("InvoiceIssued", "invoice.issued"),
            Self::InvoicePaid { .. } => ("InvoicePaid", "invoice.paid"),
            Self::InvoiceVoided { .. } => ("InvoiceVoided", "invoice.voided"),
        }
    }

    /// What it does to the amount owed: its ledger line's amount.
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
