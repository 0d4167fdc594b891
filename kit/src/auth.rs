//! Bearer tokens for the gRPC port: a token list file (`AUTH_TOKENS_FILE` for every call,
//! `ADMIN_TOKENS_FILE` for the admin services' mutations), re-read on SIGHUP.
//!
//! The file format, one token a line:
//!
//! ```text
//! # comment lines and blank lines are ignored
//! <name> <token>
//! ci-deploy  6f2b0c1e9a7d4e5f8a1b2c3d4e5f6a7b
//! ```
//!
//! `name` (1 to 64 of `A-Z a-z 0-9 . _ -`) is what the logs show for the caller; `token` is at
//! least 16 printable ASCII characters without spaces (it travels in an HTTP/2 header). Names and
//! tokens are unique within a file. Anything else on a line is an error naming the setting and
//! the line number (never the token). A call carries `authorization: Bearer <token>`.
//!
//! Rotation without downtime: add the new token under a new name, `kill -HUP` the services, move
//! the clients over, remove the old line, `kill -HUP` again. A file that fails to parse on
//! SIGHUP is logged and the previous list stays in force.

use std::{
    fmt,
    hash::{BuildHasher, RandomState},
    path::{Path, PathBuf},
    sync::{Arc, RwLock},
};

use anyhow::Context;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The shortest token accepted.
pub const MIN_TOKEN_LEN: usize = 16;

/// The longest caller name accepted.
pub const MAX_NAME_LEN: usize = 64;

/// One line of a token file.
#[derive(Clone, PartialEq, Eq)]
struct Entry {
    name: String,
    token: String,
}

impl fmt::Debug for Entry {
    // Never the token.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Entry")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// A token list read from the file of a setting; clones share the list, so a reload reaches
/// every holder. `Debug` shows the names, never the tokens.
#[derive(Clone)]
pub struct Tokens {
    setting: &'static str,
    path: PathBuf,
    current: Arc<RwLock<Arc<Vec<Entry>>>>,
    /// The keys of [`Tokens::fingerprint`]: random per process, so a fingerprint says nothing
    /// outside it.
    keys: RandomState,
}

impl fmt::Debug for Tokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tokens")
            .field("setting", &self.setting)
            .field("path", &self.path)
            .field("names", &self.names())
            .finish()
    }
}

impl Tokens {
    /// Reads the file `path` of `setting` (e.g. `AUTH_TOKENS_FILE`); the error names both.
    pub fn load(setting: &'static str, path: &Path) -> anyhow::Result<Self> {
        let entries = read(setting, path)?;
        Ok(Self {
            setting,
            path: path.to_owned(),
            current: Arc::new(RwLock::new(Arc::new(entries))),
            keys: RandomState::new(),
        })
    }

    /// Re-reads the file. On error the previous list stays in force (and the error says so).
    /// Returns the number of tokens now accepted.
    pub fn reload(&self) -> anyhow::Result<usize> {
        let entries =
            read(self.setting, &self.path).context("the previous token list stays in force")?;
        let n = entries.len();
        *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(entries);
        Ok(n)
    }

    /// The setting the list comes from.
    pub fn setting(&self) -> &'static str {
        self.setting
    }

    /// The names of the tokens accepted now.
    pub fn names(&self) -> Vec<String> {
        self.snapshot().iter().map(|e| e.name.clone()).collect()
    }

    /// The name of `token`, if the list holds it. Compares with every entry in constant time,
    /// so the time taken does not tell which entry (or how much of one) a guess matched.
    pub fn check(&self, token: &str) -> Option<String> {
        let mut found = None;
        for e in self.snapshot().iter() {
            if constant_time_eq(e.token.as_bytes(), token.as_bytes()) {
                found = Some(e.name.clone());
            }
        }
        found
    }

    /// A keyed hash of the token `name` holds now, `None` when no line has that name. A holder
    /// that keeps the fingerprint of the name it signed in as sees a rotation (a new token under
    /// the same name, or the line gone) after the reload, without keeping the token.
    pub fn fingerprint(&self, name: &str) -> Option<u64> {
        self.snapshot()
            .iter()
            .find(|e| e.name == name)
            .map(|e| self.keys.hash_one(&e.token))
    }

    fn snapshot(&self) -> Arc<Vec<Entry>> {
        self.current
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// The first token of the token file `path` of `setting`: the one a client that is given a
/// service's own file sends (the console, handed the services' `ADMIN_TOKENS_FILE`). The file is
/// checked as the services check it; the error names the setting and never quotes a token.
pub fn first_token(setting: &str, path: &Path) -> anyhow::Result<String> {
    let mut entries = read(setting, path)?;
    // `parse` refuses a file without a token.
    Ok(entries.swap_remove(0).token)
}

fn read(setting: &str, path: &Path) -> anyhow::Result<Vec<Entry>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{setting}: cannot read {}", path.display()))?;
    parse(&text).map_err(|e| anyhow::anyhow!("{setting}: {}: {e}", path.display()))
}

/// Parses a token file (the format is in the module's documentation). Errors give the line
/// number and never the token.
fn parse(text: &str) -> Result<Vec<Entry>, String> {
    let mut entries: Vec<Entry> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [name, token] = fields[..] else {
            return Err(format!(
                "line {n}: expected `<name> <token>` ({} fields)",
                fields.len()
            ));
        };
        if name.len() > MAX_NAME_LEN
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        {
            return Err(format!(
                "line {n}: the name must be 1 to {MAX_NAME_LEN} of A-Z a-z 0-9 . _ -"
            ));
        }
        if token.len() < MIN_TOKEN_LEN || !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(format!(
                "line {n} ({name}): the token must be at least {MIN_TOKEN_LEN} printable ASCII \
                 characters"
            ));
        }
        if entries.iter().any(|e| e.name == name) {
            return Err(format!("line {n}: the name {name} is used twice"));
        }
        if entries.iter().any(|e| e.token == token) {
            return Err(format!("line {n} ({name}): the token of another line"));
        }
        entries.push(Entry {
            name: name.to_owned(),
            token: token.to_owned(),
        });
    }
    if entries.is_empty() {
        return Err("no token in the file (every call would be refused)".into());
    }
    Ok(entries)
}

