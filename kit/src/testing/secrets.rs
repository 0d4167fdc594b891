//! What the services' secrets tests share: the password they plant in URLs, and the checks that it
//! never reaches an error, the binary's output or `--help`.

use std::process::Command;

use super::run_to_end;

/// The password the secrets tests put in DATABASE_URL, AMQP_URL and SMTP_URL.
pub const PASSWORD: &str = "s3cr3t-Pw0rd";

/// A start-up error (both as shown, `{:#}`, and as debugged) names `setting` and hides
/// [`PASSWORD`]; `value` is the bad value, for the failure message.
pub fn assert_error_names_setting(err: &anyhow::Error, setting: &str, value: &str) {
    for text in [format!("{err:#}"), format!("{err:?}")] {
        assert!(text.contains(setting), "{value}: {text}");
        assert!(!text.contains(PASSWORD), "{value}: {text}");
    }
}

/// The binary, run with `setting` bad, fails, names `setting` and never prints [`PASSWORD`].
pub fn assert_binary_refuses(command: &mut Command, setting: &str, value: &str) {
    let (ok, all) = run_to_end(command);
    assert!(!ok, "{value}: fails");
    assert!(all.contains(setting), "{value}: {all}");
    assert!(!all.contains(PASSWORD), "{value}: {all}");
}

/// `--help` (the command is given the `--help` argument here) lists `setting` and the
/// `healthcheck` subcommand, and shows which variables are set, never their values.
pub fn assert_help_hides_password(command: &mut Command, setting: &str) {
    let out = command.arg("--help").output().expect("runs");
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(help.contains(setting), "{help}");
    assert!(!help.contains(PASSWORD), "{help}");
    assert!(help.contains("healthcheck"), "{help}");
}

/// `AMQP_URL` lists of several addresses, every one carrying [`PASSWORD`], one entry of each
/// unusable (a bad port, a wrong scheme, an empty entry): the error must name `AMQP_URL` and hide
/// the password of every address, not only the first.
pub fn bad_amqp_url_lists() -> Vec<String> {
    vec![
        format!(
            "amqp://app:{PASSWORD}@127.0.0.1:5691/%2f,amqp://app:{PASSWORD}@127.0.0.1:notaport/%2f"
        ),
        format!("amqp://app:{PASSWORD}@127.0.0.1:5691/%2f,http://app:{PASSWORD}@127.0.0.1/"),
        format!(
            "amqp://app:{PASSWORD}@127.0.0.1:5691/%2f,,amqp://app:{PASSWORD}@127.0.0.1:5693/%2f"
        ),
    ]
}

/// An `AMQP_URL` list of two brokers that are not there (ports 1 and 2), both with
/// [`PASSWORD`]: a service given it logs each failed address and its retries, never the password.
pub fn unreachable_amqp_url_list() -> String {
    format!("amqp://app:{PASSWORD}@127.0.0.1:1/%2f,amqp://app:{PASSWORD}@127.0.0.1:2/%2f")
}
