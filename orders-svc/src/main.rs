use std::process::ExitCode;

use orders_svc::App;

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    outbox_kit::service::run(App::build, App::run).await
}
