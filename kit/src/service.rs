//! A service binary's `main` once its flags are parsed: the one order of start-up and shutdown
//! every service follows.

use std::{future::Future, net::SocketAddr, process::ExitCode};

use tokio_util::sync::CancellationToken;

use crate::{health::Command, telemetry::LogFormat};

/// Answers `<binary> healthcheck` (`command`) by asking the service at `grpc_addr`. Otherwise
/// runs the service: telemetry for `binary` in `log_format`, the app made by `build` with a
/// token that SIGTERM or ctrl-c cancels, `run` until it returns, then telemetry flushed.
pub async fn main<A, B, R>(
    binary: &str,
    command: Option<&Command>,
    grpc_addr: SocketAddr,
    log_format: LogFormat,
    build: impl FnOnce(CancellationToken) -> B,
    run: impl FnOnce(A) -> R,
) -> anyhow::Result<ExitCode>
where
    B: Future<Output = anyhow::Result<A>>,
    R: Future<Output = anyhow::Result<()>>,
{
    if let Some(Command::Healthcheck(args)) = command {
        return Ok(crate::health::healthcheck(binary, grpc_addr, &args.tls).await);
    }
    let telemetry = crate::telemetry::init(log_format, binary)?;
    let app = build(crate::shutdown::on_signal()).await?;
    let ran = run(app).await;
    // Also after a failed run: its spans are the ones worth reading.
    telemetry.shutdown().await;
    ran.map(|()| ExitCode::SUCCESS)
}
