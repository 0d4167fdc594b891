//! A real SMTP server, in-process, whose answers a test changes while it runs: at AUTH, at
//! MAIL FROM, per recipient at RCPT TO, and per recipient after the message (DATA). It records
//! every message it accepts and counts every command it was sent. Plaintext, or TLS (from the
//! first byte as `smtps://`, or after STARTTLS) with a certificate a test made.

use std::{
    net::SocketAddr,
    sync::{Arc, Mutex},
};

use outbox_testkit::pki::CertFiles;
use tokio::{
    io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader},
    net::{TcpListener, TcpStream},
};
use tokio_rustls::{TlsAcceptor, rustls};

/// A message the server accepted.
#[derive(Debug, Clone)]
pub struct Accepted {
    /// The RCPT TO address, without the angle brackets.
    pub rcpt: String,
    /// The seq in `Message-ID: <order-event-<seq>@outbox>`.
    pub seq: u64,
}

#[derive(Debug, Default)]
struct State {
    /// The reply to AUTH; `None` accepts (235).
    auth: Option<String>,
    /// The reply to MAIL FROM; `None` accepts (250).
    mail_from: Option<String>,
    /// (recipient substring, reply at RCPT TO).
    rcpt: Vec<(String, String)>,
    /// (recipient substring, reply after the message).
    after_data: Vec<(String, String)>,
    accepted: Vec<Accepted>,
    auth_commands: usize,
    mail_commands: usize,
    /// Every RCPT TO address, in arrival order.
    rcpt_commands: Vec<String>,
    /// Sessions opened (connections greeted).
    sessions: usize,
    /// Messages a session may send; the next MAIL FROM gets 421 and the session is closed
    /// (as servers limiting messages per connection do). `None`: no limit.
    mails_per_session: Option<usize>,
    /// Why TLS handshakes failed, as the server saw it (e.g. the client's alert).
    tls_failures: Vec<String>,
}

/// How sessions get TLS.
#[derive(Clone)]
enum ServerTls {
    None,
    /// From the first byte (`smtps://`).
    Implicit(TlsAcceptor),
    /// Offered in the EHLO reply, after the STARTTLS command.
    StartTls(TlsAcceptor),
}

/// The server; clones share it.
#[derive(Debug, Clone)]
pub struct FaultySmtp {
    pub addr: SocketAddr,
    state: Arc<Mutex<State>>,
}

impl FaultySmtp {
    /// A plaintext server.
    pub async fn start() -> Self {
        Self::start_with(ServerTls::None).await
    }

    /// A server speaking TLS from the first byte (`smtps://`) with `cert`.
    pub async fn start_implicit_tls(cert: &CertFiles) -> Self {
        Self::start_with(ServerTls::Implicit(acceptor(cert))).await
    }

    /// A server offering STARTTLS with `cert` (`smtp://…?tls=required`).
    pub async fn start_starttls(cert: &CertFiles) -> Self {
        Self::start_with(ServerTls::StartTls(acceptor(cert))).await
    }

