//! Checks of the settings every service declares the same way, run on each service's own
//! `Config`.

use std::time::Duration;

/// The liveness settings `AMQP_HEARTBEAT` ([`outbox_kit::broker::parse_heartbeat`]) and
/// `DB_STATEMENT_TIMEOUT` ([`outbox_kit::db::parse_statement_timeout`]) of `binary`'s config `C`
/// (`read` gives the two values): defaults 10 s and 30 s, durations accepted, and a value out of
/// range refused with an error that names the flag and the value.
#[track_caller]
pub fn assert_liveness_settings<C: clap::Parser>(
    binary: &str,
    read: impl Fn(&C) -> (Duration, Duration),
) {
    assert_eq!(
        read(&C::parse_from([binary])),
        (Duration::from_secs(10), Duration::from_secs(30)),
        "heartbeat and statement timeout by default"
    );
    let cfg = C::parse_from([
        binary,
        "--amqp-heartbeat",
        "2s",
        "--db-statement-timeout",
        "1m",
    ]);
    assert_eq!(
        read(&cfg),
        (Duration::from_secs(2), Duration::from_secs(60)),
        "heartbeat and statement timeout as given"
    );
    for (flag, bad) in [
        ("--amqp-heartbeat", "0s"),
        ("--amqp-heartbeat", "1500ms"),
        ("--amqp-heartbeat", "11m"),
        ("--db-statement-timeout", "500ms"),
        ("--db-statement-timeout", "2h"),
    ] {
        let Err(err) = C::try_parse_from([binary, flag, bad]) else {
            panic!("{binary} {flag} {bad} is accepted");
        };
        let err = err.to_string();
        assert!(
            err.contains(flag) && err.contains(bad),
            "{flag} {bad}: {err}"
        );
    }
}

/// `binary --help`, run with an empty environment (clap shows a set variable's value), is
/// exactly `fixture`: the settings an operator reads, and their defaults, do not change when the
/// code that declares them does. The failure names the first line that differs.
#[track_caller]
pub fn assert_help_is(binary: &str, fixture: &str) {
    let out = std::process::Command::new(binary)
        .env_clear()
        .arg("--help")
        .output()
        .expect("the binary runs");
    assert!(out.status.success(), "{binary} --help fails: {out:?}");
    let help = String::from_utf8(out.stdout).expect("UTF-8 help");
    if help == fixture {
        return;
    }
    let first = help
        .lines()
        .zip(fixture.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| help.lines().count().min(fixture.lines().count()));
    panic!(
        "{binary} --help differs from its fixture at line {}:\n  now:     {:?}\n  fixture: {:?}\n\
         whole --help:\n{help}",
        first + 1,
        help.lines().nth(first),
        fixture.lines().nth(first),
    );
}
