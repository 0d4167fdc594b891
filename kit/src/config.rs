//! The one duration format of every setting, each duration's bounds, and the refusal of removed
//! settings.
//!
//! Every duration setting of the services (`BACKOFF_MIN`, `POLL_INTERVAL`, `LEADER_LEASE`,
//! `MAIL_HOLD_ALERT`, …) is parsed by [`parse_duration`] through clap's `value_parser`. A setting
//! with bounds declares them once, beside its field, as `#[arg(…, bounds =
//! Bounds::at_least(…))]` ([`DurationArg::bounds`]): the same declaration checks the value while
//! the command line is read (a value out of bounds stops the service at start-up, naming the
//! setting) and writes the bounds into the setting's `--help`. A removed setting (the millisecond
//! `BACKOFF_MIN_MS`, …: each service lists its own as a table of [`Removed`]) still passed stops
//! the service at start-up, naming its replacement ([`refuse_removed`]).

use std::time::Duration;

use clap::Arg;

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

/// The values a duration setting accepts: a minimum, a maximum, and whether 0 (a setting's
/// "off") is accepted below the minimum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    min: Duration,
    max: Option<Duration>,
    zero: bool,
}

impl Bounds {
    /// `min` or more.
    pub const fn at_least(min: Duration) -> Self {
        Self {
            min,
            max: None,
            zero: false,
        }
    }

    /// At most `max` (0 included).
    pub const fn at_most(max: Duration) -> Self {
        Self {
            min: Duration::ZERO,
            max: Some(max),
            zero: false,
        }
    }

    /// `min` to `max`.
    pub const fn between(min: Duration, max: Duration) -> Self {
        Self {
            min,
            max: Some(max),
            zero: false,
        }
    }

    /// 0 (off), or `min` or more.
    pub const fn zero_or_at_least(min: Duration) -> Self {
        Self {
            min,
            max: None,
            zero: true,
        }
    }

    /// The bounds as `--help` states them, e.g. `At least 50ms.`
    pub fn help(&self) -> String {
        let (min, zero) = (duration_text(self.min), self.zero);
        match self.max.map(duration_text) {
            None if zero => format!("0 or at least {min}."),
            None => format!("At least {min}."),
            Some(max) if self.min.is_zero() => format!("At most {max}."),
            Some(max) => format!("Between {min} and {max}."),
        }
    }

    /// Checks `value`; the error says what the bounds are, in the words of [`Bounds::help`].
    pub fn check(&self, value: Duration) -> Result<Duration, String> {
        let below = value < self.min && !(self.zero && value.is_zero());
        let above = self.max.is_some_and(|max| value > max);
        if below || above {
            let bounds = self.help();
            let bounds = bounds.trim_end_matches('.');
            let mut words = bounds.chars();
            let first = words.next().map(|c| c.to_ascii_lowercase());
            let bounds: String = first.into_iter().chain(words).collect();
            return Err(format!("must be {bounds} (it is {})", duration_text(value)));
        }
        Ok(value)
    }
}

/// [`Bounds`] as a clap attribute: `#[arg(long, env = "POLL_INTERVAL", value_parser =
/// parse_duration, bounds = Bounds::at_least(Duration::from_millis(50)))]` parses the setting
/// with [`parse_duration`] (clap's derive wants a value parser for a `Duration`; `bounds`
/// replaces it with one that checks the bounds too), refuses a value out of bounds (clap's error
/// names the setting's flag and value name, e.g. `--poll-interval <POLL_INTERVAL>`) and appends
/// the bounds to the setting's help, so that they are declared once, beside the field. (clap's derive calls any `name = value` attribute as the
/// method `name` of [`Arg`], after the doc comment's help.)
pub trait DurationArg {
    /// Sets the bounds.
    fn bounds(self, bounds: Bounds) -> Self;
}

