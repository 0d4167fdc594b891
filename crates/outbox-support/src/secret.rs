//! URLs that carry credentials (`DATABASE_URL`, `AMQP_URL`, `SMTP_URL`): held in [`SecretUrl`],
//! whose `Display` and `Debug` print `user:***@host`, so a log line, an error or a `{:?}` of a
//! config never shows a password.
//!
//! The wrapper derefs to the full URL (`&str`) because the drivers (sqlx, lapin, lettre) take it
//! that way; every *formatting* path (`{}`, `{:?}`, `to_string()`) redacts. Parsers' error texts
//! are scrubbed too ([`SecretUrl::parse`]): a driver that quotes part of the URL in its error
//! must not leak the password either.

use std::{borrow::Cow, convert::Infallible, fmt, ops::Deref, str::FromStr};

/// What a redacted part is replaced with.
const MASK: &str = "***";

/// A URL that may carry a password; printing it never shows the password.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretUrl(String);

impl SecretUrl {
    /// Wraps `url` (not validated: parse it with [`SecretUrl::parse`]).
    pub fn new(url: impl Into<String>) -> Self {
        Self(url.into())
    }

    /// The full URL, password included: only for handing to a driver.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The URL with its password (and any `password=` query value) replaced by `***`.
    pub fn redacted(&self) -> Cow<'_, str> {
        redact(&self.0).0
    }

    /// `text` with every secret of this URL (raw and percent-decoded) replaced by `***`: for error
    /// texts of libraries that may quote the URL they could not use.
    pub fn scrub(&self, text: &str) -> String {
        let mut out = text.to_owned();
        let (_, secrets) = redact(&self.0);
        // Longest first, so that a secret containing another is replaced whole.
        let mut secrets: Vec<String> = secrets
            .into_iter()
            .flat_map(|s| [percent_decode(&s), s])
            .filter(|s| !s.is_empty())
            .collect();
        secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
        for s in secrets {
            out = out.replace(&s, MASK);
        }
        out
    }

    /// Parses the URL with `parse`; the error names `setting` (e.g. `DATABASE_URL`) and `what` it
    /// must be, and shows the redacted URL and the scrubbed cause.
    pub fn parse<T, E: fmt::Display>(
        &self,
        setting: &str,
        what: &str,
        parse: impl FnOnce(&str) -> Result<T, E>,
    ) -> Result<T, InvalidUrl> {
        parse(&self.0).map_err(|e| InvalidUrl {
            setting: setting.to_owned(),
            what: what.to_owned(),
            redacted: self.to_string(),
            cause: self.scrub(&e.to_string()),
        })
    }
}

/// A URL setting its parser refused; every field is already free of the password.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{setting} is not a valid {what} ({redacted}): {cause}")]
pub struct InvalidUrl {
    setting: String,
    what: String,
    redacted: String,
    cause: String,
}

impl Deref for SecretUrl {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SecretUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl fmt::Debug for SecretUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("SecretUrl").field(&self.redacted()).finish()
    }
}

impl From<String> for SecretUrl {
    fn from(s: String) -> Self {
        Self(s)
    }
}

impl From<&str> for SecretUrl {
    fn from(s: &str) -> Self {
        Self(s.to_owned())
    }
}

/// Infallible on purpose: clap quotes a rejected value in its error, so the URL is validated
/// later, by [`SecretUrl::parse`], whose errors redact it.
impl FromStr for SecretUrl {
    type Err = Infallible;

    fn from_str(s: &str) -> Result<Self, Infallible> {
        Ok(Self(s.to_owned()))
    }
}

/// The redacted form of `url` and the secrets it removed.
///
/// - `scheme://user:password@host…` → `scheme://user:***@host…` (the userinfo ends at the last
///   `@` of the authority; a password with an unescaped `/`, `?` or `#` makes the authority
///   ambiguous, and then everything before the last `@` is masked);
/// - query values whose key contains `pass` (`?password=…`, `sslpassword=…`) → `***`;
/// - text that is not a URL (no `://`) but contains `@` or `pass` → `***` entirely.
fn redact(url: &str) -> (Cow<'_, str>, Vec<String>) {
    let Some((scheme, rest)) = url.split_once("://") else {
        let lower = url.to_ascii_lowercase();
        if url.contains('@') || lower.contains("pass") {
            return (Cow::Borrowed(MASK), vec![url.to_owned()]);
        }
        return (Cow::Borrowed(url), Vec::new());
    };
    let mut secrets = Vec::new();
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (prefix, tail) = match rest[..authority_end].rfind('@') {
        Some(at) => {
            let (userinfo, tail) = (&rest[..at], &rest[at + 1..]);
            match userinfo.split_once(':') {
                Some((user, password)) => {
                    secrets.push(password.to_owned());
                    (format!("{user}:{MASK}@"), tail)
                }
                None => (format!("{userinfo}@"), tail),
            }
        }
        // No `@` in the authority, but one later after a `:`: a password with a `/`, `?` or
        // `#` in it (or an `@` in the query). Mask all of it rather than guess.
        None => match rest.rfind('@') {
            Some(at) if rest[..at].contains(':') => {
                secrets.push(rest[..at].to_owned());
                (format!("{MASK}@"), &rest[at + 1..])
            }
            _ => (String::new(), rest),
        },
    };
    let tail = redact_query(tail, &mut secrets);
    if secrets.is_empty() {
        return (Cow::Borrowed(url), secrets);
    }
    (Cow::Owned(format!("{scheme}://{prefix}{tail}")), secrets)
}

