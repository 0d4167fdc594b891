use std::process::ExitCode;

use clap::Parser;
use outboxctl::Cli;

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    outboxctl::run(cli).await
}
