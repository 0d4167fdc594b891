//! Test hook (hidden): lets a test stop the relay exactly between the broker's confirms and the
//! outbox delete, then abort it there, the crash window every relay has.

use std::sync::Arc;

use tokio::sync::watch;

/// When set in [`Settings`](crate::Settings), the relay publishes the seqs it is about to delete
/// here, then stops forever instead of deleting them.
#[derive(Debug, Clone)]
pub struct BeforeDelete {
    reached: Arc<watch::Sender<Vec<i64>>>,
}

#[cfg_attr(not(feature = "unstable-internals"), allow(dead_code))] // for tests, through the feature
impl BeforeDelete {
    /// A hook and the receiver that sees the confirmed-but-not-deleted seqs.
    pub fn new() -> (Self, watch::Receiver<Vec<i64>>) {
        let (tx, rx) = watch::channel(Vec::new());
        (
            Self {
                reached: Arc::new(tx),
            },
            rx,
        )
    }

    pub(crate) async fn stop(&self, seqs: Vec<i64>) {
        self.reached.send_replace(seqs);
        std::future::pending::<()>().await;
    }
}
