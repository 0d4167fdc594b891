//! Opening an AMQP connection, the one way every outbox crate does: [`connect`] one URL with its
//! [`Tls`] material (used by `amqps://` URLs) and a heartbeat, and [`watch`] what the broker says
//! about it afterwards. A caller with several brokers tries them in its own order
//! ([`crate::failover`]).
//!
//! **A silent peer is noticed in about two heartbeats.** A firewall or a half-dead NAT can drop
//! a connection's packets without closing it (no RST, no FIN); only the heartbeat tells. Every
//! connection asks for `heartbeat` (the `AMQP_HEARTBEAT` setting, [`DEFAULT_HEARTBEAT`]) unless
//! its URL names one (`?heartbeat=5`; `0` turns heartbeats off); the broker may lower it. lapin
//! sends a heartbeat every half interval and closes the connection with
//! `MissingHeartbeatError` when nothing arrived for two intervals. Its socket also gets TCP
//! keepalives and `TCP_USER_TIMEOUT` of two intervals ([`TcpLiveness`]): data the peer has not
//! acknowledged for that long ends the connection in the kernel, whatever the application does.
//!
//! **What the broker says** ([`watch`]): `connection.blocked` / `connection.unblocked` (a
//! RabbitMQ resource alarm: the broker stops reading from publishing connections) with the
//! reason the broker gave, and the loss of the connection with why ([`Lost`]).

use std::{
    fmt, io,
    net::SocketAddr,
    str::FromStr,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use futures::StreamExt as _;
use lapin::{
    AsyncTcpStream, Connection, ConnectionProperties, ErrorKind, Event,
    tcp::OwnedTLSConfig,
    uri::{AMQPScheme, AMQPUri},
};
use tokio::{sync::watch as tokio_watch, task::JoinHandle};

/// The heartbeat a connection asks for when neither the caller nor its URL says otherwise.
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(10);

/// The longest heartbeat a connection can ask for (AMQP carries it as 16-bit seconds; longer
/// than this is no liveness check at all).
pub const MAX_HEARTBEAT: Duration = Duration::from_secs(600);

/// TLS material for `amqps://` connections: extra trusted CA certificates and a client
/// certificate. The default is none (the system's roots, no client certificate).
/// `Debug` never shows the private key.
#[derive(Clone, Default)]
pub struct Tls(OwnedTLSConfig);

impl Tls {
    /// Wraps lapin's TLS configuration (PEM CA chain, client identity).
    pub fn new(config: OwnedTLSConfig) -> Self {
        Self(config)
    }
}

impl fmt::Debug for Tls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tls")
            .field("ca", &self.0.cert_chain.is_some())
            .field("client_cert", &self.0.identity.is_some())
            .finish()
    }
}

/// The heartbeat `url` will ask for: its own `heartbeat` query parameter, else `heartbeat`
/// (whole seconds, rounded up; see [`MAX_HEARTBEAT`]). Zero means none. An unreadable URL gives
/// `heartbeat` (connecting to it fails anyway).
pub fn heartbeat_of(url: &str, heartbeat: Duration) -> Duration {
    match AMQPUri::from_str(url) {
        Ok(uri) => Duration::from_secs(u64::from(
            uri.query.heartbeat.unwrap_or(whole_seconds(heartbeat)),
        )),
        Err(_) => heartbeat,
    }
}

fn whole_seconds(d: Duration) -> u16 {
    let secs = d.as_secs() + u64::from(d.subsec_nanos() > 0);
    u16::try_from(secs.min(MAX_HEARTBEAT.as_secs())).unwrap_or(u16::MAX)
}

/// The TCP settings of an AMQP socket for a heartbeat of `h`: keepalive probes after `h` idle,
/// every `h / 2`, three of them, and `TCP_USER_TIMEOUT` of `2 h`. A connection without heartbeat
/// (`h` = 0) gets those of [`DEFAULT_HEARTBEAT`]: its TCP side still notices a dead peer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpLiveness {
    /// Idle time before the first keepalive probe.
    pub keepalive_idle: Duration,
    /// Between two probes.
    pub keepalive_interval: Duration,
    /// Unanswered probes before the kernel gives up.
    pub keepalive_probes: u32,
    /// How long sent data may stay unacknowledged before the kernel ends the connection.
    pub user_timeout: Duration,
}

