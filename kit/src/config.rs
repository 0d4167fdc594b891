//! The one duration format of every setting, and the `*_MS` settings it replaced.
//!
//! Every duration setting of the services (`BACKOFF_MIN`, `POLL_INTERVAL`, `LEADER_LEASE`,
//! `MAIL_HOLD_ALERT`, …) is parsed by [`parse_duration`] through clap's `value_parser`. The older
//! millisecond settings (`BACKOFF_MIN_MS`, …) stay accepted: [`renamed_ms`] picks the value, refuses
//! both names set at once, and says which name to use instead.

use std::time::Duration;

/// Parses a duration the way `humantime` writes it (`250ms`, `1s`, `30s`, `2m`, `1h 30m`), or a
/// bare number of seconds (`30`), which `LEADER_LEASE` and `MAIL_HOLD_ALERT` always accepted.
///
/// For clap's `value_parser`: clap puts the setting's name in front of the error.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s
            .parse::<u64>()
            .map(Duration::from_secs)
            .map_err(|_| format!("{s:?} is too many seconds"));
    }
    humantime::parse_duration(s)
        .map_err(|e| format!("{s:?} is not a duration ({e}); write e.g. 250ms, 1s, 30s, 2m"))
}

/// The value of a duration setting that replaced a deprecated millisecond one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// The duration to use.
    pub value: Duration,
    /// The variable the value came from (the new name when it is the default), for messages.
    pub source: &'static str,
    /// Set when the deprecated variable was used: the warning to log once at start-up.
    pub deprecation: Option<String>,
}

/// Picks the value of the setting `name` (e.g. `BACKOFF_MIN`, already parsed) or of its
/// deprecated predecessor `old_name` (e.g. `BACKOFF_MIN_MS`, in milliseconds), else `default`.
///
/// Both set is an error naming both: the operator meant one of them, and guessing which would hide
/// the mistake.
pub fn renamed_ms(
    name: &'static str,
    value: Option<Duration>,
    old_name: &'static str,
    old_ms: Option<u64>,
    default: Duration,
) -> anyhow::Result<Resolved> {
    match (value, old_ms) {
        (Some(_), Some(_)) => anyhow::bail!(
            "{name} and {old_name} are both set: set only {name} ({old_name} is deprecated)"
        ),
        (Some(value), None) => Ok(Resolved {
            value,
            source: name,
            deprecation: None,
        }),
        (None, Some(ms)) => Ok(Resolved {
            value: Duration::from_millis(ms),
            source: old_name,
            deprecation: Some(format!(
                "{old_name} is deprecated: set {name}={} instead",
                humantime::format_duration(Duration::from_millis(ms))
            )),
        }),
        (None, None) => Ok(Resolved {
            value: default,
            source: name,
            deprecation: None,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn humantime_and_bare_seconds() {
        let ok = [
            ("250ms", Duration::from_millis(250)),
            ("1s", Duration::from_secs(1)),
            ("30s", Duration::from_secs(30)),
            ("2m", Duration::from_secs(120)),
            ("1h 30m", Duration::from_secs(5400)),
            ("1s 500ms", Duration::from_millis(1500)),
            ("75", Duration::from_secs(75)),
            ("0", Duration::ZERO),
            (" 10s ", Duration::from_secs(10)),
        ];
        for (s, want) in ok {
            assert_eq!(parse_duration(s), Ok(want), "{s:?}");
        }
        for bad in ["", "soon", "5 parsecs", "-1s", "s", "99999999999999999999"] {
            let err = parse_duration(bad).expect_err(bad);
            assert!(err.contains(bad.trim()), "{bad:?}: {err}");
        }
    }

    #[test]
    fn the_new_name_the_old_one_or_the_default() {
        let d = Duration::from_millis(200);
        let r = renamed_ms("BACKOFF_MIN", None, "BACKOFF_MIN_MS", None, d).unwrap();
        assert_eq!((r.value, r.source, r.deprecation), (d, "BACKOFF_MIN", None));

        let r = renamed_ms(
            "BACKOFF_MIN",
            Some(Duration::from_secs(1)),
            "BACKOFF_MIN_MS",
            None,
            d,
        )
        .unwrap();
        assert_eq!(
            (r.value, r.source, r.deprecation),
            (Duration::from_secs(1), "BACKOFF_MIN", None)
        );

        let r = renamed_ms("BACKOFF_MIN", None, "BACKOFF_MIN_MS", Some(1500), d).unwrap();
        assert_eq!(
            (r.value, r.source),
            (Duration::from_millis(1500), "BACKOFF_MIN_MS")
        );
        assert_eq!(
            r.deprecation.as_deref(),
            Some("BACKOFF_MIN_MS is deprecated: set BACKOFF_MIN=1s 500ms instead")
        );

        let err = renamed_ms("BACKOFF_MIN", Some(d), "BACKOFF_MIN_MS", Some(200), d)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("BACKOFF_MIN and BACKOFF_MIN_MS are both set"),
            "{err}"
        );
    }
}
