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

use std::{
    path::Path,
    sync::{Arc, Mutex},
    time::Duration,
};

use anyhow::Context;
use lettre::{
    Message,
    message::{
        Mailbox,
        header::{ContentType, HeaderName, HeaderValue},
    },
    transport::smtp::{
        Error as SmtpError,
        authentication::{Credentials, DEFAULT_MECHANISMS},
        client::{AsyncSmtpConnection, Certificate, Tls, TlsParameters},
        commands::{Data, Mail, Rcpt},
        extension::{ClientId, Extension, MailBodyParameter, MailParameter},
    },
};
use outbox::trace::TraceHeaders;
use outbox_kit::tls::{certificates, read_pem};
use outbox_support::backoff::Backoff;
use rand::Rng;
use rustls_pki_types::CertificateDer;
use sqlx::PgPool;
use tokio::{sync::Notify, time::Instant};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::{
    db::{self, MailRow},
    mail, process, retry,
};

/// How long the mailer sleeps when there is nothing to send and nobody woke it: the fallback
/// for mails queued by another instance, and for deferred mails coming due (one cheap query per
/// second when idle).
const IDLE_POLL: Duration = Duration::from_secs(1);

/// A stalled server must not hold a claimed mail (and its order) forever: the limit for each
/// read and write of a session.
const SMTP_IO_TIMEOUT: Duration = Duration::from_secs(15);

/// The limit for a whole session (connect to the reply after the message).
const SMTP_SESSION_TIMEOUT: Duration = Duration::from_secs(60);

/// The longest an SMTP round keeps its claiming transaction idle between two statements: one
/// mail's session, and its one retry on a fresh session.
pub const LONGEST_SEND: Duration = Duration::from_secs(2 * SMTP_SESSION_TIMEOUT.as_secs());

/// A deferred mail's first retry; each further deferral doubles it, up to [`RETRY_MAX`].
const RETRY_MIN: Duration = Duration::from_secs(1);

/// The longest wait between two attempts of one deferred mail. Deferred mails are retried until
/// the server accepts or rejects them for good (the mail blocks only its own order meanwhile).
const RETRY_MAX: Duration = Duration::from_secs(600);

/// Where mails go.
#[derive(Debug, Clone)]
pub enum Transport {
    /// The log (MAILER=log).
    Log,
    /// An SMTP server (MAILER=smtp).
    Smtp {
        server: Box<SmtpServer>,
        from: Box<Mailbox>,
    },
}

/// The SMTP server from SMTP_URL, with lettre's URL grammar: `smtp://host:port` (plain, port 25),
/// `smtp://host:port?tls=required|opportunistic` (STARTTLS, port 587), `smtps://host:port`
/// (implicit TLS, port 465), optional `user:password@`, and a path naming the EHLO name; TLS
/// trusts the Mozilla roots plus the CA certificates of SMTP_CA_FILE.
#[derive(Clone)]
pub struct SmtpServer {
    host: String,
    port: u16,
    tls: Tls,
    hello: ClientId,
    credentials: Option<Credentials>,
}

impl std::fmt::Debug for SmtpServer {
    // Never the credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmtpServer")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("authenticated", &self.credentials.is_some())
            .finish_non_exhaustive()
    }
}

