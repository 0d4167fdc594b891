//! Passwords in DATABASE_URL and AMQP_URL never reach a log, an error or `--help`: neither from
//! the in-process start-up nor from the real binary, also while it retries unreachable servers.

use std::{process::Command, time::Duration};

use outbox_testkit::{
    on_free_ports, run_for,
    secrets::{
        PASSWORD, assert_binary_refuses_each, assert_build_refuses, assert_help_hides_password,
        bad_url_settings, unreachable_amqp_url_list,
    },
};
use relay_svc::App;

use crate::common;
const GOOD_DB: &str = "postgres://postgres@127.0.0.1:5432/orders";
const GOOD_AMQP: &str = "amqp://guest:guest@127.0.0.1:5672/%2f";

/// (setting, value) pairs that carry the password and cannot be parsed.
fn bad_settings() -> Vec<(&'static str, String)> {
    bad_url_settings("orders")
}

#[tokio::test]
async fn start_up_errors_name_the_setting_and_hide_the_password() {
    for (setting, value) in bad_settings() {
        let (db, amqp) = match setting {
            "DATABASE_URL" => (value.as_str(), GOOD_AMQP),
            _ => (GOOD_DB, value.as_str()),
        };
        let cfg = common::relay_config(db, amqp, "relay_test_unused");
        assert_build_refuses(cfg, App::build, setting, &value).await;
    }
}

#[test]
fn the_binary_never_prints_the_password() {
    assert_binary_refuses_each(env!("CARGO_BIN_EXE_relay-svc"), &[], bad_settings());

    // Valid URLs with passwords to servers that are not there: the relay runs and retries; its
    // debug log of those retries never shows the passwords.
    let (running, all) = run_for(
        on_free_ports(env!("CARGO_BIN_EXE_relay-svc"))
            .env(
                "DATABASE_URL",
                format!("postgres://app:{PASSWORD}@127.0.0.1:1/orders"),
            )
            .env("AMQP_URL", unreachable_amqp_url_list())
            .env("BACKOFF_MIN", "50ms")
            .env("RUST_LOG", "debug"),
        Duration::from_secs(3),
    );
    assert!(running, "keeps running");
    assert!(all.contains("retry"), "it logged its retries: {all}");
    assert!(!all.contains(PASSWORD), "{all}");

    assert_help_hides_password(
        Command::new(env!("CARGO_BIN_EXE_relay-svc"))
            .env(
                "DATABASE_URL",
                format!("postgres://app:{PASSWORD}@db/orders"),
            )
            .env("AMQP_URL", unreachable_amqp_url_list()),
        "AMQP_URL",
    );
}

#[test]
fn files_with_secrets_are_never_printed() {
    outbox_testkit::secrets::assert_binary_refuses_bad_secret_files(
        env!("CARGO_BIN_EXE_relay-svc"),
        true,
        true,
    );
}
