//! Passwords in DATABASE_URL, AMQP_URL and SMTP_URL never reach a log, an error or `--help`:
//! neither from the in-process start-up nor from the real binary, also while it retries.

use std::{process::Command, time::Duration};

use mail_svc::{App, config::MailerKind};
use outbox_testkit::{
    on_free_ports, run_for,
    secrets::{
        PASSWORD, assert_binary_refuses_each, assert_build_refuses, assert_help_hides_password,
        bad_url_settings, unreachable_amqp_url_list,
    },
};

use crate::common::{Names, config};

/// (setting, value) pairs that carry the password and cannot be parsed.
fn bad_settings() -> Vec<(&'static str, String)> {
    let mut bad = bad_url_settings("mail");
    bad.extend([
        (
            "SMTP_URL",
            format!("smtp://app:{PASSWORD}@127.0.0.1:notaport"),
        ),
        ("SMTP_URL", format!("ftp://app:{PASSWORD}@127.0.0.1")),
    ]);
    bad
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
        assert_build_refuses(cfg, App::build, setting, &value).await;
    }
}

#[test]
fn the_binary_never_prints_the_password() {
    assert_binary_refuses_each(
        env!("CARGO_BIN_EXE_mail-svc"),
        &[("MAILER", "smtp")],
        bad_settings(),
    );

    // Valid URLs with passwords to servers that are not there: mail-svc runs, waits for its
    // database and logs each retry; none of it shows a password.
    let (running, all) = run_for(
        on_free_ports(env!("CARGO_BIN_EXE_mail-svc"))
            .env(
                "DATABASE_URL",
                format!("postgres://app:{PASSWORD}@127.0.0.1:1/mail"),
            )
            .env("AMQP_URL", format!("amqp://app:{PASSWORD}@127.0.0.1:1/%2f"))
            .env("MAILER", "smtp")
            .env("SMTP_URL", format!("smtp://app:{PASSWORD}@127.0.0.1:1"))
            .env("RUST_LOG", "debug"),
        Duration::from_secs(4),
    );
    assert!(running, "waits for its database instead of exiting");
    let retries = all.matches("database unreachable, retrying").count();
    assert!(retries >= 2, "each retry is logged ({retries}): {all}");
    assert!(!all.contains(PASSWORD), "{all}");

    assert_help_hides_password(
        Command::new(env!("CARGO_BIN_EXE_mail-svc"))
            .env("DATABASE_URL", format!("postgres://app:{PASSWORD}@db/mail"))
            .env("AMQP_URL", unreachable_amqp_url_list())
            .env("SMTP_URL", format!("smtp://app:{PASSWORD}@smtp")),
        "SMTP_URL",
    );
}

/// A list of brokers that are all down, behind a real database: mail-svc logs each address it
/// failed and moves on to the next, then backs off and tries the list again; no line shows a
/// password.
#[tokio::test]
async fn failing_over_between_brokers_never_prints_a_password() {
    let names = Names::new();
    let database_url = config(&names).database_url.expose().to_owned();
    let (running, all) = tokio::task::spawn_blocking(move || {
        run_for(
            on_free_ports(env!("CARGO_BIN_EXE_mail-svc"))
                .env("DATABASE_URL", database_url)
                .env("AMQP_URL", unreachable_amqp_url_list())
                .env("RUST_LOG", "debug"),
            Duration::from_secs(6),
        )
    })
    .await
    .expect("runs");
    assert!(running, "keeps retrying the brokers");
    assert!(
        all.contains("cannot connect to broker 1 of 2; trying the next"),
        "the failed first address is logged: {all}"
    );
    assert!(
        all.contains("cannot connect to broker 2 of 2; none left in this round"),
        "the second address is tried: {all}"
    );
    assert!(all.contains("broker unavailable; retrying"), "{all}");
    assert!(!all.contains(PASSWORD), "{all}");
}

#[test]
fn files_with_secrets_are_never_printed() {
    outbox_testkit::secrets::assert_binary_refuses_bad_secret_files(
        env!("CARGO_BIN_EXE_mail-svc"),
        true,
        true,
    );
}