impl TcpLiveness {
    /// The settings for a heartbeat of `heartbeat` (see the type's docs).
    pub fn for_heartbeat(heartbeat: Duration) -> Self {
        let h = if heartbeat.is_zero() {
            DEFAULT_HEARTBEAT
        } else {
            heartbeat
        };
        Self {
            keepalive_idle: h,
            keepalive_interval: (h / 2).max(Duration::from_secs(1)),
            keepalive_probes: 3,
            user_timeout: h * 2,
        }
    }

    fn apply(&self, socket: &tokio::net::TcpStream) -> io::Result<()> {
        let socket = socket2::SockRef::from(socket);
        socket.set_tcp_keepalive(
            &socket2::TcpKeepalive::new()
                .with_time(self.keepalive_idle)
                .with_interval(self.keepalive_interval)
                .with_retries(self.keepalive_probes),
        )?;
        #[cfg(any(target_os = "linux", target_os = "android"))]
        socket.set_tcp_user_timeout(Some(self.user_timeout))?;
        Ok(())
    }
}

/// Opens one connection to `url` with `tls` (used by `amqps://` URLs; ignored by `amqp://`),
/// asking for a heartbeat of `heartbeat` unless the URL names its own (see the module docs), on
/// a socket with [`TcpLiveness`] for the heartbeat.
///
/// Takes one URL: a caller with several brokers tries them in its own order.
pub async fn connect(
    url: &str,
    tls: &Tls,
    heartbeat: Duration,
    properties: ConnectionProperties,
) -> lapin::Result<Connection> {
    let mut uri = AMQPUri::from_str(url).map_err(io::Error::other)?;
    let asked = *uri.query.heartbeat.get_or_insert(whole_seconds(heartbeat));
    let tcp = TcpLiveness::for_heartbeat(Duration::from_secs(u64::from(asked)));
    let tls = tls.0.clone();
    let runtime = lapin::runtime::default_runtime()?;
    let reactor = runtime.clone();
    // lapin's own connect, plus the socket options it has no setting for.
    Connection::connector(
        uri,
        runtime,
        async move |uri: AMQPUri, _| {
            let host = uri.authority.host.trim_matches(['[', ']']).to_owned();
            let addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), uri.authority.port))
                    .await?
                    .collect();
            let stream = AsyncTcpStream::connect(&reactor, addrs).await?;
            if let AsyncTcpStream::Plain(socket) = &stream {
                tcp.apply(socket.get_ref())?;
            }
            Ok(match uri.scheme {
                AMQPScheme::AMQP => stream,
                AMQPScheme::AMQPS => stream.into_tls(&uri.authority.host, tls.as_ref()).await?,
            })
        },
        properties,
    )
    .await
}

/// The longest [`close`] waits for the broker's close-ok.
pub const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// Closes `conn` politely, waiting for the broker's close-ok at most [`CLOSE_WAIT`]. A close is
/// the end of a connection, never a step to hang on: a close-ok that never comes (the socket
/// already gone) would otherwise hold a shutdown or a reconnect forever. The broker hands unacked
/// deliveries back to their queues either way, once the socket closes.
pub async fn close(conn: &Connection, reason: &str) {
    let _ = tokio::time::timeout(CLOSE_WAIT, conn.close(200, reason.into())).await;
}

/// Why a connection was lost, as the `reason` label of the services' reconnect counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Lost {
    /// Nothing arrived from the broker for two heartbeat intervals: a silent network.
    Heartbeat,
    /// The socket failed (reset, refused, the kernel's TCP timeout).
    Io,
    /// The broker closed it (a node stopping, an operator's `close_connection`, a protocol
    /// error it reported).
    Closed,
    /// The caller gave up on it: the broker took too long to confirm (e.g. a stalled network).
    Timeout,
}

impl Lost {
    /// Every reason, in label order.
    pub const ALL: [Lost; 4] = [Lost::Heartbeat, Lost::Io, Lost::Closed, Lost::Timeout];

