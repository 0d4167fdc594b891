//! Passwords in DATABASE_URL, AMQP_URL and SMTP_URL never reach a log, an error or `--help`:
//! neither from the in-process start-up nor from the real binary, also while it retries.

mod common;

use std::{
    io::Read,
    process::{Command, Stdio},
    time::Duration,
};

use common::{Names, config};
use mail_svc::{App, config::MailerKind};
use tokio_util::sync::CancellationToken;

const PASSWORD: &str = "s3cr3t-Pw0rd";

/// (setting, value) pairs that carry the password and cannot be parsed.
fn bad_settings() -> Vec<(&'static str, String)> {
    vec![
        (
            "DATABASE_URL",
            format!("postgres://app:{PASSWORD}@127.0.0.1:notaport/mail"),
        ),
        (
            "DATABASE_URL",
            format!("postgres://app:{PASSWORD}@[::1/mail"),
        ),
        (
            "AMQP_URL",
            format!("amqp://app:{PASSWORD}@127.0.0.1:notaport/%2f"),
        ),
        ("AMQP_URL", format!("http://app:{PASSWORD}@127.0.0.1/")),
        (
            "SMTP_URL",
            format!("smtp://app:{PASSWORD}@127.0.0.1:notaport"),
        ),
        ("SMTP_URL", format!("ftp://app:{PASSWORD}@127.0.0.1")),
    ]
}

#[tokio::test]
async fn start_up_errors_name_the_setting_and_hide_the_password() {
    let names = Names::new();
    for (setting, value) in bad_settings() {
        let mut cfg = config(&names);
        cfg.mailer = MailerKind::Smtp;
        match setting {
            "DATABASE_URL" => cfg.database_url = value.clone().into(),
            "AMQP_URL" => cfg.amqp_url = value.clone().into(),
            _ => cfg.smtp_url = value.clone().into(),
        }
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
        let out = Command::new(env!("CARGO_BIN_EXE_mail-svc"))
            .env(setting, &value)
            .env("MAILER", "smtp")
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

    // Valid URLs with passwords to servers that are not there: mail-svc runs, waits for its
    // database and logs each retry; none of it shows a password.
    let mut child = Command::new(env!("CARGO_BIN_EXE_mail-svc"))
        .env(
            "DATABASE_URL",
            format!("postgres://app:{PASSWORD}@127.0.0.1:1/mail"),
        )
        .env("AMQP_URL", format!("amqp://app:{PASSWORD}@127.0.0.1:1/%2f"))
        .env("MAILER", "smtp")
        .env("SMTP_URL", format!("smtp://app:{PASSWORD}@127.0.0.1:1"))
        .env("GRPC_ADDR", "127.0.0.1:0")
        .env("METRICS_ADDR", "127.0.0.1:0")
        .env("RUST_LOG", "debug")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    std::thread::sleep(Duration::from_secs(4));
    assert!(
        child.try_wait().expect("status").is_none(),
        "waits for its database instead of exiting"
    );
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
    let retries = all.matches("database unreachable, retrying").count();
    assert!(retries >= 2, "each retry is logged ({retries}): {all}");
    assert!(!all.contains(PASSWORD), "{all}");

    let out = Command::new(env!("CARGO_BIN_EXE_mail-svc"))
        .arg("--help")
        .env("DATABASE_URL", format!("postgres://app:{PASSWORD}@db/mail"))
        .env("AMQP_URL", format!("amqp://app:{PASSWORD}@mq/%2f"))
        .env("SMTP_URL", format!("smtp://app:{PASSWORD}@smtp"))
        .output()
        .expect("runs");
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains("SMTP_URL"), "{help}");
    assert!(!help.contains(PASSWORD), "{help}");
    assert!(help.contains("healthcheck"), "{help}");
}
