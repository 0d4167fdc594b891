//! Reading query strings and form bodies field by field, so that bad input is a 400 that names
//! the field (`seq: not a whole number: "x"`), and repeated fields (checkboxes) are kept.
//!
//! Every value is decoded strictly: a percent escape that is not UTF-8 is a 400 naming its
//! field, never a replacement character carried on to a database. Text filters refuse control
//! characters (PostgreSQL refuses NUL in text with an error, not an empty match), numbers are
//! checked against their type, and ages against what a timestamp can hold.

use std::time::Duration;

use crate::error::{Error, Result};

/// The longest text filter (a reason or an event type to look for).
pub const MAX_TEXT: usize = 200;

/// The oldest age a filter may ask for: a century is older than any row, and far inside what
/// PostgreSQL's timestamps hold (`now() - interval` out of their range is an error).
pub const MAX_AGE: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// The fields of a query string or an `application/x-www-form-urlencoded` body.
#[derive(Debug, Default, Clone)]
pub struct Fields(Vec<(String, String)>);

impl Fields {
    /// Parses `raw` (a query string without `?`, or a form body); a name or value that is not
    /// UTF-8 once decoded is a 400 naming the field.
    pub fn parse(raw: &[u8]) -> Result<Self> {
        let mut fields = Vec::new();
        for pair in raw.split(|b| *b == b'&').filter(|p| !p.is_empty()) {
            let (k, v) = match pair.iter().position(|b| *b == b'=') {
                Some(at) => (&pair[..at], &pair[at + 1..]),
                None => (pair, &b""[..]),
            };
            let k = String::from_utf8(decode(k))
                .map_err(|_| Error::bad("query", "a field name is not UTF-8"))?;
            let v = String::from_utf8(decode(v))
                .map_err(|_| Error::bad(k.clone(), "not UTF-8 text"))?;
            fields.push((k, v));
        }
        Ok(Self(fields))
    }

    /// The first value of `name`, trimmed; `None` when absent or empty.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty())
    }

    /// Every non-empty value of `name`.
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.0
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.trim())
            .filter(|v| !v.is_empty())
            .collect()
    }

    /// `name` as text to look for, if given: no control characters, at most [`MAX_TEXT`]
    /// characters.
    pub fn text(&self, name: &'static str) -> Result<Option<&str>> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        if let Some(c) = v.chars().find(|c| c.is_control()) {
            return Err(Error::bad(
                name,
                format!("control characters are not allowed ({c:?})"),
            ));
        }
        if v.chars().count() > MAX_TEXT {
            return Err(Error::bad(name, format!("at most {MAX_TEXT} characters")));
        }
        Ok(Some(v))
    }

    /// `name` as a whole number, if given.
    pub fn i64(&self, name: &'static str) -> Result<Option<i64>> {
        self.get(name).map(|v| number(name, v)).transpose()
    }

    /// `name` as a whole number >= 1, if given.
    pub fn positive(&self, name: &'static str) -> Result<Option<i64>> {
        match self.i64(name)? {
            Some(n) if n < 1 => Err(Error::bad(name, format!("must be at least 1, not {n}"))),
            n => Ok(n),
        }
    }

    /// `name` as a shard number (0 when absent), below `shards`.
    pub fn shard(&self, name: &'static str, shards: usize) -> Result<i32> {
        let s = self.i64(name)?.unwrap_or(0);
        if s < 0 || s >= shards as i64 {
            return Err(Error::bad(
                name,
                format!("no shard {s}: the console knows shards 0 to {}", shards - 1),
            ));
        }
        Ok(s as i32)
    }

    /// `name` as a duration (`90s`, `5m`, `2h`), in whole seconds, if given; at most
    /// [`MAX_AGE`].
    pub fn age(&self, name: &'static str) -> Result<Option<i64>> {
        let Some(v) = self.get(name) else {
            return Ok(None);
        };
        let d = outbox_kit::config::parse_duration(v)
            .map_err(|e| Error::bad(name, format!("{e} (e.g. 90s, 5m, 2h)")))?;
        if d > MAX_AGE {
            return Err(Error::bad(name, "at most 100 years (36500d)"));
        }
        Ok(Some(d.as_secs() as i64))
    }

    /// The reason of an action, by kit's rule for every reason ([`outbox_kit::admin::check_reason`]:
    /// required, at most 1,000 characters, no control character).
    pub fn reason(&self) -> Result<String> {
        outbox_kit::admin::check_reason(self.get("reason").unwrap_or_default())
            .map_err(|e| Error::bad("reason", e.problem()))
    }
}

