//! Reading query strings and form bodies field by field, so that bad input is a 400 that names
//! the field (`seq: not a whole number: "x"`), and repeated fields (checkboxes) are kept.

use std::time::Duration;

use crate::error::{Error, Result};

/// The fields of a query string or an `application/x-www-form-urlencoded` body.
#[derive(Debug, Default, Clone)]
pub struct Fields(Vec<(String, String)>);

impl Fields {
    /// Parses `raw` (a query string without `?`, or a form body).
    pub fn parse(raw: &[u8]) -> Self {
        Self(
            url::form_urlencoded::parse(raw)
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        )
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

    /// `name` as a duration (`90s`, `5m`, `2h`), in whole seconds, if given.
    pub fn age(&self, name: &'static str) -> Result<Option<i64>> {
        self.get(name)
            .map(|v| {
                outbox_kit::config::parse_duration(v)
                    .map(|d: Duration| d.as_secs() as i64)
                    .map_err(|e| Error::bad(name, format!("{e} (e.g. 90s, 5m, 2h)")))
            })
            .transpose()
    }

    /// The reason of an action, by kit's rule for every reason ([`outbox_kit::admin::check_reason`]:
    /// required, at most 1,000 characters, no control character).
    pub fn reason(&self) -> Result<String> {
        outbox_kit::admin::check_reason(self.get("reason").unwrap_or_default())
            .map_err(|e| Error::bad("reason", e.problem()))
    }
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
        let f = Fields::parse(b"seq=4&seq=7&seq=&order=%2043&bad=x1&age=5m&reason=+");
        assert_eq!(f.all("seq"), vec!["4", "7"]);
        assert_eq!(f.i64("order").unwrap(), Some(43));
        assert_eq!(f.i64("missing").unwrap(), None);
        assert!(f.i64("bad").unwrap_err().to_string().starts_with("bad: "));
        assert_eq!(f.age("age").unwrap(), Some(300));
        assert!(f.reason().unwrap_err().to_string().starts_with("reason: "));
        let nul = Fields::parse(b"reason=lost+in+INC-1%00");
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
    }
}
