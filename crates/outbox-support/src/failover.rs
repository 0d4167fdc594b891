//! Several broker addresses (`AMQP_URL=amqp://u:p@node1:5672/%2f,amqp://u:p@node2:5672/%2f`):
//! the list ([`BrokerUrls`]) and connecting with failover ([`Failover`]), the one place both live
//! for relay-svc, mail-svc and mail-svc's admin dead-letter connection.
//!
//! - The list is comma-separated; a comma inside a password is written `%2C` (as any reserved
//!   character of a URL). One address is a list of one: a single broker behaves as before.
//! - Every form that prints the list (`{}`, `{:?}`, errors) masks each address's password.
//! - [`Failover::connect`] tries the addresses in order, each once, and returns the first
//!   connection made. The first connect starts with the first address; every later one (a
//!   reconnect after the connection was lost or broke) starts with the address *after* the one
//!   last connected to, then wraps around: a reconnect never begins with the node that just went
//!   away. When every address failed, the caller's own backoff decides when to try the next round.
//! - What one connection attempt is (a plain URL, TLS settings, connection properties, a
//!   timeout) is the caller's closure, so the rule of the order lives here and the connection
//!   settings live with the caller.

use std::{
    convert::Infallible,
    fmt,
    future::Future,
    str::FromStr,
    sync::atomic::{AtomicUsize, Ordering},
};

use crate::secret::{InvalidUrl, SecretUrl};

/// One or more broker URLs, in the order they are tried; printing never shows a password.
#[derive(Clone, PartialEq, Eq)]
pub struct BrokerUrls(Vec<SecretUrl>);

impl BrokerUrls {
    /// The addresses, in order (at least one after [`BrokerUrls::validate`]).
    pub fn urls(&self) -> &[SecretUrl] {
        &self.0
    }

    /// The first address (empty when the list is empty, which [`BrokerUrls::validate`] refuses).
    pub fn first(&self) -> SecretUrl {
        self.0
            .first()
            .cloned()
            .unwrap_or_else(|| SecretUrl::new(""))
    }

    /// Checks every address with `parse` (e.g. lapin's `AMQPUri::from_str`) and returns the
    /// parsed ones. The error names `setting`, which entry is bad (for a list of several) and the
    /// address with its password masked; an empty list or an empty entry (`a,,b`) is refused.
    pub fn validate<T, E: fmt::Display>(
        &self,
        setting: &str,
        what: &str,
        mut parse: impl FnMut(&str) -> Result<T, E>,
    ) -> Result<Vec<T>, InvalidBrokerUrls> {
        let n = self.0.len();
        let mut parsed = Vec::with_capacity(n);
        for (i, url) in self.0.iter().enumerate() {
            let entry = if n > 1 {
                format!("{setting} (address {} of {n})", i + 1)
            } else {
                setting.to_owned()
            };
            if url.trim().is_empty() {
                return Err(InvalidBrokerUrls::Empty {
                    entry,
                    what: what.to_owned(),
                });
            }
            parsed.push(url.parse(&entry, what, &mut parse)?);
        }
        if parsed.is_empty() {
            return Err(InvalidBrokerUrls::Empty {
                entry: setting.to_owned(),
                what: what.to_owned(),
            });
        }
        Ok(parsed)
    }
}

/// A broker list [`BrokerUrls::validate`] refused; no field holds a password.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum InvalidBrokerUrls {
    /// The list, or one entry of it, is empty.
    #[error("{entry} is empty: give one {what} or several separated by commas")]
    Empty {
        /// The setting, and which entry for a list of several.
        entry: String,
        /// What each entry must be.
        what: String,
    },
    /// An entry its parser refused.
    #[error(transparent)]
    Invalid(#[from] InvalidUrl),
}

/// Splits on commas (surrounding blanks trimmed). Infallible for the same reason as
/// [`SecretUrl`]'s: clap would quote a rejected value; [`BrokerUrls::validate`] checks it.
impl FromStr for BrokerUrls {
    type Err = Infallible;

