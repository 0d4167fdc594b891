//! The DATABASE_URL password never reaches a log, an error or `--help`: neither from the
//! in-process start-up nor from the real binary.

use std::process::Command;

use orders_svc::{App, Config};
use outbox_testkit::{
    on_free_ports,
    secrets::{PASSWORD, assert_binary_refuses, assert_build_refuses, assert_help_hides_password},
};

use crate::common;

/// URLs that carry the password and cannot be used: unparsable, or leading to a closed port.
fn bad_urls() -> Vec<String> {
    vec![
        format!("postgres://app:{PASSWORD}@127.0.0.1:notaport/orders"),
        format!("postgres://app:{PASSWORD}@[::1/orders"),
        format!("postgres://app:{PASSWORD}@127.0.0.1:1/orders"),
        format!("postgres://app@127.0.0.1:1/orders?password={PASSWORD}"),
    ]
}

#[tokio::test]
async fn start_up_errors_name_the_setting_and_hide_the_password() {
    for url in bad_urls() {
        let cfg: Config = common::config(url.clone());
        let debug = format!("{cfg:?}");
        assert!(debug.contains("***"), "{debug}");
        assert_build_refuses(cfg, App::build, "DATABASE_URL", &url).await;
    }
}

#[test]
fn the_binary_never_prints_the_password() {
    for url in bad_urls() {
        assert_binary_refuses(
            on_free_ports(env!("CARGO_BIN_EXE_orders-svc"))
                .env("DATABASE_URL", &url)
                .env("RUST_LOG", "debug"),
            "DATABASE_URL",
            &url,
        );
    }
    // `--help` shows which variables are set, never their values.
    assert_help_hides_password(
        Command::new(env!("CARGO_BIN_EXE_orders-svc")).env(
            "DATABASE_URL",
            format!("postgres://app:{PASSWORD}@db/orders"),
        ),
        "DATABASE_URL",
    );
}

#[test]
fn files_with_secrets_are_never_printed() {
    outbox_testkit::secrets::assert_binary_refuses_bad_secret_files(
        env!("CARGO_BIN_EXE_orders-svc"),
        false,
        false,
    );
}
