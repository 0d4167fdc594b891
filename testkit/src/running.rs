//! A service running in-process: what every test that starts one (`App::build`, then
//! `tokio::spawn(app.run())`) keeps of it, and the one way to stop it.

use std::{net::SocketAddr, time::Duration};

use tokio_util::sync::CancellationToken;

/// How long a stop may take before the test names it a failure.
pub const STOP_PATIENCE: Duration = Duration::from_secs(60);

/// One running service: its gRPC address, and how to stop it. Dropping it starts its shutdown
/// (a test that failed midway leaves no service using the names its guard removes).
#[derive(Debug)]
pub struct Running {
    pub grpc_addr: SocketAddr,
    pub shutdown: CancellationToken,
    task: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Running {
    /// Spawns `run` (an app's `run()`, which ends once `shutdown` is cancelled).
    pub fn spawn(
        grpc_addr: SocketAddr,
        shutdown: CancellationToken,
        run: impl Future<Output = anyhow::Result<()>> + Send + 'static,
    ) -> Self {
        Self {
            grpc_addr,
            shutdown,
            task: tokio::spawn(run),
        }
    }

    /// Stops it and waits for it, keeping the value (stopping it again does nothing).
    pub async fn stop_in_place(&mut self) {
        self.shutdown.cancel();
        if !self.task.is_finished() {
            let _ = tokio::time::timeout(STOP_PATIENCE, &mut self.task).await;
        }
    }

    /// Stops it; what its `run` returned (once: it is gone after). A service that does not stop
    /// within [`STOP_PATIENCE`] fails the test, naming the wait.
    pub async fn stop(&mut self) -> anyhow::Result<()> {
        self.shutdown.cancel();
        tokio::time::timeout(STOP_PATIENCE, &mut self.task)
            .await
            .expect("the service stops within STOP_PATIENCE (60 s) of its shutdown")
            .expect("the service's task joins")
    }

    /// Whether its `run` has returned.
    pub fn is_finished(&self) -> bool {
        self.task.is_finished()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}