    /// The label: `heartbeat`, `io`, `closed`, `timeout`.
    pub fn label(self) -> &'static str {
        match self {
            Lost::Heartbeat => "heartbeat",
            Lost::Io => "io",
            Lost::Closed => "closed",
            Lost::Timeout => "timeout",
        }
    }

    /// The reason for a connection error lapin reported.
    pub fn of(error: &lapin::Error) -> Self {
        match error.kind() {
            ErrorKind::MissingHeartbeatError => Lost::Heartbeat,
            ErrorKind::IOError(_) => Lost::Io,
            _ => Lost::Closed,
        }
    }

    /// What an operator reads in the log.
    pub fn describe(self) -> &'static str {
        match self {
            Lost::Heartbeat => "no heartbeat from the broker for two intervals (a silent network)",
            Lost::Io => "the socket failed",
            Lost::Closed => "the broker closed it",
            Lost::Timeout => "the broker did not confirm in time",
        }
    }
}

impl fmt::Display for Lost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// The broker blocks the connection's publishing (`connection.blocked`: a RabbitMQ resource
/// alarm, memory or disk).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocked {
    /// The reason the broker gave (RabbitMQ: `low on memory`, `low on disk space`, …).
    pub reason: String,
    /// Since when.
    pub since: Instant,
}

/// What [`watch`] knows about a connection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct State {
    /// Set while the broker blocks the connection.
    pub blocked: Option<Blocked>,
    /// Set once the connection is lost (it stays lost: reconnect).
    pub lost: Option<Lost>,
}

/// A change [`watch`] reports to its callback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The broker blocked the connection, with its reason.
    Blocked(String),
    /// The broker unblocked it, after `for_`.
    Unblocked {
        /// How long it was blocked.
        for_: Duration,
    },
    /// The connection is lost. Reported once, and only while the [`Watch`] lives: a connection
    /// its owner closes or drops is not reported.
    Lost(Lost),
}

/// How often [`watch`] also looks at the connection's state, for a loss lapin reports without
/// an event (a close by the broker).
const STATE_CHECK: Duration = Duration::from_millis(500);

/// Watches `conn` from now on: the broker's `connection.blocked` / `connection.unblocked`, and
/// the connection's loss. Each change is given to `on_change` (from a task of its own, at once:
/// the place to log, count and update health) and kept in the returned [`Watch`]. Call it right
/// after connecting: lapin passes an event on only to listeners that exist when it arrives.
///
/// Dropping the [`Watch`] stops the task; drop it before closing the connection on purpose, so
/// the close is not reported as a loss.
pub fn watch(conn: &Connection, on_change: impl Fn(&Change) + Send + 'static) -> Watch {
    let mut events = conn.events_listener();
    let status = conn.status().clone();
    let (state, receiver) = tokio_watch::channel(State::default());
    let task = tokio::spawn(async move {
        let mut check = tokio::time::interval(STATE_CHECK);
        check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let lost = loop {
            let event = tokio::select! {
                biased;
                event = events.next() => event,
                _ = check.tick() => {
                    if status.connected() || status.connecting() {
                        continue;
                    }
                    // lapin sets the state just before it sends the error: give it a moment,
                    // so the loss is reported with its reason.
                    let reason = async {
                        while let Some(event) = events.next().await {
                            if let Event::Error(e) = event {
                                return Lost::of(&e);
                            }
                        }
                        Lost::Closed
                    };
                    break tokio::time::timeout(Duration::from_millis(200), reason)
                        .await
                        .unwrap_or(Lost::Closed);
                }
            };
            match event {
                Some(Event::ConnectionBlocked(reason)) => {
                    on_change(&Change::Blocked(reason.clone()));
                    state.send_modify(|s| {
                        s.blocked = Some(Blocked {
                            reason,
                            since: Instant::now(),
                        })
                    });
                }
                Some(Event::ConnectionUnblocked) => {
                    let since = state.borrow().blocked.as_ref().map(|b| b.since);
                    if let Some(since) = since {
                        on_change(&Change::Unblocked {
                            for_: since.elapsed(),
                        });
                    }
                    state.send_modify(|s| s.blocked = None);
                }
                // lapin reports a channel's close (a refused publish, a failed declare) the
                // same way: only an error that took the connection down is a loss.
                Some(Event::Error(e)) if !status.connected() => break Lost::of(&e),
                Some(Event::Error(_)) => {}
                Some(_) => {}
                None => break Lost::Closed,
            }
        };
        on_change(&Change::Lost(lost));
        // A lost connection is no longer blocked.
        state.send_modify(|s| {
            s.blocked = None;
            s.lost = Some(lost);
        });
    });
    Watch {
        state: receiver,
        status: conn.status().clone(),
        task: Arc::new(Mutex::new(Some(task))),
    }
}

