use clap::Parser;
use mail_svc::{App, Config};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cfg = Config::parse();
    outbox_kit::telemetry::init(cfg.log_format);
    let shutdown = outbox_kit::shutdown::on_signal();
    let app = App::build(cfg, shutdown).await?;
    app.run().await
}
