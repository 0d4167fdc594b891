use std::process::ExitCode;

use clap::Parser;
use orders_svc::{App, config::Cli};

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    let Cli { config, command } = Cli::parse();
    outbox_kit::service::main("orders-svc", command, config, App::build, App::run).await
}