impl DurationArg for Arg {
    fn bounds(self, bounds: Bounds) -> Self {
        // clap drops the last period of a one-sentence doc comment: put it back first.
        let with_bounds = |help: Option<&clap::builder::StyledStr>| {
            help.map(|h| {
                let h = h.to_string();
                let h = h.trim_end();
                let stop = if h.ends_with(['.', '!', '?', ')']) {
                    ""
                } else {
                    "."
                };
                format!("{h}{stop} {}", bounds.help())
            })
        };
        let help = with_bounds(self.get_help()).unwrap_or_else(|| bounds.help());
        let long_help = with_bounds(self.get_long_help());
        // clap puts the setting's flag and value name in front of the error.
        let arg = self
            .value_parser(move |s: &str| parse_duration(s).and_then(|d| bounds.check(d)))
            .help(help);
        match long_help {
            Some(long_help) => arg.long_help(long_help),
            None => arg,
        }
    }
}

/// A setting that was removed, and the duration setting that replaced it. Every removed setting
/// so far took milliseconds (`BACKOFF_MIN_MS=50`); its replacement takes a duration
/// (`BACKOFF_MIN=50ms`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Removed {
    /// The removed environment variable, e.g. `BACKOFF_MIN_MS`; its flag is the same name in
    /// kebab case (`--backoff-min-ms`).
    pub name: &'static str,
    /// The setting to use instead, e.g. `BACKOFF_MIN`.
    pub replacement: &'static str,
    /// A value of the replacement for the message when the removed one's value is not a number
    /// of milliseconds, e.g. `200ms`.
    pub example: &'static str,
}

impl Removed {
    /// The setting's flag: `BACKOFF_MIN_MS` → `--backoff-min-ms`.
    fn flag(name: &str) -> String {
        format!("--{}", name.to_ascii_lowercase().replace('_', "-"))
    }

    /// What to say when the removed setting is passed as `how` (`BACKOFF_MIN_MS` or
    /// `--backoff-min-ms`) with `value`.
    fn refusal(&self, how: &str, value: Option<&str>) -> String {
        let (name, replacement) = if how.starts_with("--") {
            (Self::flag(self.name), Self::flag(self.replacement))
        } else {
            (self.name.to_owned(), self.replacement.to_owned())
        };
        let converted = value
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(|ms| humantime::format_duration(Duration::from_millis(ms)).to_string());
        match (value, converted) {
            (Some(v), Some(d)) => format!(
                "{name} was removed: use {replacement}, a duration ({name}={} is {replacement}={d})",
                v.trim()
            ),
            _ => format!(
                "{name} was removed: use {replacement}, a duration (e.g. {replacement}={})",
                self.example
            ),
        }
    }
}

/// Refuses the removed settings `removed` when they are still passed, as an environment variable
/// (`env` looks one up) or as a flag among `args` (the command line without the program name):
/// the error names every one passed and its replacement. A removed setting is never ignored
/// silently: the operator who set it would believe it in force.
///
/// Each service calls it through [`refuse_removed`] first thing in `main`, before clap parses the
/// command line (clap would call a removed flag merely unknown, and never look at the variable).
pub fn check_removed<S: AsRef<std::ffi::OsStr>>(
    removed: &[Removed],
    args: impl IntoIterator<Item = S>,
    env: impl Fn(&str) -> Option<std::ffi::OsString>,
) -> anyhow::Result<()> {
    let args: Vec<String> = args
        .into_iter()
        .map(|a| a.as_ref().to_string_lossy().into_owned())
        .collect();
    let mut refusals = Vec::new();
    for r in removed {
        if let Some(value) = env(r.name) {
            refusals.push(r.refusal(r.name, Some(&value.to_string_lossy())));
        }
        let flag = Removed::flag(r.name);
        for (i, arg) in args.iter().enumerate() {
            if *arg == flag {
                refusals.push(r.refusal(&flag, args.get(i + 1).map(String::as_str)));
            } else if let Some(value) = arg.strip_prefix(&flag).and_then(|v| v.strip_prefix('=')) {
                refusals.push(r.refusal(&flag, Some(value)));
            }
        }
    }
    if refusals.is_empty() {
        Ok(())
    } else {
        anyhow::bail!("{}", refusals.join("\n"))
    }
}

/// [`check_removed`] on this process's command line and environment.
pub fn refuse_removed(removed: &[Removed]) -> anyhow::Result<()> {
    check_removed(removed, std::env::args_os().skip(1), |name| {
        std::env::var_os(name)
    })
}

