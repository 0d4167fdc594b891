//! The SMTP circuit breaker: when the server refuses sessions, every delivery loop of this
//! instance backs off and one probe at a time finds out when it works again, so that an outage
//! costs one session per delay instead of one per mail.

use std::{sync::Mutex, time::Duration};

use outbox_support::backoff::Backoff;
use tokio::time::Instant;

use super::failure::SendFailure;

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
pub(super) enum Admit {
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
                backoff: super::retry_backoff(),
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

    pub(super) fn admit(&self) -> Admit {
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
    pub(super) fn release(&self, probe: bool) {
        if probe {
            self.lock().probing = false;
        }
    }

    /// A session got as far as the mail's own stages: the server works.
    pub(super) fn session_ok(&self) {
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
    pub(super) fn session_failed(&self, probe: bool, f: &SendFailure) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mailer::failure::Stage;

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
