//! The delivery loop: takes queued mails from the database, sends them, marks them sent.
//!
//! A round claims up to `BATCH_SIZE` mails (`for update skip locked`, earliest unsent mail of
//! each order only, and only once it is due), sends them — the SMTP mailer over one session, a
//! mail transaction each — and records every outcome in the same transaction, committed once. So
//! several instances share the work without sending a mail twice or an order's mails out of
//! order, and a mail is never lost: until the mark commits it stays queued. The one duplicate
//! window: the server accepted a mail and this process dies (or loses the database) before the
//! round commits; the round's accepted mails are sent again, with the same `Message-ID`
//! (`<order-event-<seq>@outbox>`) and `X-Idempotency-Key`, which a provider can use to drop them.
//!
//! **Who a failure belongs to** ([`verdict`]) depends on the SMTP stage it happened at, not only
//! on the reply code (lettre reports any 5xx as permanent, at any stage):
//! - the recipient (RCPT TO) or the message (the reply after DATA) rejected: that mail's own
//!   outcome. 5xx marks it FAILED; 4xx (greylisting, a full mailbox) defers it on its own retry
//!   schedule ([`retry_delay`]), committed, so the claim passes over it to every other order's
//!   mails while its own order's later mails wait for it;
//! - anything before (connect, greeting, EHLO, STARTTLS, AUTH, MAIL FROM), and the session
//!   codes 421/454/530/534/535/538 or a "relay denied" at any stage: the server refuses *us* (down,
//!   a wrong password, TLS required, a rejected sender), not the mail. No mail is marked FAILED;
//!   the [`Circuit`] opens: every loop of this instance backs off, one probe at a time,
//!   `mail_smtp_circuit_open` is 1 and a warning is logged, until a session works again. A
//!   failure before RCPT TO charges no mail anything; a session-level reply at RCPT TO or later
//!   also defers that mail, so that the circuit's probes never stick on one mail.
//!
//! Layout: here the loop (the circuit's admission, the database's backoff, the wake-ups);
//! `round` (one claim, its sends and its one commit), `outcome` (what a failed mail's
//! verdict writes, the deferred mails' retry schedule), `failure` (whose failure a send's
//! failure is), `circuit` (the SMTP circuit breaker), `session` (the SMTP session and its
//! timeouts), `message` (the message a mail becomes), `transport` (SMTP_URL, its TLS and
//! credentials), `hold_watch` (the stuck-hold watch).

mod circuit;
mod failure;
mod hold_watch;
mod message;
mod outcome;
mod round;
mod session;
mod transport;

use std::{sync::Arc, time::Duration};

use outbox_support::backoff::Backoff;
use sqlx::PgPool;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use self::{circuit::Admit, round::Round};
pub use self::{
    circuit::Circuit,
    failure::{Stage, Verdict, verdict},
    hold_watch::watch_holds,
    outcome::retry_delay,
    session::LONGEST_SEND,
    transport::{SmtpServer, Transport},
};

/// How long the mailer sleeps when there is nothing to send and nobody woke it: the fallback
/// for mails queued by another instance, and for deferred mails coming due (one cheap query per
/// second when idle).
const IDLE_POLL: Duration = Duration::from_secs(1);

/// The mailer's retry schedule, 200 ms doubling up to 30 s (jittered): a loop's database
/// failures and the SMTP circuit's probes.
fn retry_backoff() -> Backoff {
    Backoff::new(Duration::from_millis(200), Duration::from_secs(30))
}

/// The delivery loop.
#[derive(Debug)]
pub struct Mailer {
    pool: PgPool,
    transport: Transport,
    wake: Arc<Notify>,
    circuit: Circuit,
    /// Mails claimed, sent (one SMTP session) and recorded in one transaction.
    batch_size: usize,
    /// How long one database step may go unanswered before the round fails (and its
    /// connection is closed): a socket gone silent must not hold a mailer loop.
    db_step_timeout: Duration,
}

impl Mailer {
    pub fn new(pool: PgPool, transport: Transport, wake: Arc<Notify>) -> Self {
        Self {
            pool,
            transport,
            wake,
            circuit: Circuit::new(),
            batch_size: 1,
            db_step_timeout: outbox_kit::db::step_timeout(
                outbox_kit::db::DEFAULT_STATEMENT_TIMEOUT,
            ),
        }
    }

    /// How long one database step may go unanswered (`DB_STATEMENT_TIMEOUT` + 1 s).
    pub fn with_db_step_timeout(mut self, limit: Duration) -> Self {
        self.db_step_timeout = limit;
        self
    }

    /// Up to `n` mails per round (`BATCH_SIZE`): claimed and recorded in one transaction, and
    /// for the SMTP mailer sent over one session.
    pub fn with_batch_size(mut self, n: usize) -> Self {
        self.batch_size = n.max(1);
        self
    }

    /// The SMTP circuit breaker.
    pub fn circuit(&self) -> &Circuit {
        &self.circuit
    }

    /// Delivers until `shutdown`; a send in flight finishes first. Several loops may share one
    /// mailer (`MAILER_CONCURRENCY`): the claim keeps them from sending a mail twice or an
    /// order's mails out of order, exactly as for several instances.
    pub async fn run(self: Arc<Self>, shutdown: CancellationToken) {
        // For the database only; the SMTP server's failures go through the circuit.
        let mut backoff = retry_backoff();
        while !shutdown.is_cancelled() {
            let probe = match self.circuit.admit() {
                Admit::Go { probe } => probe,
                Admit::Wait(delay) => {
                    tokio::select! {
                        _ = shutdown.cancelled() => break,
                        _ = tokio::time::sleep(delay) => {}
                    }
                    continue;
                }
            };
            match self.deliver_next().await {
                Ok(Round::Done {
                    reached_server,
                    more_due,
                }) => {
                    if reached_server {
                        self.circuit.session_ok();
                    } else {
                        self.circuit.release(probe);
                    }
                    backoff.reset();
                    // A full claim leaves work behind: wake an idle sibling loop to share it.
                    // Otherwise this loop's next claim takes what is left (an order's next mail,
                    // due once this round's is sent); a woken sibling would only claim nothing,
                    // and every empty claim still walks the rows other loops hold.
                    if more_due {
                        self.wake.notify_one();
                    }
                }
                Ok(Round::SessionFailed(f)) => {
                    backoff.reset();
                    self.circuit.session_failed(probe, &f);
                }
                Ok(Round::Idle) => {
                    self.circuit.release(probe);
                    tokio::select! {
                        _ = shutdown.cancelled() => break,
                        _ = self.wake.notified() => {}
                        _ = tokio::time::sleep(IDLE_POLL) => {}
                    }
                }
                Err(e) => {
                    self.circuit.release(probe);
                    let delay = backoff.next_delay();
                    tracing::warn!(
                        error = format!("{e:#}"),
                        retry = backoff.failures(),
                        "[mail] mailer cannot deliver; retrying in {delay:?}"
                    );
                    tokio::select! {
                        _ = shutdown.cancelled() => break,
                        _ = tokio::time::sleep(delay) => {}
                    }
                }
            }
        }
        tracing::info!("[mail] mailer stopped");
    }
}
