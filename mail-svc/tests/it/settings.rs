//! BATCH_WINDOW as an operator meets it on the real binary: it takes a duration and starts; the
//! removed BATCH_WINDOW_MS, as a variable or a flag, refuses to start and names BATCH_WINDOW.

use std::{process::Command, time::Duration};

use outbox_testkit::{against_absent_servers, assert_refuses, run_for};

fn mail() -> Command {
    // A database that is not there: mail-svc waits for it, logging, for as long as it runs.
    against_absent_servers(env!("CARGO_BIN_EXE_mail-svc"), "mail")
}

#[test]
fn batch_window_ms_refuses_to_start_naming_batch_window() {
    let out = mail()
        .env("BATCH_WINDOW_MS", "7")
        .output()
        .expect("the binary runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "refuses to start: {stderr}");
    let said = "BATCH_WINDOW_MS was removed: use BATCH_WINDOW, a duration \
                (BATCH_WINDOW_MS=7 is BATCH_WINDOW=7ms)";
    assert!(stderr.contains(said), "says {said:?}: {stderr}");

    // Beside its replacement too, and as a flag.
    assert_refuses(
        mail()
            .env("BATCH_WINDOW", "7ms")
            .env("BATCH_WINDOW_MS", "7"),
        &[said],
    );
    assert_refuses(
        mail().args(["--batch-window-ms", "7"]),
        &[
            "--batch-window-ms was removed: use --batch-window, a duration \
           (--batch-window-ms=7 is --batch-window=7ms)",
        ],
    );
}

#[test]
fn batch_window_takes_a_duration_and_garbage_refuses_to_start() {
    let (running, all) = run_for(mail().env("BATCH_WINDOW", "7ms"), Duration::from_secs(2));
    assert!(running, "{all}");
    assert!(!all.contains("removed"), "{all}");
    assert_refuses(
        mail().env("BATCH_WINDOW", "a while"),
        &["--batch-window", "a while"],
    );
}