/// What [`watch`] knows about one connection, live. Dropping the last clone stops the watch.
#[derive(Clone)]
pub struct Watch {
    state: tokio_watch::Receiver<State>,
    /// The connection's state: one that is already lost is left to report its loss.
    status: lapin::ConnectionStatus,
    task: Arc<Mutex<Option<JoinHandle<()>>>>,
}

impl fmt::Debug for Watch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Watch")
            .field("state", &*self.state.borrow())
            .finish()
    }
}

impl Watch {
    /// The state now.
    pub fn state(&self) -> State {
        self.state.borrow().clone()
    }

    /// Set while the broker blocks the connection.
    pub fn blocked(&self) -> Option<Blocked> {
        self.state.borrow().blocked.clone()
    }

    /// Set once the connection was lost.
    pub fn lost(&self) -> Option<Lost> {
        self.state.borrow().lost
    }

    /// Resolves when the broker does not block the connection (at once when it does not now),
    /// or when the connection is lost.
    pub async fn unblocked(&self) {
        let mut state = self.state.clone();
        let _ = state
            .wait_for(|s| s.blocked.is_none() || s.lost.is_some())
            .await;
    }

    /// Resolves once the connection is lost, with why.
    pub async fn lost_wait(&self) -> Lost {
        let mut state = self.state.clone();
        match state.wait_for(|s| s.lost.is_some()).await {
            Ok(s) => s.lost.unwrap_or(Lost::Closed),
            // The watch task is gone without saying: treat as lost.
            Err(_) => Lost::Closed,
        }
    }

    /// Stops watching a connection that is still up (a close on purpose follows). A connection
    /// already lost is left to report its loss (the task then ends by itself), however its
    /// owner learnt of it first.
    pub fn stop(&self) {
        if !(self.status.connected() || self.status.connecting()) {
            return;
        }
        if let Some(task) = self.task.lock().unwrap_or_else(|e| e.into_inner()).take() {
            task.abort();
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        // The last clone stops the task (the task holds no clone).
        if Arc::strong_count(&self.task) == 1 {
            self.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_urls_heartbeat_wins_and_durations_round_up() {
        let s = Duration::from_secs;
        assert_eq!(heartbeat_of("amqp://h/%2f", s(10)), s(10));
        assert_eq!(heartbeat_of("amqp://h/%2f?heartbeat=3", s(10)), s(3));
        assert_eq!(heartbeat_of("amqp://h/%2f?heartbeat=0", s(10)), s(0));
        assert_eq!(
            heartbeat_of("amqp://h/%2f", Duration::from_millis(1500)),
            s(2)
        );
        assert_eq!(heartbeat_of("amqp://h/%2f", s(100_000)), MAX_HEARTBEAT);
    }

    #[test]
    fn tcp_gives_up_after_two_heartbeats() {
        let s = Duration::from_secs;
        let t = TcpLiveness::for_heartbeat(s(10));
        assert_eq!(
            t,
            TcpLiveness {
                keepalive_idle: s(10),
                keepalive_interval: s(5),
                keepalive_probes: 3,
                user_timeout: s(20),
            }
        );
        assert_eq!(TcpLiveness::for_heartbeat(s(1)).keepalive_interval, s(1));
        // No heartbeat: the TCP side still notices.
        assert_eq!(
            TcpLiveness::for_heartbeat(s(0)),
            TcpLiveness::for_heartbeat(DEFAULT_HEARTBEAT)
        );
    }

    #[test]
    fn reasons_have_stable_labels() {
        let labels: Vec<_> = Lost::ALL.iter().map(|l| l.label()).collect();
        assert_eq!(labels, ["heartbeat", "io", "closed", "timeout"]);
        assert_eq!(
            Lost::of(&ErrorKind::MissingHeartbeatError.into()),
            Lost::Heartbeat
        );
    }
}
