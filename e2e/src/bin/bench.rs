//! The benchmarks: `cargo run --release -p e2e --bin bench -- --help`.

use clap::Parser;
use e2e::bench::{self, Baseline, BenchOptions, compare::CompareOptions};

/// Measures every stage of the outbox system next to the raw PostgreSQL and RabbitMQ ceilings on
/// the same machine, in the same run; prints a table, compares its key figures with the last
/// recorded revision's and writes JSON.
#[derive(Debug, Parser)]
#[command(name = "bench", version, about, long_about = None)]
struct Cli {
    #[command(flatten)]
    options: BenchOptions,
    #[command(flatten)]
    compare: CompareOptions,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let last = match cli.compare.no_baseline {
        true => None,
        false => Baseline::read(&cli.compare.baseline)?,
    };
    e2e::stack::build_services()?;
    e2e::stack::use_service_default_pools();
    let mut report = bench::run(&cli.options).await?;
    let this = Baseline::of(&report, bench::compare::measured_args(std::env::args()));
    match &last {
        Some(last) => report.comparison = Some(bench::compare(last, &this)),
        None if !cli.compare.no_baseline => eprintln!(
            "bench: no baseline at {} to compare with (`--record` keeps this run's figures there)",
            cli.compare.baseline.display()
        ),
        None => {}
    }
    print!("{}", bench::table(&report));
    std::fs::write(&cli.options.json, serde_json::to_string_pretty(&report)?)?;
    eprintln!("bench: results written to {}", cli.options.json.display());
    if cli.compare.record {
        this.write(&cli.compare.baseline)?;
        eprintln!(
            "bench: this run's key figures recorded as the baseline in {}",
            cli.compare.baseline.display()
        );
    }
    Ok(())
}
