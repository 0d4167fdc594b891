use std::process::ExitCode;

use clap::Parser;
use relay_svc::{App, config::Cli};

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    // Before clap, which would call a removed flag merely unknown and never read the variable.
    outbox_kit::config::refuse_removed(relay_svc::config::REMOVED)?;
    let Cli { config, command } = Cli::parse();
    outbox_kit::service::main("relay-svc", command, config, App::build, App::run).await
}