/// The token of `authorization: Bearer <token>`, if the headers carry one.
pub fn bearer(headers: &tonic::codegen::http::HeaderMap) -> Option<&str> {
    headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
}

/// Re-reads `lists` on every SIGHUP until `shutdown`, logging each outcome
/// (`AUTH_TOKENS_FILE reloaded: 3 tokens`), never a token.
pub fn reload_on_sighup(lists: Vec<Tokens>, shutdown: CancellationToken) -> JoinHandle<()> {
    // Listening starts here, before the service serves: a SIGHUP from then on is a reload, never
    // the default action (terminate).
    let hup = if lists.is_empty() {
        None
    } else {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
            Ok(s) => Some(s),
            Err(e) => {
                tracing::error!(error = %e, "cannot listen for SIGHUP: token files are not re-read");
                None
            }
        }
    };
    tokio::spawn(async move {
        let Some(mut hup) = hup else { return };
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = hup.recv() => {}
            }
            for list in &lists {
                match list.reload() {
                    Ok(n) => tracing::info!(
                        setting = list.setting(),
                        names = ?list.names(),
                        "{} reloaded: {n} tokens",
                        list.setting()
                    ),
                    Err(e) => tracing::error!("{}: reload failed: {e:#}", list.setting()),
                }
            }
        }
    })
}

/// Compares without an early exit on the first differing byte, so the time taken does not tell
/// how much of a guess was right (the length may leak; the token's length is no secret worth
/// keeping).
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut diff = 0u8;
    for (x, y) in a.iter().zip(b) {
        diff |= x ^ y;
    }
    // Keep the optimiser from turning the loop into an early-exit comparison.
    std::hint::black_box(diff) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_time_eq_compares_whole_tokens() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }

    const T1: &str = "0123456789abcdef";
    const T2: &str = "fedcba9876543210";

    #[test]
    fn the_format() {
        let ok = parse(&format!(
            "# operators\n\n  alice {T1}  \nci-deploy.2\t{T2}\n# end\n"
        ))
        .unwrap();
        assert_eq!(
            ok.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(),
            ["alice", "ci-deploy.2"]
        );
        let bad = [
            (
                format!("alice {T1} extra"),
                "line 1: expected `<name> <token>` (3 fields)",
            ),
            (
                T1.to_string(),
                "line 1: expected `<name> <token>` (1 fields)",
            ),
            (
                "alice short".to_owned(),
                "line 1 (alice): the token must be at least 16",
            ),
            (format!("al/ice {T1}"), "line 1: the name must be"),
            (
                format!("a {T1}\na {T2}"),
                "line 2: the name a is used twice",
            ),
            (
                format!("a {T1}\nb {T1}"),
                "line 2 (b): the token of another line",
            ),
            ("# nothing\n".to_owned(), "no token in the file"),
        ];
        for (text, want) in bad {
            let err = parse(&text).unwrap_err();
            assert!(err.starts_with(want), "{text:?}: {err}");
            assert!(!err.contains(T1) && !err.contains("short"), "{err}");
        }
    }

    #[test]
    fn check_and_reload() {
        let dir = std::env::temp_dir().join(format!("kit-auth-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tokens");
        std::fs::write(&path, format!("alice {T1}\n")).unwrap();
        let tokens = Tokens::load("AUTH_TOKENS_FILE", &path).unwrap();
        let shared = tokens.clone();
        assert_eq!(tokens.check(T1).as_deref(), Some("alice"));
        assert_eq!(tokens.check(T2), None);
        assert_eq!(tokens.check(""), None);

        let alice = tokens.fingerprint("alice");
        assert!(alice.is_some());
        assert_eq!(
            shared.fingerprint("alice"),
            alice,
            "a clone has the same keys"
        );
        assert_eq!(tokens.fingerprint("bob"), None);
        std::fs::write(&path, format!("alice {T2}\n")).unwrap();
        tokens.reload().unwrap();
        assert_ne!(tokens.fingerprint("alice"), alice, "a rotated token");

        std::fs::write(&path, format!("bob {T2}\n")).unwrap();
        assert_eq!(tokens.reload().unwrap(), 1);
        assert_eq!(tokens.fingerprint("alice"), None, "a removed line");
        assert_eq!(shared.check(T1), None, "a clone sees the reload");
        assert_eq!(shared.check(T2).as_deref(), Some("bob"));

        std::fs::write(&path, "bob\n").unwrap();
        let err = format!("{:#}", tokens.reload().unwrap_err());
        assert!(
            err.contains("AUTH_TOKENS_FILE") && err.contains("previous token list stays"),
            "{err}"
        );
        assert_eq!(shared.check(T2).as_deref(), Some("bob"), "kept");
        assert!(!format!("{tokens:?}").contains(T2));

        let err = format!(
            "{:#}",
            Tokens::load("ADMIN_TOKENS_FILE", &dir.join("missing")).unwrap_err()
        );
        assert!(err.starts_with("ADMIN_TOKENS_FILE: cannot read"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