impl SmtpServer {
    /// Parses SMTP_URL and reads SMTP_CA_FILE (`ca_file`). The error never repeats the URL (it
    /// may hold a password) nor the file's content.
    pub fn from_settings(url: &str, ca_file: Option<&Path>) -> anyhow::Result<Self> {
        let url = url::Url::parse(url).context("SMTP_URL is not a valid URL")?;
        let host = url
            .host_str()
            .context("SMTP_URL names no host")?
            .trim_matches(['[', ']'])
            .to_owned();
        let tls_param = url
            .query_pairs()
            .find(|(k, _)| k == "tls")
            .map(|(_, v)| v.into_owned());
        // A CA for a plaintext session would be silently unused: most likely SMTP_URL lost its
        // TLS by mistake.
        if ca_file.is_some() && url.scheme() == "smtp" && tls_param.is_none() {
            anyhow::bail!(
                "SMTP_CA_FILE is set but SMTP_URL uses no TLS (plain smtp://): use smtps:// or \
                 smtp://…?tls=required, or unset SMTP_CA_FILE"
            );
        }
        let ca_certs = match ca_file {
            Some(path) => {
                let pem = read_pem("SMTP_CA_FILE", path)?;
                certificates("SMTP_CA_FILE", path, &pem)?
            }
            None => Vec::new(),
        };
        let params = || {
            let built = tls_parameters(&host, &ca_certs);
            match ca_file {
                // rustls refuses a certificate it cannot use as a trust anchor.
                Some(path) => built.with_context(|| {
                    format!(
                        "SMTP_CA_FILE: {}: not a usable CA certificate",
                        path.display()
                    )
                }),
                None => built.context("SMTP_URL: TLS parameters"),
            }
        };
        let (port, tls) = match (url.scheme(), tls_param.as_deref()) {
            ("smtp", None) => (25, Tls::None),
            ("smtp", Some("required")) => (587, Tls::Required(params()?)),
            ("smtp", Some("opportunistic")) => (587, Tls::Opportunistic(params()?)),
            ("smtps", _) => (465, Tls::Wrapper(params()?)),
            (scheme, tls) => anyhow::bail!(
                "SMTP_URL: unknown scheme {scheme:?} or tls parameter {tls:?} (use smtp://, \
                 smtp://…?tls=required, smtp://…?tls=opportunistic or smtps://)"
            ),
        };
        let hello = match url.path().trim_matches('/') {
            "" => ClientId::default(),
            name => ClientId::Domain(name.to_owned()),
        };
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8()
                .map(|s| s.into_owned())
                .context("SMTP_URL: the user or password is not UTF-8")
        };
        let credentials = match url.password() {
            Some(password) => Some(Credentials::new(decode(url.username())?, decode(password)?)),
            None => None,
        };
        Ok(Self {
            port: url.port().unwrap_or(port),
            host,
            tls,
            hello,
            credentials,
        })
    }
}

