//! A relay run through the library, as a service embeds it: settings for tests, its live
//! figures, and its stop.

use std::{sync::Arc, time::Duration};

use outbox_relay::{Relay, Settings, Snapshot, Status};
use sqlx::PgPool;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::db::Db;

/// Settings for tests of `db`'s outbox, publishing to `exchange` of the machine's broker: short
/// backoff, quick poll and takeover, small batches.
pub fn settings(db: &Db, exchange: &str) -> Settings {
    settings_via(db, &outbox_testkit::amqp_url(), exchange)
}

/// [`settings`] with the broker at `amqp_url` (a proxy of the test's own).
pub fn settings_via(db: &Db, amqp_url: &str, exchange: &str) -> Settings {
    let mut s = Settings::new(amqp_url, exchange);
    s.table = db.outbox.table().clone();
    s.batch_size = 64;
    s.backoff_min = Duration::from_millis(50);
    s.backoff_max = Duration::from_secs(1);
    s.poll_interval = Duration::from_millis(500);
    s.standby_retry = Duration::from_millis(200);
    s.confirm_timeout = Duration::from_secs(5);
    s
}

/// One running relay; stopped when dropped.
pub struct Running {
    pub status: Arc<Status>,
    shutdown: CancellationToken,
    task: Option<JoinHandle<()>>,
}

impl Running {
    /// Runs a relay with `settings` on `pool` (its lock and LISTEN connections use the pool's
    /// connect options).
    pub fn start(settings: Settings, pool: PgPool) -> Self {
        let status = Arc::new(Status::default());
        let shutdown = CancellationToken::new();
        let relay = Relay::new(settings, pool, status.clone(), shutdown.clone());
        Self {
            status,
            shutdown,
            task: Some(tokio::spawn(relay.run())),
        }
    }

    /// The live figures now.
    pub fn snapshot(&self) -> Snapshot {
        self.status.snapshot()
    }

    /// Cancels the shutdown token (as SIGTERM does in a service) and waits until it returned.
    pub async fn stop(&mut self) {
        self.shutdown.cancel();
        if let Some(task) = self.task.take() {
            task.await.expect("relay stops");
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}
