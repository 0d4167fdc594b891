//! One round of a delivery loop: claim the due mails (up to the batch size, one per order), send
//! them (the log mailer writes them out; the SMTP mailer sends them over one session), record
//! every outcome in the claiming transaction and commit once. A mail stays queued until that
//! commit, so a round that fails anywhere loses nothing.

use lettre::message::Mailbox;
use outbox::trace::TraceHeaders;
use tracing::Instrument;

use super::{
    Mailer,
    failure::{SendFailure, Stage, Verdict},
    session::SmtpSession,
    transport::{SmtpServer, Transport},
};
use crate::{
    db::{self, MailRow},
    mail, process, retry,
};

/// What one round of the loop did.
#[derive(Debug)]
pub(super) enum Round {
    /// Nothing was due.
    Idle,
    /// A mail was sent, deferred or failed (the mark committed); `reached_server` unless it
    /// failed before any session (an unusable address), which says nothing about the server.
    /// `more_due` when the claim came back full: more mails may be due than one loop takes.
    Done {
        reached_server: bool,
        more_due: bool,
    },
    /// The server refused the session; the mail was left as it was.
    SessionFailed(SendFailure),
}

impl Mailer {
    /// One round: the next due mails, up to the batch size (at most one per order, see
    /// [`db::claim_batch`]), claimed, delivered and recorded in one transaction.
    pub(super) async fn deliver_next(&self) -> anyhow::Result<Round> {
        let limit = i64::try_from(self.batch_size).unwrap_or(i64::MAX);
        let (tx, mails) = retry::within(self.db_step_timeout, async {
            let mut tx = self.pool.begin().await?;
            let mails = db::claim_batch(&mut tx, limit).await?;
            Ok::<_, sqlx::Error>((tx, mails))
        })
        .await?;
        if mails.is_empty() {
            retry::within(self.db_step_timeout, tx.rollback()).await?;
            return Ok(Round::Idle);
        }
        match &self.transport {
            Transport::Log => self.log_batch(tx, mails).await,
            Transport::Smtp { server, from } => self.smtp_batch(tx, mails, server, from).await,
        }
    }

    /// A claim that took as many mails as a round may: more may be due than one loop takes.
    fn claim_was_full(&self, claimed: &[MailRow]) -> bool {
        claimed.len() >= self.batch_size
    }

    /// The log mailer's round: writes the claimed mails to the log and marks them all sent in
    /// one statement and one commit. Writing to the log cannot fail, so there is no per-mail
    /// outcome to record.
    async fn log_batch(
        &self,
        tx: sqlx::Transaction<'static, sqlx::Postgres>,
        mails: Vec<MailRow>,
    ) -> anyhow::Result<Round> {
        for m in &mails {
            send_span(m).in_scope(|| self.send_log(m));
        }
        let sent: Vec<(&MailRow, Option<String>)> = mails.iter().map(|m| (m, None)).collect();
        self.commit_round(tx, &sent, &[]).await?;
        Ok(Round::Done {
            reached_server: true,
            more_due: self.claim_was_full(&mails),
        })
    }

    /// The SMTP mailer's round: the claimed mails go out over ONE SMTP session, a mail
    /// transaction each, and every outcome is recorded in the claiming transaction, committed
    /// once. A session failure ends the round: the mails not yet tried stay queued as they were.
    /// The duplicate window (see the module doc) covers the round's sent mails until the commit.
    async fn smtp_batch(
        &self,
        mut tx: sqlx::Transaction<'static, sqlx::Postgres>,
        mails: Vec<MailRow>,
        server: &SmtpServer,
        from: &Mailbox,
    ) -> anyhow::Result<Round> {
        let mut session = SmtpSession::new(server, from);
        let mut sent = Vec::with_capacity(mails.len());
        let mut failed = Vec::new();
        let mut reached_server = false;
        let mut session_failure = None;
        for m in &mails {
            let span = send_span(m);
            let failure = match session.send(m).instrument(span.clone()).await {
                Ok(reply) => {
                    sent.push((m, Some(reply)));
                    continue;
                }
                Err(failure) => failure,
            };
            reached_server |= failure.stage != Stage::Build;
            let verdict = failure.verdict();
            if verdict == Verdict::Permanent {
                failed.push(m);
            }
            let recorded = self
                .record_failure(&mut tx, m, &failure, verdict)
                .instrument(span);
            if tokio::time::timeout(self.db_step_timeout, recorded)
                .await
                .map_err(|_| {
                    anyhow::anyhow!(
                        "no answer from the database within {:?}",
                        self.db_step_timeout
                    )
                })??
            {
                session_failure = Some(failure);
                break;
            }
        }
        session.close().await;
        self.commit_round(tx, &sent, &failed).await?;
        Ok(match session_failure {
            Some(f) => Round::SessionFailed(f),
            None => Round::Done {
                reached_server: reached_server || !sent.is_empty(),
                more_due: self.claim_was_full(&mails),
            },
        })
    }

    /// Marks `sent` delivered in one statement (with the server's answer to each, if any), moves the head of each order whose head left
    /// the queue this round (`sent`, and `failed`: marked FAILED already) to its next mail,
    /// commits the round, and logs each delivery.
    ///
    /// The orders' inbox locks come first, in a statement of their own (see
    /// [`db::promote_next`]), and only now: a mailer holds them from here to the commit, never
    /// during a send, so a consumer queueing one of these orders' mails waits for a few
    /// statements at most. No deadlock: the consumer takes no lock a mailer holds (it reads the
    /// claimed rows, never locks them), and two mailers never hold one order (one head each).
    async fn commit_round(
        &self,
        mut tx: sqlx::Transaction<'static, sqlx::Postgres>,
        sent: &[(&MailRow, Option<String>)],
        failed: &[&MailRow],
    ) -> anyhow::Result<()> {
        let left: Vec<(i32, i64)> = sent
            .iter()
            .map(|(m, _)| *m)
            .chain(failed.iter().copied())
            .map(|m| (m.shard, m.order_id))
            .collect();
        retry::within(self.db_step_timeout, async {
            if !left.is_empty() {
                let orders: Vec<i64> = left.iter().map(|c| c.1).collect();
                process::INBOX.lock_aggregates(&mut tx, &orders).await?;
            }
            if !sent.is_empty() {
                db::mark_all_sent(&mut tx, sent).await?;
            }
            db::promote_next(&mut tx, &left).await?;
            tx.commit().await
        })
        .await?;
        metrics::counter!(crate::metrics::SENT).increment(sent.len() as u64);
        for (m, _) in sent {
            tracing::info!(
                "[mail] delivered seq={} order={} to={}",
                m.seq,
                m.order_id,
                m.recipient
            );
        }
        Ok(())
    }

    fn send_log(&self, m: &MailRow) {
        tracing::info!(
            to = %m.recipient,
            message_id = %mail::message_id(&m.idempotency_key),
            body = ?m.body,
            "[mail] (log mailer) {}",
            m.subject
        );
    }
}

/// The span of one mail's delivery, in its request's trace: a child of the context stored with
/// the mail (the relay's publish span, which its `process` span continues too).
fn send_span(m: &MailRow) -> tracing::Span {
    let span = tracing::info_span!(
        "send",
        otel.kind = "client",
        seq = m.seq,
        order_id = m.order_id,
        trace_id = tracing::field::Empty
    );
    if let Some(t) = m
        .traceparent
        .as_deref()
        .and_then(|tp| TraceHeaders::parse(tp, None))
    {
        t.continue_in(&span);
    }
    span
}
