//! BATCH_WINDOW as an operator meets it on the real binary: the deprecated BATCH_WINDOW_MS still
//! works and says once, at start-up, to use BATCH_WINDOW; both set refuses to start, naming both.

use std::{process::Command, time::Duration};

use outbox_kit::testing::{assert_refuses, run_for};

fn mail() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_mail-svc"));
    // A database that is not there: mail-svc waits for it, logging, for as long as it runs.
    cmd.env("DATABASE_URL", "postgres://postgres@127.0.0.1:1/mail")
        .env("AMQP_URL", "amqp://guest:guest@127.0.0.1:1/%2f")
        .env("GRPC_ADDR", "127.0.0.1:0")
        .env("METRICS_ADDR", "127.0.0.1:0")
        .env("RUST_LOG", "info");
    cmd
}

#[test]
fn batch_window_ms_works_and_warns_once() {
    let (running, all) = run_for(mail().env("BATCH_WINDOW_MS", "7"), Duration::from_secs(2));
    assert!(running, "starts with the old setting: {all}");
    let warning = "BATCH_WINDOW_MS is deprecated: set BATCH_WINDOW=7ms instead";
    assert_eq!(all.matches(warning).count(), 1, "{all}");

    let (running, all) = run_for(mail().env("BATCH_WINDOW", "7ms"), Duration::from_secs(2));
    assert!(running, "{all}");
    assert!(!all.contains("deprecated"), "{all}");
}

#[test]
fn both_names_or_garbage_refuse_to_start() {
    assert_refuses(
        mail()
            .env("BATCH_WINDOW", "7ms")
            .env("BATCH_WINDOW_MS", "7"),
        &["BATCH_WINDOW and BATCH_WINDOW_MS are both set"],
    );
    assert_refuses(
        mail().env("BATCH_WINDOW", "a while"),
        &["--batch-window", "a while"],
    );
}
