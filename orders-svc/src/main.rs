use std::process::ExitCode;

use clap::Parser;
use orders_svc::{App, config::Cli};

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    let cli = Cli::parse();
    let (grpc_addr, log_format) = (cli.config.grpc_addr, cli.config.log_format);
    outbox_kit::service::main(
        "orders-svc",
        cli.command.as_ref(),
        grpc_addr,
        log_format,
        |shutdown| App::build(cli.config, shutdown),
        App::run,
    )
    .await
}
