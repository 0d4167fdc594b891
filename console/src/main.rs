use std::process::ExitCode;

use clap::Parser;
use outbox_console::{App, config::Config};

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    // `outbox-console healthcheck`: the same settings, a probe of the running console instead.
    let mut args: Vec<String> = std::env::args().collect();
    let probe = args.get(1).is_some_and(|a| a == "healthcheck");
    if probe {
        args.remove(1);
    }
    let cfg = Config::parse_from(args);
    if probe {
        return Ok(outbox_console::probe::healthcheck(&cfg).await);
    }
    let telemetry = outbox_kit::telemetry::init(cfg.log_format, "outbox-console")?;
    let app = App::build(cfg, outbox_kit::shutdown::on_signal()).await?;
    let ran = app.run().await;
    telemetry.shutdown().await;
    ran.map(|()| ExitCode::SUCCESS)
}
