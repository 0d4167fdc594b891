//! What the services' secrets tests share: the password they plant in URLs, and the checks that it
//! never reaches an error, the binary's output or `--help`.

use std::process::Command;

use tokio_util::sync::CancellationToken;

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

/// `config`'s Debug hides [`PASSWORD`], and `build` (a service's `App::build`) refuses it with an
/// error that names `setting` and hides the password too; `value` is the bad value.
pub async fn assert_build_refuses<C, A, F>(
    config: C,
    build: impl FnOnce(C, CancellationToken) -> F,
    setting: &str,
    value: &str,
) where
    C: std::fmt::Debug,
    F: Future<Output = anyhow::Result<A>>,
{
    let debug = format!("{config:?}");
    assert!(!debug.contains(PASSWORD), "Debug of Config: {debug}");
    let Err(err) = build(config, CancellationToken::new()).await else {
        panic!("{value}: cannot start");
    };
    assert_error_names_setting(&err, setting, value);
}

/// The binary, run with `setting` bad, fails, names `setting` and never prints [`PASSWORD`].
pub fn assert_binary_refuses(command: &mut Command, setting: &str, value: &str) {
    let (ok, all) = run_to_end(command);
    assert!(!ok, "{value}: fails");
    assert!(all.contains(setting), "{value}: {all}");
    assert!(!all.contains(PASSWORD), "{value}: {all}");
}

/// The binary at `binary` (on free ports, with `env` beside), run with each of `bad` (setting,
/// value) in turn, refuses as [`assert_binary_refuses`] says.
pub fn assert_binary_refuses_each(
    binary: &str,
    env: &[(&str, &str)],
    bad: Vec<(&'static str, String)>,
) {
    for (setting, value) in bad {
        let mut command = super::on_free_ports(binary);
        command.env(setting, &value).envs(env.iter().copied());
        assert_binary_refuses(&mut command, setting, &value);
    }
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

/// `DATABASE_URL` (of database `database`) and `AMQP_URL` values that carry [`PASSWORD`] and
/// cannot be parsed or used (a bad port, a broken host, a wrong scheme, the lists of
/// [`bad_amqp_url_lists`]), each with its setting.
pub fn bad_url_settings(database: &str) -> Vec<(&'static str, String)> {
    let mut bad = vec![
        (
            "DATABASE_URL",
            format!("postgres://app:{PASSWORD}@127.0.0.1:notaport/{database}"),
        ),
        (
            "DATABASE_URL",
            format!("postgres://app:{PASSWORD}@[::1/{database}"),
        ),
        (
            "AMQP_URL",
            format!("amqp://app:{PASSWORD}@127.0.0.1:notaport/%2f"),
        ),
        ("AMQP_URL", format!("http://app:{PASSWORD}@127.0.0.1/")),
    ];
    bad.extend(
        bad_amqp_url_lists()
            .into_iter()
            .map(|url| ("AMQP_URL", url)),
    );
    bad
}

/// An `AMQP_URL` list of two brokers that are not there (ports 1 and 2), both with
/// [`PASSWORD`]: a service given it logs each failed address and its retries, never the password.
pub fn unreachable_amqp_url_list() -> String {
    format!("amqp://app:{PASSWORD}@127.0.0.1:1/%2f,amqp://app:{PASSWORD}@127.0.0.1:2/%2f")
}

/// Settings whose file holds a secret, each with an environment that makes start-up read a
/// file that holds [`PASSWORD`] but is not what the setting needs (a token line with a third
/// field, a "private key" that is not PEM). The binary must refuse, name the setting, and never
/// print the file's content. `amqp` and `admin` say whether the binary has those settings.
pub fn bad_secret_files(
    pki: &super::pki::TestPki,
    amqp: bool,
    admin: bool,
) -> Vec<(&'static str, Vec<(&'static str, String)>)> {
    let dir = pki.dir();
    let server = pki.server("secrets-server");
    let tokens = dir.join("tokens-with-a-secret");
    std::fs::write(&tokens, format!("# ops\nops {PASSWORD}-0123456789 extra\n")).expect("writes");
    let key = dir.join("key-with-a-secret");
    std::fs::write(&key, format!("{PASSWORD}\n")).expect("writes");
    let path = |p: &std::path::Path| p.display().to_string();
    let mut cases = vec![
        (
            "AUTH_TOKENS_FILE",
            vec![("AUTH_TOKENS_FILE", path(&tokens))],
        ),
        (
            "TLS_KEY_FILE",
            vec![
                ("TLS_CERT_FILE", path(&server.cert)),
                ("TLS_KEY_FILE", path(&key)),
            ],
        ),
    ];
    if admin {
        cases.push((
            "ADMIN_TOKENS_FILE",
            vec![("ADMIN_TOKENS_FILE", path(&tokens))],
        ));
    }
    if amqp {
        cases.push((
            "AMQP_CLIENT_KEY_FILE",
            vec![
                (
                    "AMQP_URL",
                    format!("amqps://app:{PASSWORD}@127.0.0.1:1/%2f"),
                ),
                ("AMQP_CLIENT_CERT_FILE", path(&server.cert)),
                ("AMQP_CLIENT_KEY_FILE", path(&key)),
            ],
        ));
        cases.push((
            "AMQP_CA_FILE",
            vec![
                ("AMQP_URL", format!("amqp://app:{PASSWORD}@127.0.0.1:1/%2f")),
                ("AMQP_CA_FILE", path(&pki.ca_file())),
            ],
        ));
    }
    cases
}

/// The binary, run with each of [`bad_secret_files`], refuses, names the setting and never
/// prints [`PASSWORD`]; `--help` documents each setting.
pub fn assert_binary_refuses_bad_secret_files(binary: &str, amqp: bool, admin: bool) {
    let pki = super::pki::TestPki::new("secrets");
    for (setting, env) in bad_secret_files(&pki, amqp, admin) {
        let mut command = super::on_free_ports(binary);
        command
            .env(
                "DATABASE_URL",
                format!("postgres://app:{PASSWORD}@127.0.0.1:1/x"),
            )
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())));
        assert_binary_refuses(&mut command, setting, &format!("{env:?}"));
        let out = Command::new(binary).arg("--help").output().expect("runs");
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(help.contains(setting), "--help documents {setting}: {help}");
    }
}
