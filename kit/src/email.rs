//! The one rule for customer mail addresses, shared by orders-svc (which refuses a bad address at
//! `Upsert` with INVALID_ARGUMENT) and mail-svc (which dead-letters an event carrying one). Both
//! sides apply the same function, so an address is either refused when the order is created or
//! mailed for every event of the order: never an order whose `OrderCreated` is dead-lettered and
//! whose later events are held forever.
//!
//! The rule is deliberately narrower than RFC 5322 and a subset of what lettre (the mailer) parses,
//! so that every accepted address can be put on an SMTP envelope by any server:
//!
//! - at most [`MAX_LEN`] bytes in all (the SMTP path limit), ASCII only (internationalised
//!   addresses need SMTPUTF8, which a server may not offer);
//! - `local@domain` with exactly one `@`;
//! - local part: 1..=[`MAX_LOCAL_LEN`] bytes, a dot-atom: letters, digits and
//!   ``!#$%&'*+-/=?^_`{|}~``, in runs separated by single dots, not starting or ending with one
//!   (no quoted local parts);
//! - domain: at least two labels separated by single dots; each
//!   label 1..=[`MAX_LABEL_LEN`] bytes of letters, digits and `-`, starting and ending with a letter
//!   or digit; the last label is not all digits (no bare IP addresses, no `[...]` literals).
//!
//! Error messages never repeat the address (it may be huge or hostile): they name what is wrong
//! and, at most, one short domain label.

use std::fmt;

/// The longest address accepted, in bytes (RFC 5321's 256-byte path minus the angle brackets).
pub const MAX_LEN: usize = 254;
/// The longest local part, in bytes (RFC 5321).
pub const MAX_LOCAL_LEN: usize = 64;
/// The longest domain label, in bytes (RFC 1035).
pub const MAX_LABEL_LEN: usize = 63;

/// Why an address is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmailError {
    Empty,
    /// Longer than [`MAX_LEN`]; carries the length.
    TooLong(usize),
    NotAscii,
    /// Zero or several `@`.
    NotOneAt,
    LocalEmpty,
    /// Longer than [`MAX_LOCAL_LEN`]; carries the length.
    LocalTooLong(usize),
    /// A leading, trailing or doubled dot in the local part.
    LocalDots,
    /// A character outside the dot-atom alphabet (a space, a quote, a comma, ...).
    LocalChar(char),
    /// No dot in the domain.
    DomainOneLabel,
    /// An empty label (a leading, trailing or doubled dot).
    DomainDots,
    /// A label that is too long, has a character other than a letter, digit or `-`, or starts or
    /// ends with `-`; carries the label when it is short enough to show.
    DomainLabel(String),
    /// The last label is all digits.
    NumericTld,
}

impl fmt::Display for EmailError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => write!(f, "is empty"),
            Self::TooLong(n) => write!(f, "is {n} bytes long (at most {MAX_LEN})"),
            Self::NotAscii => write!(f, "has non-ASCII characters"),
            Self::NotOneAt => write!(f, "must contain exactly one '@'"),
            Self::LocalEmpty => write!(f, "has nothing before the '@'"),
            Self::LocalTooLong(n) => {
                write!(f, "has a local part of {n} bytes (at most {MAX_LOCAL_LEN})")
            }
            Self::LocalDots => write!(
                f,
                "has a local part that starts or ends with a dot or has two dots in a row"
            ),
            Self::LocalChar(c) => write!(f, "has {c:?} in its local part"),
            Self::DomainOneLabel => write!(f, "has a domain without a dot"),
            Self::DomainDots => write!(
                f,
                "has a domain that starts or ends with a dot or has two dots in a row"
            ),
            Self::DomainLabel(label) => write!(
                f,
                "has an invalid domain label {label:?} (letters, digits and inner '-', at most {MAX_LABEL_LEN} bytes)"
            ),
            Self::NumericTld => write!(f, "has an all-numeric top-level domain"),
        }
    }
}

impl std::error::Error for EmailError {}

/// Checks `addr` against the rule in the module docs.
pub fn validate(addr: &str) -> Result<(), EmailError> {
    if addr.is_empty() {
        return Err(EmailError::Empty);
    }
    // Length first: a huge value is refused without being scanned (or echoed).
    if addr.len() > MAX_LEN {
        return Err(EmailError::TooLong(addr.len()));
    }
    if !addr.is_ascii() {
        return Err(EmailError::NotAscii);
    }
    let (local, domain) = match addr.split_once('@') {
        Some((l, d)) if !d.contains('@') => (l, d),
        _ => return Err(EmailError::NotOneAt),
    };
    validate_local(local)?;
    validate_domain(domain)
}

