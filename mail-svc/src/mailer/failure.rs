//! Whose failure a failed send is: the SMTP stage it reached, the reply, and the rule
//! ([`verdict`]) that turns them into "this mail, for good", "this mail, for now" or "the server
//! refuses us". Pure, so the rule has its table test here.

use lettre::transport::smtp::Error as SmtpError;

/// Where in the SMTP session a send failed: it says whose failure it is (see [`verdict`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Composing the message, before any session (an unusable recipient address): ours.
    Build,
    /// TCP, TLS, the greeting, EHLO, STARTTLS.
    Connect,
    Auth,
    MailFrom,
    Rcpt,
    /// The DATA command.
    Data,
    /// The reply after the message's final dot.
    Message,
}

impl Stage {
    /// RCPT TO and after: the mail's own transaction (its recipient, its message).
    pub(super) fn is_mails_own(self) -> bool {
        matches!(self, Stage::Rcpt | Stage::Data | Stage::Message)
    }
}

/// What a failed send means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// This mail is refused for good: mark it FAILED; its order goes on.
    Permanent,
    /// This mail is refused for now: retry it on its own schedule; everyone else goes on.
    Defer,
    /// The server refuses the session (down, credentials, TLS, sender): no mail is at fault;
    /// back off for everybody and leave every mail queued.
    Session,
}

/// Decides whose failure a send's failure is, from the stage and the reply code (`None`: no
/// reply, e.g. a network error or a timeout). The table test below lists the cases.
pub fn verdict(stage: Stage, code: Option<u16>, text: &str) -> Verdict {
    // Replies that are about the session whatever command they answer: 421 closing, 454 TLS or
    // authentication temporarily unavailable (also Postfix's "relay access denied" at RCPT), 530
    // authentication (or STARTTLS) required, 534 mechanism too weak, 535 bad credentials, 538
    // encryption required. "Relaying denied" means the server does not know us as its client.
    let session_code = matches!(code, Some(421 | 454 | 530 | 534 | 535 | 538));
    let relay_denied = relay_denied(text);
    match (stage, code) {
        // The mail cannot be written: no server will take it.
        (Stage::Build, _) => Verdict::Permanent,
        (Stage::Connect | Stage::Auth | Stage::MailFrom, _) => Verdict::Session,
        _ if session_code => Verdict::Session,
        (_, Some(500..=599)) if relay_denied => Verdict::Session,
        // The mail's own transaction: its recipient or its message.
        (Stage::Rcpt | Stage::Data | Stage::Message, Some(500..=599)) => Verdict::Permanent,
        (Stage::Rcpt | Stage::Data | Stage::Message, Some(_)) => Verdict::Defer,
        // The connection broke or stalled inside the mail's transaction: retry the mail (if the
        // server is down, the next session fails at Connect and opens the circuit). Retrying
        // per mail keeps a message that always breaks the connection from stopping everybody.
        (Stage::Rcpt | Stage::Data | Stage::Message, None) => Verdict::Defer,
    }
}

/// Whether a reply says the server will not relay for us ("Relay access denied", "relaying
/// denied", "relay not permitted"). Addresses (`<...>`) are left out: a mailbox named "relay"
/// is not a refusal to relay.
fn relay_denied(text: &str) -> bool {
    let mut words = String::with_capacity(text.len());
    let mut in_address = false;
    for c in text.chars() {
        match c {
            '<' => in_address = true,
            '>' => in_address = false,
            c if !in_address => words.push(c.to_ascii_lowercase()),
            _ => {}
        }
    }
    words.contains("relay")
        && [
            "denied",
            "not permitted",
            "not allowed",
            "prohibited",
            "refused",
        ]
        .iter()
        .any(|w| words.contains(w))
}

/// A failed send: where, and lettre's error.
#[derive(Debug)]
pub(super) struct SendFailure {
    pub(super) stage: Stage,
    pub(super) error: String,
    pub(super) code: Option<u16>,
}

impl SendFailure {
    pub(super) fn new(stage: Stage, e: &SmtpError) -> Self {
        Self {
            stage,
            error: e.to_string(),
            code: e.status().and_then(|c| c.to_string().parse().ok()),
        }
    }

    pub(super) fn verdict(&self) -> Verdict {
        verdict(self.stage, self.code, &self.error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whose_failure_it_is() {
        use Stage::*;
        use Verdict::*;
        let table: &[(Stage, Option<u16>, &str, Verdict)] = &[
            (
                Build,
                None,
                "recipient \"relay denied\": invalid address",
                Permanent,
            ),
            // The server is down or stalls before the mail's transaction.
            (Connect, None, "Connection refused", Session),
            (Connect, Some(421), "service not available", Session),
            (Connect, Some(554), "no SMTP service here", Session),
            // Credentials.
            (
                Auth,
                Some(535),
                "5.7.8 authentication credentials invalid",
                Session,
            ),
            (
                Auth,
                Some(454),
                "4.7.0 temporary authentication failure",
                Session,
            ),
            (Auth, None, "timed out", Session),
            // The sender, or a server that wants TLS or authentication first.
            (MailFrom, Some(550), "5.7.1 sender rejected", Session),
            (MailFrom, Some(553), "5.1.8 sender address invalid", Session),
            (
                MailFrom,
                Some(530),
                "5.7.0 must issue a STARTTLS command first",
                Session,
            ),
            (MailFrom, Some(451), "4.3.0 try again later", Session),
            (MailFrom, None, "broken pipe", Session),
            // The recipient.
            (Rcpt, Some(550), "5.1.1 no such user", Permanent),
            (
                Rcpt,
                Some(553),
                "5.1.3 bad recipient address syntax",
                Permanent,
            ),
            (Rcpt, Some(451), "4.7.1 greylisted", Defer),
            (Rcpt, Some(452), "4.2.2 mailbox full", Defer),
            (Rcpt, None, "connection reset", Defer),
            // ... unless the reply is about the session.
            (Rcpt, Some(530), "5.7.0 authentication required", Session),
            (
                Rcpt,
                Some(554),
                "5.7.1 <a@x.com>: Relay access denied",
                Session,
            ),
            (Rcpt, Some(550), "5.7.1 relaying denied", Session),
            (Rcpt, Some(454), "4.7.1 relay access denied", Session),
            (Rcpt, Some(421), "4.4.2 closing connection", Session),
            // A mailbox called "relay" is just a mailbox.
            (
                Rcpt,
                Some(550),
                "5.1.1 <relay@example.com>: no such user",
                Permanent,
            ),
            (
                Rcpt,
                Some(451),
                "4.7.1 <relay.denied@example.com> greylisted",
                Defer,
            ),
            // The message.
            (Data, Some(554), "5.5.1 no valid recipients", Permanent),
            (Data, Some(451), "4.3.0 local error", Defer),
            (Message, Some(552), "5.3.4 message too big", Permanent),
            (Message, Some(554), "5.7.1 rejected as spam", Permanent),
            (Message, Some(451), "4.7.1 try again later", Defer),
            (Message, None, "timed out", Defer),
        ];
        for &(stage, code, text, expected) in table {
            assert_eq!(
                verdict(stage, code, text),
                expected,
                "{stage:?} {code:?} {text}"
            );
        }
    }
}