    async fn start_with(tls: ServerTls) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind smtp");
        let addr = listener.local_addr().expect("addr");
        let state = Arc::new(Mutex::new(State::default()));
        let shared = state.clone();
        tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let state = shared.clone();
                let tls = tls.clone();
                tokio::spawn(async move {
                    let _ = connection(sock, tls, state).await;
                });
            }
        });
        Self { addr, state }
    }

    fn with<T>(&self, f: impl FnOnce(&mut State) -> T) -> T {
        f(&mut self.state.lock().expect("lock"))
    }

    /// Answers AUTH with `reply` (`None`: accept).
    pub fn auth_reply(&self, reply: Option<&str>) {
        self.with(|s| s.auth = reply.map(str::to_owned));
    }

    /// Answers MAIL FROM with `reply` (`None`: accept).
    pub fn mail_from_reply(&self, reply: Option<&str>) {
        self.with(|s| s.mail_from = reply.map(str::to_owned));
    }

    /// Answers RCPT TO for recipients containing `who` with `reply` (`None`: accept).
    pub fn rcpt_reply(&self, who: &str, reply: Option<&str>) {
        self.with(|s| {
            s.rcpt.retain(|(w, _)| w != who);
            if let Some(r) = reply {
                s.rcpt.push((who.to_owned(), r.to_owned()));
            }
        });
    }

    /// Answers the message (after DATA) for recipients containing `who` with `reply`.
    pub fn data_reply(&self, who: &str, reply: Option<&str>) {
        self.with(|s| {
            s.after_data.retain(|(w, _)| w != who);
            if let Some(r) = reply {
                s.after_data.push((who.to_owned(), r.to_owned()));
            }
        });
    }

    pub fn accepted(&self) -> Vec<Accepted> {
        self.with(|s| s.accepted.clone())
    }

    /// The seqs accepted for recipients containing `who`, in acceptance order.
    pub fn accepted_seqs(&self, who: &str) -> Vec<u64> {
        self.with(|s| {
            s.accepted
                .iter()
                .filter(|a| a.rcpt.contains(who))
                .map(|a| a.seq)
                .collect()
        })
    }

    pub fn auth_commands(&self) -> usize {
        self.with(|s| s.auth_commands)
    }

    /// How many sessions were opened.
    pub fn sessions(&self) -> usize {
        self.with(|s| s.sessions)
    }

    /// Closes each session after `limit` accepted messages (`None`: no limit).
    pub fn mails_per_session(&self, limit: Option<usize>) {
        self.with(|s| s.mails_per_session = limit);
    }

    /// Why TLS handshakes failed, as the server saw them.
    pub fn tls_failures(&self) -> Vec<String> {
        self.with(|s| s.tls_failures.clone())
    }

    pub fn mail_commands(&self) -> usize {
        self.with(|s| s.mail_commands)
    }

    /// How many RCPT TO commands named a recipient containing `who`.
    pub fn rcpt_commands(&self, who: &str) -> usize {
        self.with(|s| s.rcpt_commands.iter().filter(|r| r.contains(who)).count())
    }
}

/// A TLS acceptor serving `cert` (ring, as the services' rustls).
fn acceptor(cert: &CertFiles) -> TlsAcceptor {
    let read = |p: &std::path::Path| std::fs::read_to_string(p).expect("reads the PEM file");
    let chain = outbox_kit::tls::certificates("test", &cert.cert, &read(&cert.cert)).expect("cert");
    let key = outbox_kit::tls::private_key("test", &cert.key, &read(&cert.key)).expect("key");
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("protocol versions")
    .with_no_client_auth()
    .with_single_cert(chain, key)
    .expect("server certificate");
    TlsAcceptor::from(Arc::new(config))
}

/// One client connection, with the TLS its server speaks.
async fn connection(
    sock: TcpStream,
    tls: ServerTls,
    state: Arc<Mutex<State>>,
) -> std::io::Result<()> {
    let handshake = |acceptor: TlsAcceptor, sock| {
        let state = state.clone();
        async move {
            acceptor.accept(sock).await.inspect_err(|e| {
                state.lock().expect("lock").tls_failures.push(e.to_string());
            })
        }
    };
    match tls {
        ServerTls::None => {
            session(sock, &state, true, false).await?;
        }
        ServerTls::Implicit(acceptor) => {
            let sock = handshake(acceptor, sock).await?;
            session(sock, &state, true, false).await?;
        }
        ServerTls::StartTls(acceptor) => {
            if let Some(sock) = session(sock, &state, true, true).await? {
                let sock = handshake(acceptor, sock).await?;
                // After STARTTLS the client starts over with EHLO, without a new greeting.
                session(sock, &state, false, false).await?;
            }
        }
    }
    Ok(())
}

