//! One SMTP session for a round's mails: connect, STARTTLS or implicit TLS, AUTH, then one mail
//! transaction per mail on the same connection, noting the stage each step reached so that a
//! failure can be judged ([`super::failure`]); every step under a timeout, so that a stalled
//! server cannot hold a claimed mail.

use std::time::Duration;

use lettre::{
    message::Mailbox,
    transport::smtp::{
        Error as SmtpError,
        authentication::DEFAULT_MECHANISMS,
        client::{AsyncSmtpConnection, Tls},
        commands::{Data, Mail, Rcpt},
        extension::{Extension, MailBodyParameter, MailParameter},
    },
};

use super::{
    failure::{SendFailure, Stage},
    message::build_message,
    transport::SmtpServer,
};
use crate::db::MailRow;

/// A stalled server must not hold a claimed mail (and its order) forever: the limit for each
/// read and write of a session.
const SMTP_IO_TIMEOUT: Duration = Duration::from_secs(15);

/// The limit for a whole session (connect to the reply after the message).
const SMTP_SESSION_TIMEOUT: Duration = Duration::from_secs(60);

/// The longest an SMTP round keeps its claiming transaction idle between two statements: one
/// mail's session, and its one retry on a fresh session.
pub const LONGEST_SEND: Duration = Duration::from_secs(2 * SMTP_SESSION_TIMEOUT.as_secs());

/// One SMTP session for the mails of a round: opened for the first mail, kept while mails are
/// accepted, dropped after any failure (the next mail opens a fresh one), QUIT at the end.
pub(super) struct SmtpSession<'a> {
    server: &'a SmtpServer,
    from: &'a Mailbox,
    conn: Option<AsyncSmtpConnection>,
}

impl<'a> SmtpSession<'a> {
    pub(super) fn new(server: &'a SmtpServer, from: &'a Mailbox) -> Self {
        Self {
            server,
            from,
            conn: None,
        }
    }

    /// Sends one mail and returns the server's answer to its message (`250 …`). A session kept
    /// from an earlier mail that fails before the mail's own transaction got anywhere (servers
    /// close idle or busy sessions, or limit mails per session) is retried once on a fresh
    /// session, so that only a fresh session's refusal counts as the server refusing us.
    pub(super) async fn send(&mut self, m: &MailRow) -> Result<String, SendFailure> {
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
    async fn attempt(
        &mut self,
        to: &lettre::Address,
        message: &[u8],
    ) -> Result<String, SendFailure> {
        let mut stage = Stage::Connect;
        let result = tokio::time::timeout(
            SMTP_SESSION_TIMEOUT,
            self.attempt_untimed(to, message, &mut stage),
        )
        .await;
        let failure = match result {
            Ok(Ok(reply)) => return Ok(reply),
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
    ) -> Result<String, SmtpError> {
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
    pub(super) async fn close(mut self) {
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
) -> Result<String, SmtpError> {
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
    let accepted = conn.message(message).await?;
    let text: Vec<&str> = accepted.message().collect();
    Ok(format!("{} {}", accepted.code(), text.join(" "))
        .trim_end()
        .to_owned())
}
