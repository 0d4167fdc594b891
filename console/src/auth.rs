//! Sign-in, sessions, roles and the checks every write passes.
//!
//! - **Sign-in**: a token of `CONSOLE_VIEWER_TOKENS_FILE` or `CONSOLE_OPERATOR_TOKENS_FILE`,
//!   posted in a form body (never a URL), gives a session: a random id in a cookie that is
//!   `HttpOnly`, `SameSite=Strict`, `Path=/`, and `Secure` under TLS. The token itself is never
//!   stored, logged or sent back.
//! - **Roles**: [`Role::Viewer`] reads; [`Role::Operator`] may also act. Pages hide the actions
//!   from a viewer and [`Session::may_write`] refuses them (403) whatever the request says.
//! - **Writes** ([`check_write`]): the request must come from the console's own pages
//!   (`Sec-Fetch-Site: same-origin`, else an `Origin` equal to the console's) and carry the
//!   per-form token of the session: a token derived from the session's secret and the form's
//!   action, so a token of another form, of an ended session or of another user is refused.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use axum::http::{HeaderMap, header};
use outbox_kit::auth::{Tokens, constant_time_eq};
use rand::RngCore;
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use crate::error::Error;

/// What a signed-in user may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Reads every page; acts on nothing.
    Viewer,
    /// Reads and acts.
    Operator,
}

impl Role {
    pub fn label(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Operator => "operator",
        }
    }
}

/// A signed-in user.
#[derive(Clone)]
pub struct Session {
    /// The token's name in its file: recorded as the operator of every action.
    pub user: String,
    pub role: Role,
    /// The secret the per-form tokens derive from (never sent as such).
    secret: [u8; 32],
    expires: Instant,
    /// The fingerprint of the token signed in with ([`Tokens::fingerprint`]): a reload that
    /// rotated the token out ends the session.
    token: u64,
    /// Cancelled when the session ends: what it opened (a live stream) ends with it.
    ended: CancellationToken,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("user", &self.user)
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

impl Session {
    /// The per-form token of the form that posts to `action` (a path such as
    /// `/quarantine/requeue`).
    pub fn form_token(&self, action: &str) -> String {
        let mut h = Sha256::new();
        h.update(self.secret);
        h.update(b"\0");
        h.update(action.as_bytes());
        hex(&h.finalize())
    }

    /// True for an operator.
    pub fn may_write(&self) -> bool {
        self.role == Role::Operator
    }

    /// Resolves when the session ends: signed out, expired, or its token rotated out (seen by
    /// [`Sessions::alive`]).
    pub async fn ended(&self) {
        tokio::select! {
            _ = self.ended.cancelled() => {}
            _ = tokio::time::sleep_until(self.expires.into()) => {}
        }
    }
}

/// The signed-in sessions, by cookie value, and the token lists that sign people in.
#[derive(Debug, Clone)]
pub struct Sessions {
    by_id: Arc<Mutex<HashMap<String, Session>>>,
    viewers: Option<Tokens>,
    operators: Option<Tokens>,
    ttl: Duration,
    /// TLS on: cookies are `Secure` and `__Host-` prefixed.
    secure: bool,
}

impl Sessions {
    pub fn new(
        viewers: Option<Tokens>,
        operators: Option<Tokens>,
        ttl: Duration,
        secure: bool,
    ) -> Self {
        Self {
            by_id: Arc::default(),
            viewers,
            operators,
            ttl,
            secure,
        }
    }

    /// The cookie's name.
    pub fn cookie_name(&self) -> &'static str {
        if self.secure {
            "__Host-outbox-console"
        } else {
            "outbox-console"
        }
    }

    fn list(&self, role: Role) -> Option<&Tokens> {
        match role {
            Role::Viewer => self.viewers.as_ref(),
            Role::Operator => self.operators.as_ref(),
        }
    }

    /// Signs in with `token`: the new session's id, or `None` when no list holds the token.
    /// An operator token wins when both lists hold it.
    pub fn sign_in(&self, token: &str) -> Option<(String, Session)> {
        let token = token.trim();
        let (user, role) = [Role::Operator, Role::Viewer]
            .into_iter()
            .find_map(|role| Some((self.list(role)?.check(token)?, role)))?;
        let fingerprint = self.list(role)?.fingerprint(&user)?;
        let mut secret = [0u8; 32];
        rand::rng().fill_bytes(&mut secret);
        let mut id = [0u8; 32];
        rand::rng().fill_bytes(&mut id);
        let session = Session {
            user,
            role,
            secret,
            expires: Instant::now() + self.ttl,
            token: fingerprint,
            ended: CancellationToken::new(),
        };
        let id = hex(&id);
        let mut map = self.lock();
        let now = Instant::now();
        map.retain(|_, s| s.expires > now);
        map.insert(id.clone(), session.clone());
        Some((id, session))
    }