/// The SMTP dialog on `sock`: greeted when `greet`; when `offer_starttls`, STARTTLS is
/// advertised and, once asked for, the stream is handed back for the handshake.
async fn session<S: AsyncRead + AsyncWrite + Unpin>(
    sock: S,
    state: &Mutex<State>,
    greet: bool,
    offer_starttls: bool,
) -> std::io::Result<Option<S>> {
    let mut conn = BufReader::new(sock);
    if greet {
        state.lock().expect("lock").sessions += 1;
        conn.write_all(b"220 faulty.test ESMTP\r\n").await?;
        conn.flush().await?;
    }
    let mut to: Vec<String> = Vec::new();
    let mut sent_here = 0usize;
    let mut line = String::new();
    loop {
        line.clear();
        if conn.read_line(&mut line).await? == 0 {
            return Ok(None);
        }
        let cmd = line.trim_end().to_owned();
        let upper = cmd.to_ascii_uppercase();
        let reply: String = if upper.starts_with("EHLO") {
            let starttls = if offer_starttls {
                "250-STARTTLS\r\n"
            } else {
                ""
            };
            format!("250-faulty.test\r\n250-8BITMIME\r\n{starttls}250 AUTH PLAIN LOGIN")
        } else if offer_starttls && upper == "STARTTLS" {
            conn.write_all(b"220 2.0.0 ready to start TLS\r\n").await?;
            conn.flush().await?;
            // The client sends nothing more before the handshake: nothing is left buffered.
            return Ok(Some(conn.into_inner()));
        } else if upper.starts_with("HELO") || upper.starts_with("NOOP") {
            "250 OK".into()
        } else if upper.starts_with("AUTH") {
            let mut s = state.lock().expect("lock");
            s.auth_commands += 1;
            s.auth
                .clone()
                .unwrap_or_else(|| "235 2.7.0 Authentication successful".into())
        } else if upper.starts_with("MAIL FROM:") {
            to.clear();
            let (limited, reply) = {
                let mut s = state.lock().expect("lock");
                s.mail_commands += 1;
                let limited = s.mails_per_session.is_some_and(|n| sent_here >= n);
                (
                    limited,
                    s.mail_from.clone().unwrap_or_else(|| "250 OK".into()),
                )
            };
            if limited {
                conn.write_all(b"421 4.7.0 too many messages in this session, closing\r\n")
                    .await?;
                conn.flush().await?;
                return Ok(None);
            }
            reply
        } else if upper.starts_with("RCPT TO:") {
            let rcpt = cmd[8..].trim().trim_matches(['<', '>']).to_owned();
            let mut s = state.lock().expect("lock");
            s.rcpt_commands.push(rcpt.clone());
            match s.rcpt.iter().find(|(w, _)| rcpt.contains(w.as_str())) {
                Some((_, r)) => r.clone(),
                None => {
                    to.push(rcpt);
                    "250 OK".into()
                }
            }
        } else if upper.starts_with("RSET") {
            to.clear();
            "250 OK".into()
        } else if upper == "DATA" {
            conn.write_all(b"354 end with <CRLF>.<CRLF>\r\n").await?;
            conn.flush().await?;
            let mut data = String::new();
            loop {
                line.clear();
                if conn.read_line(&mut line).await? == 0 {
                    return Ok(None);
                }
                if line == ".\r\n" {
                    break;
                }
                data.push_str(line.strip_prefix('.').unwrap_or(&line));
            }
            let mut s = state.lock().expect("lock");
            let rejected = to.iter().find_map(|rcpt| {
                s.after_data
                    .iter()
                    .find(|(w, _)| rcpt.contains(w.as_str()))
                    .map(|(_, r)| r.clone())
            });
            match rejected {
                Some(r) => r,
                None => {
                    let message_id = header(&data, "Message-ID").unwrap_or_default();
                    let seq = message_id
                        .strip_prefix("<order-event-")
                        .and_then(|x| x.strip_suffix("@outbox>"))
                        .and_then(|x| x.parse().ok())
                        .unwrap_or_else(|| panic!("Message-ID {message_id:?} names no seq"));
                    for rcpt in &to {
                        s.accepted.push(Accepted {
                            rcpt: rcpt.clone(),
                            seq,
                        });
                    }
                    sent_here += 1;
                    "250 2.0.0 OK queued".into()
                }
            }
        } else if upper.starts_with("QUIT") {
            conn.write_all(b"221 bye\r\n").await?;
            conn.flush().await?;
            return Ok(None);
        } else {
            "502 command not implemented".into()
        };
        conn.write_all(format!("{reply}\r\n").as_bytes()).await?;
        conn.flush().await?;
    }
}

fn header(data: &str, name: &str) -> Option<String> {
    data.split("\r\n")
        .take_while(|l| !l.is_empty())
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim().to_owned())
        })
}
