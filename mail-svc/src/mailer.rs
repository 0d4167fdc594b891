//! The delivery loop: takes queued mails from the database, sends them, marks them sent.
//!
//! A mail is claimed (`for update skip locked`, earliest unsent mail of its order only), sent,
//! and marked sent in the same transaction, so several instances share the work without sending
//! a mail twice or an order's mails out of order, and a mail is never lost: until the mark
//! commits it stays queued. The one duplicate window: the server accepted the mail and this
//! process dies (or loses the database) before the mark commits; the mail is sent again, with
//! the same `Message-ID` (`<order-event-<seq>@outbox>`) and `X-Idempotency-Key`, which a provider
//! can use to drop it.

use std::{sync::Arc, time::Duration};

use anyhow::Context;
use lettre::{
    AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor,
    message::{
        Mailbox,
        header::{ContentType, HeaderName, HeaderValue},
    },
};
use outbox_kit::{backoff::Backoff, trace::TraceParent};
use sqlx::PgPool;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::{
    config::{Config, MailerKind},
    db::{self, MailRow},
    mail,
};

/// How long the mailer sleeps when there is nothing to send and nobody woke it: the fallback
/// for mails queued by another instance (one cheap query per second when idle).
const IDLE_POLL: Duration = Duration::from_secs(1);

/// Where mails go.
#[derive(Debug, Clone)]
pub enum Transport {
    /// The log (MAILER=log).
    Log,
    /// An SMTP server (MAILER=smtp).
    Smtp {
        transport: Box<AsyncSmtpTransport<Tokio1Executor>>,
        from: Box<Mailbox>,
    },
}

/// Why a send failed.
#[derive(Debug, thiserror::Error)]
enum SendError {
    /// The server rejected this mail for good (5xx, or an unusable address): do not retry it.
    #[error("rejected: {0}")]
    Permanent(String),
    /// The server is unreachable or asked to come back later: retry with backoff.
    #[error("{0}")]
    Transient(String),
}

/// The delivery loop.
#[derive(Debug)]
pub struct Mailer {
    pool: PgPool,
    transport: Transport,
    wake: Arc<Notify>,
}

impl Transport {
    /// The transport MAILER selects.
    pub fn from_config(cfg: &Config) -> anyhow::Result<Self> {
        Ok(match cfg.mailer {
            MailerKind::Log => Transport::Log,
            MailerKind::Smtp => Transport::Smtp {
                transport: Box::new(
                    AsyncSmtpTransport::<Tokio1Executor>::from_url(&cfg.smtp_url)
                        .with_context(|| {
                            format!("SMTP_URL is not a valid SMTP URL: {}", cfg.smtp_url)
                        })?
                        // A stalled server must not hold a claimed mail (and its order) forever.
                        .timeout(Some(Duration::from_secs(15)))
                        .build(),
                ),
                from: Box::new(cfg.from_mailbox()?),
            },
        })
    }
}

impl Mailer {
    pub fn new(pool: PgPool, transport: Transport, wake: Arc<Notify>) -> Self {
        Self {
            pool,
            transport,
            wake,
        }
    }

