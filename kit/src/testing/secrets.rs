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