/// `tail` (host, path, query) with the values of password-like query keys masked.
fn redact_query<'a>(tail: &'a str, secrets: &mut Vec<String>) -> Cow<'a, str> {
    let Some((before, query)) = tail.split_once('?') else {
        return Cow::Borrowed(tail);
    };
    let (query, fragment) = match query.split_once('#') {
        Some((q, f)) => (q, Some(f)),
        None => (query, None),
    };
    let mut masked = false;
    let pairs: Vec<Cow<'_, str>> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((key, value))
                if key.to_ascii_lowercase().contains("pass") && !value.is_empty() =>
            {
                secrets.push(value.to_owned());
                masked = true;
                Cow::Owned(format!("{key}={MASK}"))
            }
            _ => Cow::Borrowed(pair),
        })
        .collect();
    if !masked {
        return Cow::Borrowed(tail);
    }
    let mut out = format!("{before}?{}", pairs.join("&"));
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    Cow::Owned(out)
}

/// `%xx` sequences decoded (invalid ones kept as they are), for scrubbing a decoded password.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(b) = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redaction_table() {
        let cases = [
            // No credentials: unchanged.
            (
                "postgres://postgres@127.0.0.1:5432/orders",
                "postgres://postgres@127.0.0.1:5432/orders",
            ),
            ("smtp://127.0.0.1:1025", "smtp://127.0.0.1:1025"),
            (
                "amqp://host/%2f?heartbeat=10",
                "amqp://host/%2f?heartbeat=10",
            ),
            // user:password@.
            (
                "amqp://guest:guest@127.0.0.1:5672/%2f",
                "amqp://guest:***@127.0.0.1:5672/%2f",
            ),
            (
                "postgres://app:s3cret@db:5432/orders",
                "postgres://app:***@db:5432/orders",
            ),
            (
                "smtps://mailer:p%40ss@smtp.example.com:465",
                "smtps://mailer:***@smtp.example.com:465",
            ),
            ("postgres://u:@db/x", "postgres://u:***@db/x"),
            // An unescaped @ in the password: the last @ of the authority ends the userinfo.
            ("postgres://u:p@ss@db/x", "postgres://u:***@db/x"),
            // An unescaped / or # in the password: mask everything before the last @.
            ("postgres://u:pa/ss@db/x", "postgres://***@db/x"),
            ("amqp://u:pa#ss@host/%2f", "amqp://***@host/%2f"),
            // Password in the query.
            (
                "postgres://u@db/x?password=s3cret&sslmode=disable",
                "postgres://u@db/x?password=***&sslmode=disable",
            ),
            (
                "postgres://db/x?sslmode=require&sslpassword=k3y",
                "postgres://db/x?sslmode=require&sslpassword=***",
            ),
            // Broken or not a URL at all.
            (
                "postgres://u:s3cret@db:notaport/x",
                "postgres://u:***@db:notaport/x",
            ),
            ("host=db password=s3cret", "***"),
            ("u:s3cret@db", "***"),
            ("not a url", "not a url"),
        ];
        for (raw, want) in cases {
            let url = SecretUrl::from(raw);
            assert_eq!(url.to_string(), want, "{raw}");
            assert_eq!(format!("{url:?}"), format!("SecretUrl({want:?})"), "{raw}");
        }
    }

    #[test]
    fn scrub_removes_raw_and_decoded_passwords() {
        let url = SecretUrl::from("smtps://mailer:p%40ss%2Fword@smtp.example.com");
        assert_eq!(
            url.scrub("bad password p@ss/word (p%40ss%2Fword)"),
            "bad password *** (***)"
        );
        let url = SecretUrl::from("postgres://u:s3cret@db:notaport/x");
        let err = url
            .parse("DATABASE_URL", "PostgreSQL URL", |s| {
                Err::<(), _>(format!("cannot parse {s}"))
            })
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("DATABASE_URL is not a valid PostgreSQL URL"),
            "{err}"
        );
        assert!(!err.contains("s3cret"), "{err}");
        assert!(err.contains("u:***@db:notaport"), "{err}");
    }

    #[test]
    fn deref_gives_drivers_the_full_url() {
        let url = SecretUrl::from("amqp://guest:guest@127.0.0.1:5672/%2f");
        let s: &str = &url;
        assert_eq!(s, "amqp://guest:guest@127.0.0.1:5672/%2f");
        assert_eq!(url.expose(), s);
    }
}
