//! The message a mail becomes: its one recipient, and the `Message-ID` and `X-Idempotency-Key`
//! derived from the mail's idempotency key, which stay the same when a mail is sent again (the
//! duplicate window), so that a provider can drop the second copy.

use lettre::{
    Message,
    message::{
        Mailbox,
        header::{ContentType, HeaderName, HeaderValue},
    },
};

use crate::{db::MailRow, mail};

/// The message and its one recipient; an error when the mail cannot be built (permanent).
pub(super) fn build_message(
    m: &MailRow,
    from: &Mailbox,
) -> Result<(lettre::Address, Message), String> {
    let to: Mailbox = m
        .recipient
        .parse()
        .map_err(|e| format!("recipient {:?}: {e}", m.recipient))?;
    let key_header =
        HeaderName::new_from_ascii("X-Idempotency-Key".to_owned()).map_err(|e| e.to_string())?;
    let address = to.email.clone();
    let message = Message::builder()
        .message_id(Some(mail::message_id(&m.idempotency_key)))
        .raw_header(HeaderValue::new(key_header, m.idempotency_key.clone()))
        .from(from.clone())
        .to(to)
        .subject(m.subject.clone())
        .header(ContentType::TEXT_PLAIN)
        .body(m.body.clone())
        .map_err(|e| format!("building the message: {e}"))?;
    Ok((address, message))
}