fn validate_local(local: &str) -> Result<(), EmailError> {
    if local.is_empty() {
        return Err(EmailError::LocalEmpty);
    }
    if local.len() > MAX_LOCAL_LEN {
        return Err(EmailError::LocalTooLong(local.len()));
    }
    if let Some(c) = local.chars().find(|&c| c != '.' && !is_atext(c)) {
        return Err(EmailError::LocalChar(c));
    }
    if local.split('.').any(str::is_empty) {
        return Err(EmailError::LocalDots);
    }
    Ok(())
}

/// RFC 5322 `atext`, ASCII only.
fn is_atext(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c)
}

fn validate_domain(domain: &str) -> Result<(), EmailError> {
    // No separate domain length check: MAX_LEN leaves at most 252 bytes for it (RFC 1035: 253).
    if !domain.contains('.') {
        return Err(EmailError::DomainOneLabel);
    }
    let labels: Vec<&str> = domain.split('.').collect();
    if labels.iter().any(|l| l.is_empty()) {
        return Err(EmailError::DomainDots);
    }
    for label in &labels {
        let ok = label.len() <= MAX_LABEL_LEN
            && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
            && !label.starts_with('-')
            && !label.ends_with('-');
        if !ok {
            return Err(EmailError::DomainLabel(if label.len() <= MAX_LABEL_LEN {
                (*label).to_owned()
            } else {
                format!("{}...", &label[..16])
            }));
        }
    }
    if labels
        .last()
        .is_some_and(|tld| tld.chars().all(|c| c.is_ascii_digit()))
    {
        return Err(EmailError::NumericTld);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted() {
        let local64 = format!("{}@example.com", "a".repeat(64));
        let label63 = format!("a@{}.com", "b".repeat(63));
        for ok in [
            "a@b.co",
            "taro.yamada+x@example.jp",
            "o'brien@example.ie",
            "!#$%&'*+-/=?^_`{|}~@example.com",
            "a@x-y.example.com",
            "a@1.example.com",
            "a@b.c0m",
            local64.as_str(),
            label63.as_str(),
        ] {
            assert_eq!(validate(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn refused_with_a_reason() {
        use EmailError::*;
        let local65 = format!("{}@example.com", "a".repeat(65));
        let label64 = format!("a@{}.com", "b".repeat(64));
        let total255 = format!(
            "{}@{}.com",
            "a".repeat(64),
            vec!["b".repeat(62); 3].join(".")
        );
        let huge = format!("{}@example.com", "a".repeat(200 * 1024));
        let cases: &[(&str, EmailError)] = &[
            ("", Empty),
            ("nobody", NotOneAt),
            ("a@b@c.de", NotOneAt),
            ("@b.co", LocalEmpty),
            ("john..doe@example.com", LocalDots),
            (".a@x.com", LocalDots),
            ("a.@x.com", LocalDots),
            ("a b@c.de", LocalChar(' ')),
            ("\"a\"@c.de", LocalChar('"')),
            ("a,b@c.de", LocalChar(',')),
            ("a\0@c.de", LocalChar('\0')),
            ("tarō@example.jp", NotAscii),
            ("a@", DomainOneLabel),
            ("a@b", DomainOneLabel),
            ("a@x..com", DomainDots),
            ("a@.de", DomainDots),
            ("a@de.", DomainDots),
            ("a@-x.com", DomainLabel("-x".into())),
            ("a@x-.com", DomainLabel("x-".into())),
            ("a@x_y.com", DomainLabel("x_y".into())),
            ("a@[127.0.0.1]", DomainLabel("[127".into())),
            ("a@127.0.0.1", NumericTld),
            (local65.as_str(), LocalTooLong(65)),
            (
                label64.as_str(),
                DomainLabel(format!("{}...", "b".repeat(16))),
            ),
            (total255.as_str(), TooLong(total255.len())),
            (huge.as_str(), TooLong(huge.len())),
        ];
        for (addr, want) in cases {
            assert_eq!(validate(addr).as_ref(), Err(want), "{addr:.40}");
            // The message never carries the address itself.
            assert!(want.to_string().len() < 200, "{want}");
        }
    }
}