    fn from_str(s: &str) -> Result<Self, Infallible> {
        if s.trim().is_empty() {
            return Ok(Self(Vec::new()));
        }
        Ok(Self(
            s.split(',').map(|u| SecretUrl::new(u.trim())).collect(),
        ))
    }
}

impl From<String> for BrokerUrls {
    fn from(s: String) -> Self {
        s.as_str().into()
    }
}

impl From<&str> for BrokerUrls {
    fn from(s: &str) -> Self {
        let Ok(urls) = s.parse();
        urls
    }
}

impl From<SecretUrl> for BrokerUrls {
    fn from(url: SecretUrl) -> Self {
        Self(vec![url])
    }
}

impl From<Vec<SecretUrl>> for BrokerUrls {
    fn from(urls: Vec<SecretUrl>) -> Self {
        Self(urls)
    }
}

impl fmt::Display for BrokerUrls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, url) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            fmt::Display::fmt(url, f)?;
        }
        Ok(())
    }
}

impl fmt::Debug for BrokerUrls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("BrokerUrls")
            .field(&self.to_string())
            .finish()
    }
}

/// Connects to the first broker of a [`BrokerUrls`] list that answers, starting after the one
/// last connected to. Shared (`&self`) by every connection of a component, so that a reconnect
/// moves on from the node it lost.
#[derive(Debug)]
pub struct Failover {
    urls: BrokerUrls,
    /// Where the next connect starts: after the last address connected to.
    next: AtomicUsize,
}

impl Failover {
    /// A failover over `urls` (validate them first: an empty list is tried as one empty
    /// address, which the caller's connect refuses).
    pub fn new(urls: impl Into<BrokerUrls>) -> Self {
        let mut urls = urls.into();
        if urls.0.is_empty() {
            urls.0.push(SecretUrl::new(""));
        }
        Self {
            urls,
            next: AtomicUsize::new(0),
        }
    }

    /// The addresses.
    pub fn urls(&self) -> &BrokerUrls {
        &self.urls
    }

    /// The order in which the next [`Failover::connect`] tries the addresses (indexes).
    pub fn order(&self) -> Vec<usize> {
        let n = self.urls.0.len();
        let start = self.next.load(Ordering::Relaxed) % n.max(1);
        (0..n).map(|i| (start + i) % n).collect()
    }

