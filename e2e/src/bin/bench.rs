//! The benchmarks: `cargo run --release -p e2e --bin bench -- --help`.

use clap::Parser;
use e2e::bench::{self, BenchOptions};

/// Measures every stage of the outbox system next to the raw PostgreSQL and RabbitMQ ceilings on
/// the same machine, in the same run; prints a table and writes JSON.
#[derive(Debug, Parser)]
#[command(name = "bench", version, about, long_about = None)]
struct Cli {
    #[command(flatten)]
    options: BenchOptions,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    e2e::stack::build_services()?;
    e2e::stack::use_service_default_pools();
    let report = bench::run(&cli.options).await?;
    print!("{}", bench::table(&report));
    std::fs::write(&cli.options.json, serde_json::to_string_pretty(&report)?)?;
    eprintln!("bench: results written to {}", cli.options.json.display());
    Ok(())
}
