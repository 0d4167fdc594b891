//! A service binary's `main`: its command line ([`Cli`]: the service's settings, or the
//! `healthcheck` subcommand), then the one order of start-up and shutdown every service follows
//! ([`run`]).

use std::{future::Future, process::ExitCode};

use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};
use tokio_util::sync::CancellationToken;

use crate::{health::Command, settings::Profile};

/// A service's command line: its settings `S` (its `Config`: name, version, about and every
/// setting come from its own `#[command]` and `#[arg]` attributes), and the optional
/// `healthcheck` subcommand.
#[derive(Debug, Clone)]
pub struct Cli<S> {
    /// The service's settings.
    pub config: S,
    /// `healthcheck`, or `None`: run the service.
    pub command: Option<Command>,
}

impl<S: Parser> CommandFactory for Cli<S> {
    fn command() -> clap::Command {
        with_about_of(S::command(), Command::augment_subcommands)
    }

    fn command_for_update() -> clap::Command {
        with_about_of(
            S::command_for_update(),
            Command::augment_subcommands_for_update,
        )
    }
}

/// `add` applied to the service's command, keeping the service's own about: the subcommands'
/// derive sets the about of the command it augments to their enum's doc.
fn with_about_of(
    service: clap::Command,
    add: impl FnOnce(clap::Command) -> clap::Command,
) -> clap::Command {
    let about = service.get_about().cloned();
    let long_about = service.get_long_about().cloned();
    let mut cmd = add(service).about(None).long_about(None);
    if let Some(about) = about {
        cmd = cmd.about(about);
    }
    if let Some(long_about) = long_about {
        cmd = cmd.long_about(long_about);
    }
    cmd
}

impl<S: Parser> FromArgMatches for Cli<S> {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        Ok(Self {
            config: S::from_arg_matches(matches)?,
            command: subcommand(matches)?,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        self.config.update_from_arg_matches(matches)?;
        if let Some(command) = subcommand(matches)? {
            self.command = Some(command);
        }
        Ok(())
    }
}

impl<S: Parser> Parser for Cli<S> {}

/// The subcommand of `matches`, if it is one of [`Command`].
fn subcommand(matches: &ArgMatches) -> Result<Option<Command>, clap::Error> {
    match matches.subcommand_name() {
        Some(name) if Command::has_subcommand(name) => Command::from_arg_matches(matches).map(Some),
        _ => Ok(None),
    }
}

/// A service's whole `main`: refuses the settings it removed ([`Profile::REMOVED`]) and reads its
/// command line ([`Cli`]). Then it answers `<binary> healthcheck` by asking the service at the
/// settings' gRPC address; or it runs the service: telemetry in the settings' log format, the app
/// `build` makes of the settings and a token that SIGTERM or ctrl-c cancels, `run` until it
/// returns, then telemetry flushed.
pub async fn run<S, A, B, R>(
    build: impl FnOnce(S, CancellationToken) -> B,
    run: impl FnOnce(A) -> R,
) -> anyhow::Result<ExitCode>
where
    S: Profile + Parser,
    B: Future<Output = anyhow::Result<A>>,
    R: Future<Output = anyhow::Result<()>>,
{
    // Before clap, which would call a removed flag merely unknown and never read the variable.
    crate::config::refuse_removed(S::REMOVED)?;
    let binary = S::command().get_name().to_owned();
    let Cli { config, command } = Cli::<S>::parse();
    if let Some(Command::Healthcheck(args)) = command {
        return Ok(crate::health::healthcheck(&binary, config.server().grpc_addr, &args.tls).await);
    }
    let telemetry = crate::telemetry::init(config.server().log_format, &binary)?;
    let app = build(config, crate::shutdown::on_signal()).await?;
    let ran = run(app).await;
    // Also after a failed run: its spans are the ones worth reading.
    telemetry.shutdown().await;
    ran.map(|()| ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;
    use crate::settings::{Absent, ORDERS_PORTS, Ports, ServerSettings};

    /// A service's settings, as a service declares them.
    #[derive(Debug, Clone, Parser)]
    #[command(name = "demo-svc", version, about = "Demonstrates.")]
    struct Config {
        #[arg(long, default_value = "x")]
        name: String,
        #[command(flatten)]
        server: ServerSettings<Config>,
    }

    impl Profile for Config {
        const PORTS: Ports = ORDERS_PORTS;
        const GRPC_SERVICES: &'static str = "demo.v1.Demo";
        type Liveness = Absent;
        type Admin = Absent;
        fn server(&self) -> &ServerSettings<Self> {
            &self.server
        }
    }

    #[test]
    fn the_cli_is_the_services_settings_plus_healthcheck() {
        let cli = Cli::<Config>::parse_from(["demo-svc", "--name", "y"]);
        assert_eq!(cli.config.name, "y");
        assert!(cli.command.is_none());
        let cli = Cli::<Config>::parse_from(["demo-svc", "--name", "z", "healthcheck"]);
        assert_eq!(cli.config.name, "z");
        assert!(matches!(cli.command, Some(Command::Healthcheck(_))));
        let cmd = Cli::<Config>::command();
        assert_eq!(cmd.get_name(), "demo-svc");
        let help = Cli::<Config>::command().render_help().to_string();
        assert!(
            help.contains("Demonstrates.") && help.contains("healthcheck"),
            "{help}"
        );
        assert!(
            help.contains("--name") && help.contains("--grpc-addr"),
            "{help}"
        );
    }
}
