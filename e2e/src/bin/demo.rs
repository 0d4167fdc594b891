//! The demo on a live stack: `cargo run -p e2e --bin demo` (needs `rabbitmqctl`; it stops
//! and starts the local broker's application once).

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    e2e::stack::build_services()?;
    let logs = e2e::demo::run(e2e::stack::Broker::machine()).await?;
    println!("\nfull logs: {}", logs.display());
    Ok(())
}
