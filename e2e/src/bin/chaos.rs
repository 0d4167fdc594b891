//! The crash-consistency checker: `cargo run --release -p e2e --bin chaos -- --help`.

use clap::Parser;
use e2e::{chaos, stack::StackConfig};

/// Runs the stack (2 relay-svc, 2 mail-svc by default) under concurrent upserts while killing
/// services, restarting the broker and cutting database connections; then checks that every
/// committed event produced exactly one mail, in each order's chain order. Exits 1 on any loss,
/// duplicate, reorder or phantom mail. `--cluster`: on the 3-node RabbitMQ cluster of
/// `deploy/rabbit-cluster.sh`, killing, restarting and partitioning its nodes. `--fleet`: the
/// relays as a fleet over the order databases (`--fleet --shards 20 --relays 3`), killed and
/// frozen while databases are added and drained, with each change's rebalance time.
#[derive(Debug, Parser)]
#[command(name = "chaos", version, about, long_about = None)]
struct Cli {
    #[command(flatten)]
    options: chaos::ChaosOptions,
    /// RUST_LOG for the services (their logs go to files under the printed directory).
    #[arg(long, default_value = "info")]
    service_log: String,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    e2e::stack::build_services()?;
    e2e::stack::use_service_default_pools();
    let mut cfg = StackConfig::new("chaos");
    cfg.rust_log = cli.service_log;
    let report = chaos::run(&cli.options, cfg).await?;
    println!("{report}");
    if !report.is_clean() {
        std::process::exit(1);
    }
    Ok(())
}