/// TLS verifying `host`'s certificate against the built-in roots plus `ca_certs`.
fn tls_parameters(host: &str, ca_certs: &[CertificateDer<'_>]) -> Result<TlsParameters, SmtpError> {
    let mut builder = TlsParameters::builder(host.to_owned());
    for der in ca_certs {
        builder = builder.add_root_certificate(Certificate::from_der(der.to_vec())?);
    }
    builder.build()
}

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
    fn is_mails_own(self) -> bool {
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

/// How long a mail waits after its `attempts`-th deferral: `RETRY_MIN` doubling up to
/// `RETRY_MAX`, drawn from the upper half of the step so that many mails deferred together
/// do not come due together.
pub fn retry_delay(attempts: i32) -> Duration {
    let step = RETRY_MIN
        .saturating_mul(2u32.saturating_pow(attempts.clamp(1, 31) as u32 - 1))
        .min(RETRY_MAX);
    let half = step / 2;
    half + Duration::from_millis(rand::rng().random_range(0..=half.as_millis() as u64))
}

/// A failed send: where, and lettre's error.
#[derive(Debug)]
struct SendFailure {
    stage: Stage,
    error: String,
    code: Option<u16>,
}

impl SendFailure {
    fn new(stage: Stage, e: &SmtpError) -> Self {
        Self {
            stage,
            error: e.to_string(),
            code: e.status().and_then(|c| c.to_string().parse().ok()),
        }
    }

    fn verdict(&self) -> Verdict {
        verdict(self.stage, self.code, &self.error)
    }
}

/// The circuit breaker for SMTP sessions, shared by this instance's delivery loops.
///
/// Closed: every loop claims and sends. A session failure opens it: nobody claims until the
/// backoff delay (200 ms doubling to 30 s) has passed; then one loop probes with the next due mail
/// while the others keep waiting. A probe that reaches the mail's own stages (sent, deferred or
/// rejected) closes it; a probe that fails the session opens it again with the next delay.
#[derive(Debug)]
pub struct Circuit {
    state: Mutex<CircuitState>,
}

#[derive(Debug)]
struct CircuitState {
    open: bool,
    until: Instant,
    probing: bool,
    backoff: Backoff,
}

/// What a loop may do now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Admit {
    /// Claim and send; `probe` when this send decides whether the circuit closes.
    Go { probe: bool },
    /// Wait this long, then ask again.
    Wait(Duration),
}

impl Default for Circuit {
    fn default() -> Self {
        Self::new()
    }
}

impl Circuit {
    pub fn new() -> Self {
        metrics::gauge!(crate::metrics::SMTP_CIRCUIT_OPEN).set(0.0);
        Self {
            state: Mutex::new(CircuitState {
                open: false,
                until: Instant::now(),
                probing: false,
                backoff: Backoff::new(Duration::from_millis(200), Duration::from_secs(30)),
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CircuitState> {
        // A panic while holding this lock cannot leave the state inconsistent (plain fields).
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the circuit is open now.
    pub fn is_open(&self) -> bool {
        self.lock().open
    }

    fn admit(&self) -> Admit {
        let mut s = self.lock();
        if !s.open {
            return Admit::Go { probe: false };
        }
        let now = Instant::now();
        if now < s.until {
            return Admit::Wait(s.until - now);
        }
        if s.probing {
            return Admit::Wait(Duration::from_millis(100));
        }
        s.probing = true;
        Admit::Go { probe: true }
    }

    /// A probe found nothing to send: let the next loop probe.
    fn release(&self, probe: bool) {
        if probe {
            self.lock().probing = false;
        }
    }

    /// A session got as far as the mail's own stages: the server works.
    fn session_ok(&self) {
        let mut s = self.lock();
        if s.open {
            s.open = false;
            s.probing = false;
            s.backoff.reset();
            metrics::gauge!(crate::metrics::SMTP_CIRCUIT_OPEN).set(0.0);
            tracing::info!("[mail] SMTP circuit closed: the server accepts sessions again");
        }
    }

    /// A session failed. Loops that were sending when another one opened the circuit do not
    /// lengthen the wait; the probe's failure does.
    fn session_failed(&self, probe: bool, f: &SendFailure) {
        metrics::counter!(crate::metrics::SMTP_SESSION_FAILURES).increment(1);
        let mut s = self.lock();
        if s.open && !probe {
            return;
        }
        let delay = s.backoff.next_delay();
        s.open = true;
        s.probing = false;
        s.until = Instant::now() + delay;
        metrics::gauge!(crate::metrics::SMTP_CIRCUIT_OPEN).set(1.0);
        tracing::warn!(
            stage = ?f.stage,
            retry = s.backoff.failures(),
            "[mail] SMTP circuit open: the server refuses the session ({}); no mail is sent \
             for {delay:?}, every mail stays queued",
            f.error
        );
    }
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

/// What one round of the loop did.
#[derive(Debug)]
enum Round {
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

    /// A claim that took as many mails as a round may: more may be due than one loop takes.
    fn claim_was_full(&self, claimed: &[MailRow]) -> bool {
        claimed.len() >= self.batch_size
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
        let mut backoff = Backoff::new(Duration::from_millis(200), Duration::from_secs(30));
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

    /// One round: the next due mails, up to the batch size (at most one per order, see
    /// [`db::claim_batch`]), claimed, delivered and recorded in one transaction.
    async fn deliver_next(&self) -> anyhow::Result<Round> {
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
        let sent: Vec<&MailRow> = mails.iter().collect();
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
            let Err(failure) = session.send(m).instrument(span.clone()).await else {
                sent.push(m);
                continue;
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

    /// Marks `sent` delivered in one statement, moves the head of each order whose head left
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
        sent: &[&MailRow],
        failed: &[&MailRow],
    ) -> anyhow::Result<()> {
        let left: Vec<(i32, i64)> = sent
            .iter()
            .chain(failed)
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
        for m in sent {
            tracing::info!(
                "[mail] delivered seq={} order={} to={}",
                m.seq,
                m.order_id,
                m.recipient
            );
        }
        Ok(())
    }

    /// Records a failed mail in the round's transaction according to `verdict`, whose failure it
    /// is. Returns true when the server refused the session (the round stops).
    async fn record_failure(
        &self,
        tx: &mut sqlx::Transaction<'static, sqlx::Postgres>,
        m: &MailRow,
        failure: &SendFailure,
        verdict: Verdict,
    ) -> anyhow::Result<bool> {
        match verdict {
            Verdict::Permanent => {
                db::mark_failed(tx, m, &failure.error).await?;
                metrics::counter!(crate::metrics::FAILED).increment(1);
                tracing::error!(
                    "[mail] failed seq={} order={} to={}: {}",
                    m.seq,
                    m.order_id,
                    m.recipient,
                    failure.error
                );
                Ok(false)
            }
            Verdict::Defer => {
                let (attempts, delay) = defer(tx, m, failure).await?;
                tracing::warn!(
                    "[mail] deferred seq={} order={} to={} attempt={attempts}, next in {delay:?}: {}",
                    m.seq,
                    m.order_id,
                    m.recipient,
                    failure.error
                );
                Ok(false)
            }
            Verdict::Session if failure.stage.is_mails_own() => {
                // A session-level reply inside the mail's own transaction (e.g. "relay access
                // denied" at RCPT). Most likely nobody can be sent, but should it concern only
                // this mail, the circuit's next probe must not pick it again and stop everyone:
                // defer it as well.
                defer(tx, m, failure).await?;
                Ok(true)
            }
            // Not this mail's fault: leave it exactly as it was.
            Verdict::Session => Ok(true),
        }
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

/// Defers a mail the server refused for now, on its own retry schedule.
async fn defer(
    tx: &mut sqlx::Transaction<'static, sqlx::Postgres>,
    m: &MailRow,
    failure: &SendFailure,
) -> anyhow::Result<(i32, Duration)> {
    let attempts = m.attempts.saturating_add(1);
    let delay = retry_delay(attempts);
    db::mark_deferred(tx, m, &failure.error, delay).await?;
    metrics::counter!(crate::metrics::DEFERRED).increment(1);
    Ok((attempts, delay))
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

/// One SMTP session for the mails of a round: opened for the first mail, kept while mails are
/// accepted, dropped after any failure (the next mail opens a fresh one), QUIT at the end.
struct SmtpSession<'a> {
    server: &'a SmtpServer,
    from: &'a Mailbox,
    conn: Option<AsyncSmtpConnection>,
}

impl<'a> SmtpSession<'a> {
    fn new(server: &'a SmtpServer, from: &'a Mailbox) -> Self {
        Self {
            server,
            from,
            conn: None,
        }
    }

    /// Sends one mail. A session kept from an earlier mail that fails before the mail's own
    /// transaction got anywhere (servers close idle or busy sessions, or limit mails per
    /// session) is retried once on a fresh session, so that only a fresh session's refusal
    /// counts as the server refusing us.
    async fn send(&mut self, m: &MailRow) -> Result<(), SendFailure> {
        let (to, message) = build_message(m, self.from).map_err(|error| SendFailure {
            stage: Stage::Build,
            error,
            code: None,
        })?;
        let message = message.formatted();
        let reused = self.conn.is_some();
        match self.attempt(&to, &message).await {
            Err(f) if reused && !f.stage.is_mails_own() => {
                tracing::debug!(error = %f.error, "[mail] SMTP session closed by the server; opening a new one");
                self.attempt(&to, &message).await
            }
            result => result,
        }
    }

    /// One try within [`SMTP_SESSION_TIMEOUT`]; any failure drops the session.
    async fn attempt(&mut self, to: &lettre::Address, message: &[u8]) -> Result<(), SendFailure> {
        let mut stage = Stage::Connect;
        let result = tokio::time::timeout(
            SMTP_SESSION_TIMEOUT,
            self.attempt_untimed(to, message, &mut stage),
        )
        .await;
        let failure = match result {
            Ok(Ok(())) => return Ok(()),
            Ok(Err(e)) => SendFailure::new(stage, &e),
            Err(_) => SendFailure {
                stage,
                error: format!("no answer within {SMTP_SESSION_TIMEOUT:?}"),
                code: None,
            },
        };
        if let Some(mut conn) = self.conn.take() {
            conn.abort().await;
        }
        Err(failure)
    }

    async fn attempt_untimed(
        &mut self,
        to: &lettre::Address,
        message: &[u8],
        stage: &mut Stage,
    ) -> Result<(), SmtpError> {
        let conn = match &mut self.conn {
            Some(conn) => conn,
            None => {
                *stage = Stage::Connect;
                self.conn.insert(open_session(self.server, stage).await?)
            }
        };
        mail_transaction(conn, self.from, to, message, stage).await
    }

    /// Ends the session politely; the mails are accepted already, a failed goodbye changes
    /// nothing.
    async fn close(mut self) {
        if let Some(mut conn) = self.conn.take() {
            let _ = conn.quit().await;
        }
    }
}

/// Connects, greets, secures and authenticates a session, noting in `stage` how far it got.
async fn open_session(
    server: &SmtpServer,
    stage: &mut Stage,
) -> Result<AsyncSmtpConnection, SmtpError> {
    *stage = Stage::Connect;
    let implicit_tls = match &server.tls {
        Tls::Wrapper(params) => Some(params.clone()),
        _ => None,
    };
    let mut conn = AsyncSmtpConnection::connect_tokio1(
        (server.host.as_str(), server.port),
        Some(SMTP_IO_TIMEOUT),
        &server.hello,
        implicit_tls,
        None,
    )
    .await?;
    let secured = match &server.tls {
        Tls::Required(params) => conn.starttls(params.clone(), &server.hello).await,
        Tls::Opportunistic(params) if conn.can_starttls() => {
            conn.starttls(params.clone(), &server.hello).await
        }
        _ => Ok(()),
    };
    if let Err(e) = secured {
        conn.abort().await;
        return Err(e);
    }
    if let Some(credentials) = &server.credentials {
        *stage = Stage::Auth;
        if let Err(e) = conn.auth(DEFAULT_MECHANISMS, credentials).await {
            conn.abort().await;
            return Err(e);
        }
    }
    Ok(conn)
}

/// One mail's transaction on an open session: MAIL FROM, RCPT TO, DATA and the message.
async fn mail_transaction(
    conn: &mut AsyncSmtpConnection,
    from: &Mailbox,
    to: &lettre::Address,
    message: &[u8],
    stage: &mut Stage,
) -> Result<(), SmtpError> {
    *stage = Stage::MailFrom;
    let mut params = Vec::new();
    if !message.is_ascii() && conn.server_info().supports_feature(Extension::EightBitMime) {
        params.push(MailParameter::Body(MailBodyParameter::EightBitMime));
    }
    if !AsRef::<str>::as_ref(to).is_ascii()
        && conn.server_info().supports_feature(Extension::SmtpUtfEight)
    {
        params.push(MailParameter::SmtpUtfEight);
    }
    conn.command(Mail::new(Some(from.email.clone()), params))
        .await?;
    *stage = Stage::Rcpt;
    conn.command(Rcpt::new(to.clone(), Vec::new())).await?;
    *stage = Stage::Data;
    conn.command(Data).await?;
    *stage = Stage::Message;
    conn.message(message).await?;
    Ok(())
}

/// The message and its one recipient; an error when the mail cannot be built (permanent).
fn build_message(m: &MailRow, from: &Mailbox) -> Result<(lettre::Address, Message), String> {
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

/// The stuck-hold watch: refreshes the gauges and warns while the oldest held event is older
/// than `alert` (its predecessor may be lost: dead-lettered, or never published).
pub async fn watch_holds(
    pool: PgPool,
    alert: Duration,
    db_step_timeout: Duration,
    shutdown: CancellationToken,
) {
    let period = (alert / 2).clamp(Duration::from_millis(200), Duration::from_secs(5));
    let mut last_warning: Option<tokio::time::Instant> = None;
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(period) => {}
        }
        let stats = match crate::retry::within(db_step_timeout, db::stats(&pool)).await {
            Ok(s) => s,
            Err(e) => {
                tracing::debug!(error = %e, "cannot read the hold statistics");
                continue;
            }
        };
        metrics::gauge!(crate::metrics::HELD_EVENTS).set(stats.held as f64);
        metrics::gauge!(crate::metrics::UNSENT_MAILS).set(stats.unsent as f64);
        metrics::gauge!(crate::metrics::OLDEST_HELD_AGE)
            .set(stats.oldest_held_age_ms as f64 / 1000.0);
        let stuck = Duration::from_millis(stats.oldest_held_age_ms.max(0) as u64) > alert;
        // Warn once per alert period while it lasts, not at every check.
        let due = last_warning.is_none_or(|t| t.elapsed() >= alert);
        if stuck
            && due
            && let Ok(Some((seq, order, prev, age_ms))) =
                crate::retry::within(db_step_timeout, db::oldest_held(&pool)).await
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

    #[test]
    fn retry_delays_double_then_cap() {
        for (attempts, low, high) in [
            (1, 500, 1_000),
            (2, 1_000, 2_000),
            (3, 2_000, 4_000),
            (10, 256_000, 512_000),
            (11, 300_000, 600_000),
            (1_000, 300_000, 600_000),
        ] {
            for _ in 0..20 {
                let d = retry_delay(attempts).as_millis();
                assert!(
                    (low..=high).contains(&d),
                    "attempt {attempts}: {d} ms not in {low}..={high}"
                );
            }
        }
    }

    #[test]
    fn smtp_urls() {
        let s = SmtpServer::from_settings("smtp://127.0.0.1:1025", None).expect("plain");
        assert_eq!((s.host.as_str(), s.port), ("127.0.0.1", 1025));
        assert!(matches!(s.tls, Tls::None) && s.credentials.is_none());
        let s =
            SmtpServer::from_settings("smtp://shop%40x:p%2Fw@mail.example.com?tls=required", None)
                .expect("starttls");
        assert_eq!(s.port, 587);
        assert!(matches!(s.tls, Tls::Required(_)) && s.credentials.is_some());
        assert!(!format!("{s:?}").contains("p/w"), "{s:?}");
        let s = SmtpServer::from_settings("smtps://mail.example.com/shop.example.com", None)
            .expect("smtps");
        assert_eq!(s.port, 465);
        assert!(matches!(s.tls, Tls::Wrapper(_)));
        assert_eq!(s.hello, ClientId::Domain("shop.example.com".into()));
        let e = SmtpServer::from_settings("ftp://u:secret@x", None).unwrap_err();
        assert!(!format!("{e:#}").contains("secret"), "{e:#}");
    }

    #[test]
    fn smtp_ca_file_is_checked_and_needs_tls() {
        let pki = outbox_kit::testing::pki::TestPki::new("smtp_unit");
        let ca = pki.ca_file();
        for url in [
            "smtps://mail.example.com",
            "smtp://mail.example.com?tls=required",
        ] {
            let s = SmtpServer::from_settings(url, Some(&ca)).expect(url);
            assert!(matches!(s.tls, Tls::Wrapper(_) | Tls::Required(_)), "{url}");
        }
        let not_pem = pki.dir().join("not.pem");
        std::fs::write(&not_pem, "s3cret-not-a-certificate\n").unwrap();
        let missing = pki.dir().join("missing.pem");
        let cases = [
            (
                "smtps://mail.example.com",
                &not_pem,
                "holds no PEM certificate",
            ),
            ("smtps://mail.example.com", &missing, "cannot read"),
            (
                "smtp://u:pw@mail.example.com",
                &ca,
                "SMTP_CA_FILE is set but SMTP_URL uses no TLS",
            ),
        ];
        for (url, file, says) in cases {
            let e = format!(
                "{:#}",
                SmtpServer::from_settings(url, Some(file)).unwrap_err()
            );
            assert!(e.contains("SMTP_CA_FILE") && e.contains(says), "{url}: {e}");
            assert!(!e.contains("s3cret") && !e.contains(":pw@"), "{e}");
        }
    }

    #[test]
    fn the_circuit_admits_one_probe_after_the_delay() {
        let c = Circuit::new();
        assert_eq!(c.admit(), Admit::Go { probe: false });
        let f = SendFailure {
            stage: Stage::Auth,
            error: "535".into(),
            code: Some(535),
        };
        c.session_failed(false, &f);
        assert!(c.is_open());
        assert!(matches!(c.admit(), Admit::Wait(_)));
        // A loop that was already sending fails too: the wait does not grow.
        let until = c.lock().until;
        c.session_failed(false, &f);
        assert_eq!(c.lock().until, until);
        c.lock().until = Instant::now();
        assert_eq!(c.admit(), Admit::Go { probe: true });
        assert!(matches!(c.admit(), Admit::Wait(_)), "one probe at a time");
        c.session_failed(true, &f);
        assert_eq!(c.lock().backoff.failures(), 2);
        c.lock().until = Instant::now();
        assert_eq!(c.admit(), Admit::Go { probe: true });
        c.session_ok();
        assert!(!c.is_open());
        assert_eq!(c.admit(), Admit::Go { probe: false });
    }
}
