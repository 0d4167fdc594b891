use std::process::ExitCode;

use clap::Parser;
use mail_svc::{App, config::Cli};

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    // Before clap, which would call a removed flag merely unknown and never read the variable.
    outbox_kit::config::refuse_removed(mail_svc::config::REMOVED)?;
    let cli = Cli::parse();
    let (grpc_addr, log_format) = (cli.config.grpc_addr, cli.config.log_format);
    outbox_kit::service::main(
        "mail-svc",
        cli.command.as_ref(),
        grpc_addr,
        log_format,
        |shutdown| App::build(cli.config, shutdown),
        App::run,
    )
    .await
}
