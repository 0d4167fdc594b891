use std::process::ExitCode;

use clap::Parser;
use mail_svc::{App, config::Cli};
use outbox_kit::health::Command;

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    // Before clap, which would call a removed flag merely unknown and never read the variable.
    outbox_kit::config::refuse_removed(mail_svc::config::REMOVED)?;
    let cli = Cli::parse();
    if let Some(Command::Healthcheck(args)) = &cli.command {
        return Ok(
            outbox_kit::health::healthcheck("mail-svc", cli.config.grpc_addr, &args.tls).await,
        );
    }
    let cfg = cli.config;
    let telemetry = outbox_kit::telemetry::init(cfg.log_format, "mail-svc")?;
    let shutdown = outbox_kit::shutdown::on_signal();
    let app = App::build(cfg, shutdown).await?;
    let run = app.run().await;
    // Also after a failed run: its spans are the ones worth reading.
    telemetry.shutdown().await;
    run?;
    Ok(ExitCode::SUCCESS)
}