    /// Delivers until `shutdown`; a send in flight finishes first. Several loops may share one
    /// mailer (`MAILER_CONCURRENCY`): the claim keeps them from sending a mail twice or an
    /// order's mails out of order, exactly as for several instances.
    pub async fn run(self: Arc<Self>, shutdown: CancellationToken) {
        let mut backoff = Backoff::new(Duration::from_millis(200), Duration::from_secs(30));
        while !shutdown.is_cancelled() {
            match self.deliver_next().await {
                Ok(true) => {
                    backoff.reset();
                    // There may be more: wake an idle sibling loop to share the work.
                    self.wake.notify_one();
                }
                Ok(false) => {
                    tokio::select! {
                        _ = shutdown.cancelled() => break,
                        _ = self.wake.notified() => {}
                        _ = tokio::time::sleep(IDLE_POLL) => {}
                    }
                }
                Err(e) => {
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

    /// Sends the next mail. `Ok(false)` when there is nothing to send.
    async fn deliver_next(&self) -> anyhow::Result<bool> {
        let mut tx = self.pool.begin().await?;
        let Some(m) = db::claim_next(&mut tx).await? else {
            tx.rollback().await?;
            return Ok(false);
        };
        let span = tracing::info_span!(
            "send",
            seq = m.seq,
            order_id = m.order_id,
            trace_id = tracing::field::Empty
        );
        if let Some(t) = m.traceparent.as_deref().and_then(TraceParent::parse) {
            span.record("trace_id", t.trace_id.as_str());
        }
        self.finish(tx, m).instrument(span).await
    }

    /// Sends a claimed mail and records the result in the claiming transaction.
    async fn finish(
        &self,
        mut tx: sqlx::Transaction<'static, sqlx::Postgres>,
        m: MailRow,
    ) -> anyhow::Result<bool> {
        match self.send(&m).await {
            Ok(()) => {
                db::mark_sent(&mut tx, m.seq).await?;
                tx.commit().await?;
                metrics::counter!("mail_sent_total").increment(1);
                tracing::info!(
                    "[mail] delivered seq={} order={} to={}",
                    m.seq,
                    m.order_id,
                    m.recipient
                );
                Ok(true)
            }
            Err(SendError::Permanent(e)) => {
                db::mark_failed(&mut tx, m.seq, &e).await?;
                tx.commit().await?;
                metrics::counter!("mail_failed_total").increment(1);
                tracing::error!(
                    "[mail] failed seq={} order={} to={}: {e}",
                    m.seq,
                    m.order_id,
                    m.recipient
                );
                Ok(true)
            }
            Err(e @ SendError::Transient(_)) => {
                tx.rollback().await?;
                Err(anyhow::anyhow!("seq={}: {e}", m.seq))
            }
        }
    }

    async fn send(&self, m: &MailRow) -> Result<(), SendError> {
        match &self.transport {
            Transport::Log => {
                tracing::info!(
                    to = %m.recipient,
                    message_id = %mail::message_id(&m.idempotency_key),
                    body = ?m.body,
                    "[mail] (log mailer) {}",
                    m.subject
                );
                Ok(())
            }
            Transport::Smtp { transport, from } => {
                let message = build_message(m, from)?;
                transport.send(message).await.map(|_| ()).map_err(|e| {
                    if e.is_permanent() {
                        SendError::Permanent(e.to_string())
                    } else {
                        SendError::Transient(format!("SMTP: {e}"))
                    }
                })
            }
        }
    }
}

fn build_message(m: &MailRow, from: &Mailbox) -> Result<Message, SendError> {
    let to: Mailbox = m
        .recipient
        .parse()
        .map_err(|e| SendError::Permanent(format!("recipient {:?}: {e}", m.recipient)))?;
    let key_header = HeaderName::new_from_ascii("X-Idempotency-Key".to_owned())
        .map_err(|e| SendError::Permanent(e.to_string()))?;
    Message::builder()
        .message_id(Some(mail::message_id(&m.idempotency_key)))
        .raw_header(HeaderValue::new(key_header, m.idempotency_key.clone()))
        .from(from.clone())
        .to(to)
        .subject(m.subject.clone())
        .header(ContentType::TEXT_PLAIN)
        .body(m.body.clone())
        .map_err(|e| SendError::Permanent(format!("building the message: {e}")))
}

/// The stuck-hold watch: refreshes the gauges and warns while the oldest held event is older
/// than `alert` (its predecessor may be lost: dead-lettered, or never published).
pub async fn watch_holds(pool: PgPool, alert: Duration, shutdown: CancellationToken) {
    let period = (alert / 2).clamp(Duration::from_millis(200), Duration::from_secs(5));
    let mut last_warning: Option<tokio::time::Instant> = None;
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(period) => {}
        }
        let stats = match db::stats(&pool).await {
            Ok(s) => s,
            Err(e) => {
                tracing::debug!(error = %e, "cannot read the hold statistics");
                continue;
            }
        };
        metrics::gauge!("mail_held_events").set(stats.held as f64);
        metrics::gauge!("mail_unsent_mails").set(stats.unsent as f64);
        metrics::gauge!("mail_oldest_held_age_seconds")
            .set(stats.oldest_held_age_ms as f64 / 1000.0);
        let stuck = Duration::from_millis(stats.oldest_held_age_ms.max(0) as u64) > alert;
        // Warn once per alert period while it lasts, not at every check.
        let due = last_warning.is_none_or(|t| t.elapsed() >= alert);
        if stuck
            && due
            && let Ok(Some((seq, order, prev, age_ms))) = db::oldest_held(&pool).await
        {
            tracing::warn!(
                held = stats.held,
                "[mail] held seq={seq} order={order} for {}s (waiting for seq={prev})",
                age_ms / 1000
            );
            last_warning = Some(tokio::time::Instant::now());
        }
        if !stuck {
            last_warning = None;
        }
    }
}