/// `raw` with `+` as a space and `%XX` escapes decoded (a `%` without two hex digits stays).
fn decode(raw: &[u8]) -> Vec<u8> {
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(raw.len());
    let mut i = 0;
    while i < raw.len() {
        match (raw[i], raw.get(i + 1).copied(), raw.get(i + 2).copied()) {
            (b'%', Some(h), Some(l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h).unwrap_or(0) * 16 + hex(l).unwrap_or(0)) as u8);
                i += 3;
            }
            (b'+', _, _) => {
                out.push(b' ');
                i += 1;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// `v` as a whole number, or a 400 naming `field`.
pub fn number(field: &'static str, v: &str) -> Result<i64> {
    v.trim()
        .parse()
        .map_err(|_| Error::bad(field, format!("not a whole number: {v:?}")))
}

/// A comma-separated list of whole numbers (`4,7,9`), or a 400 naming `field`.
pub fn numbers(field: &'static str, v: &str) -> Result<Vec<i64>> {
    v.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| number(field, s))
        .collect()
}

/// `shard:seq` (a seq of one orders shard), or a 400 naming `field`.
pub fn shard_seq(field: &'static str, v: &str) -> Result<(i32, i64)> {
    let (shard, seq) = v
        .split_once(':')
        .ok_or_else(|| Error::bad(field, format!("not shard:seq: {v:?}")))?;
    let shard = number(field, shard)?;
    let shard = i32::try_from(shard).map_err(|_| Error::bad(field, "shard out of range"))?;
    Ok((shard, number(field, seq)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_table() {
        let f =
            Fields::parse(b"seq=4&seq=7&seq=&order=%2043&bad=x1&age=5m&reason=+&t=a%00b&old=101y")
                .unwrap();
        assert_eq!(f.all("seq"), vec!["4", "7"]);
        assert_eq!(f.i64("order").unwrap(), Some(43));
        assert_eq!(f.i64("missing").unwrap(), None);
        assert!(f.i64("bad").unwrap_err().to_string().starts_with("bad: "));
        assert_eq!(f.age("age").unwrap(), Some(300));
        assert!(f.reason().unwrap_err().to_string().starts_with("reason: "));
        let nul = Fields::parse(b"reason=lost+in+INC-1%00").unwrap();
        assert!(
            nul.reason()
                .unwrap_err()
                .to_string()
                .starts_with("reason: control character")
        );
        assert_eq!(numbers("seqs", "4, 7,9").unwrap(), vec![4, 7, 9]);
        assert!(numbers("seqs", "4,x").is_err());
        assert_eq!(shard_seq("sel", "1:9").unwrap(), (1, 9));
        assert!(shard_seq("sel", "9").is_err());
        assert!(f.shard("order", 2).is_err());
        assert!(
            f.text("t")
                .unwrap_err()
                .to_string()
                .starts_with("t: control")
        );
        assert!(
            f.age("old")
                .unwrap_err()
                .to_string()
                .starts_with("old: at most")
        );
        let bad = Fields::parse(b"a=1&name=%FF").unwrap_err().to_string();
        assert!(bad.starts_with("name: not UTF-8"), "{bad}");
        assert_eq!(
            Fields::parse(b"a=%41%2b+%zz%").unwrap().get("a"),
            Some("A+ %zz%")
        );
    }
}
