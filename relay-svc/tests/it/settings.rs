//! The duration settings as an operator meets them on the real binary: a deprecated `*_MS`
//! setting still works and says once, at start-up, which setting replaces it; setting both the
//! old and the new name refuses to start, naming both.

use std::{process::Command, time::Duration};

use outbox_kit::testing::{assert_refuses, run_for};

fn relay() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_relay-svc"));
    // Servers that are not there: the relay keeps retrying, so it logs for as long as it runs.
    cmd.env("DATABASE_URL", "postgres://postgres@127.0.0.1:1/orders")
        .env("AMQP_URL", "amqp://guest:guest@127.0.0.1:1/%2f")
        .env("GRPC_ADDR", "127.0.0.1:0")
        .env("METRICS_ADDR", "127.0.0.1:0")
        .env("RUST_LOG", "info");
    cmd
}

#[test]
fn a_deprecated_ms_setting_works_and_warns_once() {
    let (running, all) = run_for(
        relay()
            .env("BACKOFF_MIN_MS", "50")
            .env("POLL_INTERVAL_MS", "1500"),
        Duration::from_secs(3),
    );
    assert!(running, "starts with the old settings: {all}");
    for warning in [
        "BACKOFF_MIN_MS is deprecated: set BACKOFF_MIN=50ms instead",
        "POLL_INTERVAL_MS is deprecated: set POLL_INTERVAL=1s 500ms instead",
    ] {
        assert_eq!(all.matches(warning).count(), 1, "{warning}: {all}");
    }
}

#[test]
fn the_new_settings_take_durations_and_do_not_warn() {
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
    assert!(!all.contains("deprecated"), "{all}");
}

#[test]
fn old_and_new_name_together_or_garbage_refuse_to_start() {
    assert_refuses(
        relay()
            .env("CONFIRM_TIMEOUT", "5s")
            .env("CONFIRM_TIMEOUT_MS", "5000"),
        &["CONFIRM_TIMEOUT and CONFIRM_TIMEOUT_MS are both set"],
    );
    assert_refuses(
        relay().env("STANDBY_RETRY", "often"),
        &["--standby-retry", "often"],
    );
}
