//! Judging a delivery before any database work: the envelope to apply, or why it never can.

use lapin::message::Delivery;

use crate::Envelope;

/// Turns a delivery into the [`Envelope`] a [`Consumer`](super::Consumer) applies, or refuses
/// it with the reason its dead letter carries (`x-death-reason`). Called once per delivery,
/// before any database work: a refused delivery never reaches a transaction.
///
/// A closure `Fn(&Envelope) -> Result<(), String>` is a judge: the delivery is read with
/// [`Envelope::from_delivery`] (an `outbox-relay` message), then the closure may refuse it (e.g.
/// a payload your handler cannot decode). Implement the trait yourself for messages in another
/// format, or to look at the delivery's properties (who published it, its content type).
pub trait Judge {
    /// The envelope of `delivery`, or why it can never apply.
    fn judge(&self, delivery: &Delivery) -> Result<Envelope, String>;
}

impl<F> Judge for F
where
    F: Fn(&Envelope) -> Result<(), String>,
{
    fn judge(&self, delivery: &Delivery) -> Result<Envelope, String> {
        let envelope = Envelope::from_delivery(delivery)?;
        self(&envelope).map(|()| envelope)
    }
}