/// `d` as `--help` shows a default: in its largest whole unit (`7d`, `36h`, `2m`, `10s`,
/// `200ms`; zero is `0s`), which [`parse_duration`] reads back to `d`. A setting's default is the
/// library's constant; its text is made from it, never written beside it.
pub fn duration_text(d: Duration) -> String {
    let ms = d.as_millis();
    if ms == 0 {
        return "0s".to_owned();
    }
    const UNITS: [(u128, &str); 4] = [
        (86_400_000, "d"),
        (3_600_000, "h"),
        (60_000, "m"),
        (1_000, "s"),
    ];
    for (unit, name) in UNITS {
        if ms.is_multiple_of(unit) {
            return format!("{}{name}", ms / unit);
        }
    }
    format!("{ms}ms")
}

/// [`duration_text`] for clap's `default_value`, which keeps a `&'static str`: one short string
/// per command built (once in a service's life) is leaked for it.
pub fn default_duration(d: Duration) -> &'static str {
    Box::leak(duration_text(d).into_boxed_str())
}

/// The help of an optional duration setting whose default the library applies when it is unset:
/// `help` followed by `[default: …]` made from that default.
pub fn help_with_default(help: &str, default: Duration) -> String {
    format!("{help} [default: {}]", duration_text(default))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duration_text_is_the_largest_whole_unit_and_parses_back() {
        let cases = [
            (Duration::ZERO, "0s"),
            (Duration::from_millis(5), "5ms"),
            (Duration::from_millis(200), "200ms"),
            (Duration::from_millis(1_500), "1500ms"),
            (Duration::from_secs(15), "15s"),
            (Duration::from_secs(90), "90s"),
            (Duration::from_secs(120), "2m"),
            (Duration::from_secs(36 * 3600), "36h"),
            (Duration::from_secs(7 * 86_400), "7d"),
            (Duration::from_secs(365 * 86_400), "365d"),
        ];
        for (d, text) in cases {
            assert_eq!(duration_text(d), text, "{d:?}");
            assert_eq!(parse_duration(text), Ok(d), "{text}");
        }
        assert_eq!(
            help_with_default("Longest retry delay.", Duration::from_secs(30)),
            "Longest retry delay. [default: 30s]"
        );
    }

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

    const REMOVED: &[Removed] = &[
        Removed {
            name: "BACKOFF_MIN_MS",
            replacement: "BACKOFF_MIN",
            example: "200ms",
        },
        Removed {
            name: "POLL_INTERVAL_MS",
            replacement: "POLL_INTERVAL",
            example: "1s",
        },
    ];

    fn check(args: &[&str], env: &[(&str, &str)]) -> Result<(), String> {
        check_removed(REMOVED, args, |name| {
            env.iter().find(|(n, _)| *n == name).map(|(_, v)| v.into())
        })
        .map_err(|e| e.to_string())
    }

    #[test]
    fn a_removed_setting_is_refused_naming_its_replacement() {
        let no_env: &[(&str, &str)] = &[];
        // (command line, environment, the refusal)
        type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);
        let refused: [Case; 7] = [
            (
                &[],
                &[("BACKOFF_MIN_MS", "50")],
                "BACKOFF_MIN_MS was removed: use BACKOFF_MIN, a duration \
                 (BACKOFF_MIN_MS=50 is BACKOFF_MIN=50ms)",
            ),
            (
                &[],
                &[("POLL_INTERVAL_MS", "1500")],
                "POLL_INTERVAL_MS was removed: use POLL_INTERVAL, a duration \
                 (POLL_INTERVAL_MS=1500 is POLL_INTERVAL=1s 500ms)",
            ),
            (
                &[],
                &[("BACKOFF_MIN_MS", "")],
                "BACKOFF_MIN_MS was removed: use BACKOFF_MIN, a duration \
                 (e.g. BACKOFF_MIN=200ms)",
            ),
            (
                &["--backoff-min-ms", "50"],
                no_env,
                "--backoff-min-ms was removed: use --backoff-min, a duration \
                 (--backoff-min-ms=50 is --backoff-min=50ms)",
            ),
            (
                &["--grpc-addr=x", "--poll-interval-ms=200"],
                no_env,
                "--poll-interval-ms was removed: use --poll-interval, a duration \
                 (--poll-interval-ms=200 is --poll-interval=200ms)",
            ),
            (
                &["--backoff-min-ms"],
                no_env,
                "--backoff-min-ms was removed: use --backoff-min, a duration \
                 (e.g. --backoff-min=200ms)",
            ),
            (
                &["--backoff-min-ms=soon"],
                no_env,
                "--backoff-min-ms was removed: use --backoff-min, a duration \
                 (e.g. --backoff-min=200ms)",
            ),
        ];
        for (args, env, want) in refused {
            assert_eq!(check(args, env), Err(want.to_owned()), "{args:?} {env:?}");
        }

        // Every one passed is named, not only the first.
        let err = check(&["--backoff-min-ms=1"], &[("POLL_INTERVAL_MS", "2")]).unwrap_err();
        assert_eq!(err.lines().count(), 2, "{err}");
        assert!(err.contains("--backoff-min-ms was removed"), "{err}");
        assert!(err.contains("POLL_INTERVAL_MS was removed"), "{err}");
    }

    #[test]
    fn the_replacements_and_look_alikes_pass() {
        for args in [
            &[][..],
            &["--backoff-min", "50ms", "--poll-interval=1s"],
            // A flag that merely starts like a removed one, and a removed name as a value.
            &["--backoff-min-msx=1"],
            &["--database-url", "BACKOFF_MIN_MS"],
        ] {
            assert_eq!(check(args, &[("BACKOFF_MIN", "50ms")]), Ok(()), "{args:?}");
        }
        // Names are exact: another service's removed setting is none of this one's business.
        assert_eq!(check(&[], &[("BATCH_WINDOW_MS", "5")]), Ok(()));
    }

    #[test]
    fn bounds_check_and_say_themselves() {
        let ms = Duration::from_millis;
        // (bounds, its help, a value inside, a value outside, the refusal)
        let cases = [
            (
                Bounds::at_least(ms(50)),
                "At least 50ms.",
                ms(50),
                ms(49),
                "must be at least 50ms (it is 49ms)",
            ),
            (
                Bounds::at_most(ms(1000)),
                "At most 1s.",
                Duration::ZERO,
                ms(1001),
                "must be at most 1s (it is 1001ms)",
            ),
            (
                Bounds::between(ms(2000), ms(3_600_000)),
                "Between 2s and 1h.",
                ms(2000),
                ms(1999),
                "must be between 2s and 1h (it is 1999ms)",
            ),
            (
                Bounds::zero_or_at_least(ms(1000)),
                "0 or at least 1s.",
                Duration::ZERO,
                ms(999),
                "must be 0 or at least 1s (it is 999ms)",
            ),
        ];
        for (bounds, help, inside, outside, refusal) in cases {
            assert_eq!(bounds.help(), help);
            assert_eq!(bounds.check(inside), Ok(inside), "{help}");
            assert_eq!(bounds.check(outside), Err(refusal.to_owned()), "{help}");
        }
    }

    #[derive(Debug, clap::Parser)]
    struct WithBounds {
        /// How often to poll.
        #[arg(long, env = "TEST_BOUNDED_POLL", default_value = "1s", value_parser = parse_duration,
              bounds = Bounds::at_least(Duration::from_millis(50)))]
        poll: Duration,
    }

    #[test]
    fn a_bounded_setting_refuses_a_value_out_of_bounds_naming_itself_and_its_help_says_so() {
        use clap::{CommandFactory, Parser};
        let parsed = WithBounds::try_parse_from(["x", "--poll", "50ms"]).expect("at the bound");
        assert_eq!(parsed.poll, Duration::from_millis(50));
        let err = WithBounds::try_parse_from(["x", "--poll", "10ms"])
            .expect_err("below")
            .to_string();
        assert!(
            err.contains("--poll <POLL>") && err.contains("must be at least 50ms (it is 10ms)"),
            "{err}"
        );
        let err = WithBounds::try_parse_from(["x", "--poll", "soon"])
            .expect_err("garbage")
            .to_string();
        assert!(err.contains("is not a duration"), "{err}");
        let help = WithBounds::command().render_help().to_string();
        assert!(help.contains("How often to poll. At least 50ms."), "{help}");
    }
}
