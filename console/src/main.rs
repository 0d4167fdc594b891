use clap::Parser;
use outbox_console::{App, config::Config};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cfg = Config::parse();
    let telemetry = outbox_kit::telemetry::init(cfg.log_format, "outbox-console")?;
    let app = App::build(cfg, outbox_kit::shutdown::on_signal()).await?;
    let ran = app.run().await;
    telemetry.shutdown().await;
    ran
}