    /// The `Set-Cookie` value of a new session.
    pub fn cookie(&self, id: &str) -> String {
        format!(
            "{}={id}; Path=/; HttpOnly; SameSite=Strict; Max-Age={}{}",
            self.cookie_name(),
            self.ttl.as_secs(),
            if self.secure { "; Secure" } else { "" }
        )
    }

    /// The `Set-Cookie` value that removes the cookie.
    pub fn cookie_cleared(&self) -> String {
        format!(
            "{}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0{}",
            self.cookie_name(),
            if self.secure { "; Secure" } else { "" }
        )
    }

    /// The session the request's cookie names, if it is alive; and its id.
    pub fn current(&self, headers: &HeaderMap) -> Option<(String, Session)> {
        let name = self.cookie_name();
        let id = headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|kv| kv.trim().split_once('='))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_owned())?;
        let session = self.alive(&id)?;
        Some((id, session))
    }

    /// Session `id` if it is alive: not signed out, not expired, and its token still the one
    /// its list holds under its name (a reload may have rotated it out). A session found dead
    /// is ended.
    pub fn alive(&self, id: &str) -> Option<Session> {
        let s = self.lock().get(id)?.clone();
        let listed = self
            .list(s.role)
            .and_then(|l| l.fingerprint(&s.user))
            .is_some_and(|f| f == s.token);
        if s.expires > Instant::now() && listed {
            return Some(s);
        }
        self.sign_out(id);
        None
    }

    /// Ends the session `id`.
    pub fn sign_out(&self, id: &str) {
        if let Some(s) = self.lock().remove(id) {
            s.ended.cancel();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Session>> {
        self.by_id.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The checks of a write posted to `action`: an operator's session, sent by the console's own
/// page, with that form's token. Each refusal is a 403 and happens before anything is read or
/// changed.
pub fn check_write(
    session: &Session,
    headers: &HeaderMap,
    action: &str,
    token: Option<&str>,
) -> Result<(), Error> {
    if !session.may_write() {
        return Err(Error::Forbidden(format!(
            "{} is signed in as a viewer: viewers cannot act",
            session.user
        )));
    }
    check_form(session, headers, action, token)
}

/// The checks of any form posted to `action` (also a viewer's sign-out): sent by the console's
/// own page, with that form's token of this session.
pub fn check_form(
    session: &Session,
    headers: &HeaderMap,
    action: &str,
    token: Option<&str>,
) -> Result<(), Error> {
    same_origin(headers)?;
    let expected = session.form_token(action);
    match token {
        Some(t) if constant_time_eq(t.as_bytes(), expected.as_bytes()) => Ok(()),
        Some(_) => Err(Error::Forbidden(
            "the form's token is stale or belongs to another form: reload the page and try again"
                .into(),
        )),
        None => Err(Error::Forbidden(
            "the form's token is missing: use the console's own forms".into(),
        )),
    }
}

/// The request comes from a page of this console: `Sec-Fetch-Site: same-origin` when the
/// browser sends it, else an `Origin` whose host is the request's `Host`. A request with
/// neither is refused: every browser sends `Origin` with a form post.
pub fn same_origin(headers: &HeaderMap) -> Result<(), Error> {
    if let Some(site) = headers.get("sec-fetch-site") {
        return if site.as_bytes() == b"same-origin" {
            Ok(())
        } else {
            Err(Error::Forbidden(format!(
                "a write from another site ({}) is refused",
                String::from_utf8_lossy(site.as_bytes())
            )))
        };
    }
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
    let origin = headers.get(header::ORIGIN).and_then(|h| h.to_str().ok());
    match (origin, host) {
        (Some(origin), Some(host)) => {
            let origin_host = origin
                .strip_prefix("https://")
                .or_else(|| origin.strip_prefix("http://"));
            if origin_host == Some(host) {
                Ok(())
            } else {
                Err(Error::Forbidden(format!(
                    "a write from another origin ({origin}) is refused"
                )))
            }
        }
        _ => Err(Error::Forbidden(
            "a write without Origin or Sec-Fetch-Site is refused".into(),
        )),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn same_origin_table() {
        let cases: &[(&[(&str, &str)], bool)] = &[
            (&[("sec-fetch-site", "same-origin")], true),
            (&[("sec-fetch-site", "cross-site")], false),
            (&[("sec-fetch-site", "same-site")], false),
            (&[("sec-fetch-site", "none")], false),
            (&[("origin", "http://c:8080"), ("host", "c:8080")], true),
            (&[("origin", "https://c:8080"), ("host", "c:8080")], true),
            (&[("origin", "http://evil:8080"), ("host", "c:8080")], false),
            (&[("origin", "null"), ("host", "c:8080")], false),
            (&[("host", "c:8080")], false),
            (&[], false),
        ];
        for (h, ok) in cases {
            assert_eq!(same_origin(&headers(h)).is_ok(), *ok, "{h:?}");
        }
    }
}
