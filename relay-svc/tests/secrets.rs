//! Passwords in DATABASE_URL and AMQP_URL never reach a log, an error or `--help`: neither from
//! the in-process start-up nor from the real binary, also while it retries unreachable servers.

mod common;

use std::{
    io::Read,
    process::{Command, Stdio},
    time::Duration,
};

use relay_svc::App;
use tokio_util::sync::CancellationToken;

const PASSWORD: &str = "s3cr3t-Pw0rd";
const GOOD_DB: &str = "postgres://postgres@127.0.0.1:5432/orders";
const GOOD_AMQP: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";

/// (setting, value) pairs that carry the password and cannot be parsed.
fn bad_settings() -> Vec<(&'static str, String)> {
    vec![
        (
            "DATABASE_URL",
            format!("postgres://app:{PASSWORD}@127.0.0.1:notaport/orders"),
        ),
        (
            "DATABASE_URL",
            format!("postgres://app:{PASSWORD}@[::1/orders"),
        ),
        (
            "AMQP_URL",
            format!("amqp://app:{PASSWORD}@127.0.0.1:notaport/%2f"),
        ),
        ("AMQP_URL", format!("http://app:{PASSWORD}@127.0.0.1/")),
    ]
}

#[tokio::test]
async fn start_up_errors_name_the_setting_and_hide_the_password() {
    for (setting, value) in bad_settings() {
        let (db, amqp) = match setting {
            "DATABASE_URL" => (value.as_str(), GOOD_AMQP),
            _ => (GOOD_DB, value.as_str()),
        };
        let cfg = common::relay_config(db, amqp, "relay_test_unused");
        let debug = format!("{cfg:?}");
        assert!(!debug.contains(PASSWORD), "Debug of Config: {debug}");

        let err = App::build(cfg, CancellationToken::new())
            .await
            .expect_err("cannot start");
        for text in [format!("{err:#}"), format!("{err:?}")] {
            assert!(text.contains(setting), "{value}: {text}");
            assert!(!text.contains(PASSWORD), "{value}: {text}");
        }
    }
}

#[test]
fn the_binary_never_prints_the_password() {
    for (setting, value) in bad_settings() {
        let out = Command::new(env!("CARGO_BIN_EXE_relay-svc"))
            .env(setting, &value)
            .env("GRPC_ADDR", "127.0.0.1:0")
            .env("METRICS_ADDR", "127.0.0.1:0")
            .output()
            .expect("runs");
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.status.success(), "{value}: fails");
        assert!(all.contains(setting), "{value}: {all}");
        assert!(!all.contains(PASSWORD), "{value}: {all}");
    }

    // Valid URLs with passwords to servers that are not there: the relay runs and retries; its
    // debug log of those retries never shows the passwords.
    let mut child = Command::new(env!("CARGO_BIN_EXE_relay-svc"))
        .env(
            "DATABASE_URL",
            format!("postgres://app:{PASSWORD}@127.0.0.1:1/orders"),
        )
        .env("AMQP_URL", format!("amqp://app:{PASSWORD}@127.0.0.1:1/%2f"))
        .env("GRPC_ADDR", "127.0.0.1:0")
        .env("METRICS_ADDR", "127.0.0.1:0")
        .env("BACKOFF_MIN", "50ms")
        .env("RUST_LOG", "debug")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    std::thread::sleep(Duration::from_secs(3));
    assert!(child.try_wait().expect("status").is_none(), "keeps running");
    child.kill().expect("kill the child this test started");
    child.wait().expect("reaped");
    let mut all = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut all)
        .unwrap();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut all)
        .unwrap();
    assert!(all.contains("retry"), "it logged its retries: {all}");
    assert!(!all.contains(PASSWORD), "{all}");

    let out = Command::new(env!("CARGO_BIN_EXE_relay-svc"))
        .arg("--help")
        .env(
            "DATABASE_URL",
            format!("postgres://app:{PASSWORD}@db/orders"),
        )
        .env("AMQP_URL", format!("amqp://app:{PASSWORD}@mq/%2f"))
        .output()
        .expect("runs");
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("AMQP_URL"), "{help}");
    assert!(!help.contains(PASSWORD), "{help}");
    assert!(help.contains("healthcheck"), "{help}");
}
