//! A crash test's hook: stops the relay exactly between the broker's confirms and the outbox
//! delete, the window every relay has, where a crash publishes the batch again. A test sets
//! [`Settings::before_delete`](crate::Settings::before_delete), waits for the seqs on the
//! receiver, kills the relay there, and checks that its consumers take the second copy as a
//! duplicate.

use std::sync::Arc;

use tokio::sync::watch;

/// When set in [`Settings`](crate::Settings), the relay sends the seqs it is about to delete to
/// the receiver, then stops forever instead of deleting them.
#[derive(Debug, Clone)]
pub struct BeforeDelete {
    reached: Arc<watch::Sender<Vec<i64>>>,
}

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