    /// Tries `connect_one` on each address in [`Failover::order`] and returns the first
    /// connection made and the address it was made to. A failed address is logged (password
    /// masked, the error scrubbed of it) and the next one tried; when all failed, the last error
    /// is returned, for the caller to log and back off.
    pub async fn connect<'a, T, E, F, Fut>(
        &'a self,
        mut connect_one: F,
    ) -> Result<(T, &'a SecretUrl), E>
    where
        E: fmt::Display,
        F: FnMut(&'a SecretUrl) -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let order = self.order();
        let n = order.len();
        let last = n.saturating_sub(1);
        let mut error = None;
        for (attempt, i) in order.into_iter().enumerate() {
            let url = &self.urls.0[i];
            match connect_one(url).await {
                Ok(conn) => {
                    self.next.store(i + 1, Ordering::Relaxed);
                    if n > 1 {
                        tracing::info!(broker = %url, "connected to broker {} of {n}", i + 1);
                    }
                    return Ok((conn, url));
                }
                Err(e) => {
                    if n > 1 {
                        let then = if attempt < last {
                            "trying the next"
                        } else {
                            "none left in this round"
                        };
                        tracing::warn!(
                            broker = %url,
                            error = %url.scrub(&e.to_string()),
                            "cannot connect to broker {} of {n}; {then}",
                            i + 1,
                        );
                    }
                    error = Some(e);
                }
            }
        }
        let Some(e) = error else {
            unreachable!("Failover::new keeps at least one address")
        };
        Err(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_list_and_masks_every_password() {
        let urls: BrokerUrls = "amqp://a:pw1@h1:5691/%2f, amqp://b:pw2@h2:5692/%2f".into();
        assert_eq!(urls.urls().len(), 2);
        assert_eq!(urls.urls()[1].expose(), "amqp://b:pw2@h2:5692/%2f");
        let shown = format!("{urls} {urls:?}");
        assert!(!shown.contains("pw1") && !shown.contains("pw2"), "{shown}");
        assert_eq!(
            urls.to_string(),
            "amqp://a:***@h1:5691/%2f,amqp://b:***@h2:5692/%2f"
        );
        // One address is a list of one; a comma in a password is %2C.
        let one: BrokerUrls = "amqp://a:p%2Cw@h/%2f".into();
        assert_eq!(one.urls().len(), 1);
    }

    #[test]
    fn validation_names_the_setting_and_the_entry() {
        let ok = |s: &str| -> Result<(), String> {
            if s.starts_with("amqp://") {
                Ok(())
            } else {
                Err(format!("bad scheme in {s}"))
            }
        };
        let list: BrokerUrls = "amqp://u:pw1@h1/%2f,http://u:pw2@h2/".into();
        let err = list.validate("AMQP_URL", "AMQP URL", ok).unwrap_err();
        let text = format!("{err:#}");
        assert!(text.contains("AMQP_URL (address 2 of 2)"), "{text}");
        assert!(!text.contains("pw2") && !text.contains("pw1"), "{text}");
        for bad in ["", " ", "amqp://h1/%2f,,amqp://h2/%2f", "amqp://h1/%2f,"] {
            let err = BrokerUrls::from(bad)
                .validate("AMQP_URL", "AMQP URL", ok)
                .unwrap_err();
            assert!(err.to_string().contains("empty"), "{bad:?}: {err}");
            assert!(err.to_string().contains("AMQP_URL"), "{bad:?}: {err}");
        }
        let good: BrokerUrls = "amqp://h1/%2f,amqp://h2/%2f,amqp://h3/%2f".into();
        assert_eq!(good.validate("AMQP_URL", "AMQP URL", ok).unwrap().len(), 3);
    }

    /// A connect that succeeds only on the addresses in `up`, recording what it tried.
    async fn connect_to(
        failover: &Failover,
        up: &[&str],
        tried: &mut Vec<String>,
    ) -> Result<String, String> {
        failover
            .connect(|url| {
                tried.push(url.expose().to_owned());
                let ok = up.contains(&url.expose());
                async move {
                    if ok {
                        Ok(url.expose().to_owned())
                    } else {
                        Err(format!("refused by {}", url.expose()))
                    }
                }
            })
            .await
            .map(|(conn, _)| conn)
    }

    #[tokio::test]
    async fn tries_in_order_then_moves_on_from_the_last_connected_and_wraps() {
        let failover = Failover::new("a,b,c");
        let mut tried = Vec::new();
        // First connect: in order; a is down.
        assert_eq!(
            connect_to(&failover, &["b", "c"], &mut tried).await,
            Ok("b".into())
        );
        assert_eq!(tried, ["a", "b"]);
        // The connection to b was lost: the reconnect starts after b.
        tried.clear();
        assert_eq!(
            connect_to(&failover, &["a", "b", "c"], &mut tried).await,
            Ok("c".into())
        );
        assert_eq!(tried, ["c"]);
        // After c it wraps around to a; a and b down: c again.
        tried.clear();
        assert_eq!(
            connect_to(&failover, &["c"], &mut tried).await,
            Ok("c".into())
        );
        assert_eq!(tried, ["a", "b", "c"]);
        // All down: each tried once, the last error returned (the caller backs off).
        tried.clear();
        assert_eq!(
            connect_to(&failover, &[], &mut tried).await,
            Err("refused by c".into())
        );
        assert_eq!(tried, ["a", "b", "c"]);
        // The last connection was to c: the next round starts at a.
        assert_eq!(failover.order(), [0, 1, 2]);
    }

    #[tokio::test]
    async fn a_single_address_behaves_as_before() {
        let failover = Failover::new("a");
        let mut tried = Vec::new();
        assert_eq!(
            connect_to(&failover, &["a"], &mut tried).await,
            Ok("a".into())
        );
        assert_eq!(
            connect_to(&failover, &["a"], &mut tried).await,
            Ok("a".into())
        );
        assert_eq!(tried, ["a", "a"]);
    }
}
