//! A service binary's `main` once its flags are parsed: the one order of start-up and shutdown
//! every service follows.

use std::{future::Future, process::ExitCode};

use tokio_util::sync::CancellationToken;

use crate::{
    health::Command,
    settings::{Profile, ServerSettings},
};

/// What [`main`] reads of a service's settings before the app exists: the gRPC address (the one
/// `healthcheck` asks) and the format telemetry writes log lines in, both of its
/// [`ServerSettings`].
pub trait Settings {
    /// The service's [`Profile`].
    type Profile: Profile;
    /// The settings every service has.
    fn server(&self) -> &ServerSettings<Self::Profile>;
}

/// Answers `<binary> healthcheck` (`command`) by asking the service at the settings' gRPC
/// address. Otherwise runs the service: telemetry for `binary` in the settings' log format, the
/// app `build` makes of `settings` and a token that SIGTERM or ctrl-c cancels, `run` until it
/// returns, then telemetry flushed.
pub async fn main<S, A, B, R>(
    binary: &str,
    command: Option<Command>,
    settings: S,
    build: impl FnOnce(S, CancellationToken) -> B,
    run: impl FnOnce(A) -> R,
) -> anyhow::Result<ExitCode>
where
    S: Settings,
    B: Future<Output = anyhow::Result<A>>,
    R: Future<Output = anyhow::Result<()>>,
{
    if let Some(Command::Healthcheck(args)) = command {
        return Ok(
            crate::health::healthcheck(binary, settings.server().grpc_addr, &args.tls).await,
        );
    }
    let telemetry = crate::telemetry::init(settings.server().log_format, binary)?;
    let app = build(settings, crate::shutdown::on_signal()).await?;
    let ran = run(app).await;
    // Also after a failed run: its spans are the ones worth reading.
    telemetry.shutdown().await;
    ran.map(|()| ExitCode::SUCCESS)
}
