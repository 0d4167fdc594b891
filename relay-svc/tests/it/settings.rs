//! The duration settings as an operator meets them on the real binary: the new settings take
//! durations and start; a removed `*_MS` setting, as a variable or a flag, refuses to start and
//! names the setting that replaced it.

use std::{process::Command, time::Duration};

use outbox_testkit::{against_absent_servers, assert_refuses, run_for};

fn relay() -> Command {
    // The relay keeps retrying, so it logs for as long as it runs.
    against_absent_servers(env!("CARGO_BIN_EXE_relay-svc"), "orders")
}

#[test]
fn a_removed_ms_setting_refuses_to_start_naming_its_replacement() {
    let out = relay()
        .env("BACKOFF_MIN_MS", "50")
        .env("POLL_INTERVAL_MS", "1500")
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "refuses to start: {stderr}");
    for said in [
        "BACKOFF_MIN_MS was removed: use BACKOFF_MIN, a duration (BACKOFF_MIN_MS=50 is BACKOFF_MIN=50ms)",
        "POLL_INTERVAL_MS was removed: use POLL_INTERVAL, a duration \
         (POLL_INTERVAL_MS=1500 is POLL_INTERVAL=1s 500ms)",
    ] {
        assert!(stderr.contains(said), "says {said:?}: {stderr}");
    }
    // Refused before anything starts: no listener, no connection attempt.
    assert!(!stderr.contains("listening"), "{stderr}");

    for (old, new) in [
        ("BACKOFF_MAX_MS", "BACKOFF_MAX"),
        ("STANDBY_RETRY_MS", "STANDBY_RETRY"),
        ("CONFIRM_TIMEOUT_MS", "CONFIRM_TIMEOUT"),
    ] {
        // Also beside its replacement: the old value is not quietly dropped either.
        assert_refuses(
            relay().env(new, "2s").env(old, "2000"),
            &[&format!(
                "{old} was removed: use {new}, a duration ({old}=2000 is {new}=2s)"
            )],
        );
    }
    assert_refuses(
        relay().arg("--confirm-timeout-ms=5000"),
        &[
            "--confirm-timeout-ms was removed: use --confirm-timeout, a duration \
           (--confirm-timeout-ms=5000 is --confirm-timeout=5s)",
        ],
    );
}

#[test]
fn the_new_settings_take_durations_and_start() {
    let (running, all) = run_for(
        relay()
            .env("BACKOFF_MIN", "50ms")
            .env("BACKOFF_MAX", "2s")
            .env("POLL_INTERVAL", "1s")
            .env("STANDBY_RETRY", "500ms")
            .env("CONFIRM_TIMEOUT", "15s"),
        Duration::from_secs(2),
    );
    assert!(running, "{all}");
    assert!(all.contains("relay-svc listening"), "{all}");
    assert!(!all.contains("removed"), "{all}");
}

#[test]
fn a_bad_duration_refuses_to_start() {
    assert_refuses(
        relay().env("STANDBY_RETRY", "often"),
        &["--standby-retry", "often"],
    );
    assert_refuses(
        relay().env("POLL_INTERVAL", "10ms"),
        &["'--poll-interval <POLL_INTERVAL>': must be at least 50ms"],
    );
}
