//! What wakes a drained relay: a writer's NOTIFY, the fallback poll, the end of the earliest
//! hold, a lost broker connection, or shutdown.

use std::time::Instant;

use sqlx::postgres::{PgListener, PgPoolOptions};

use super::{DB_TIMEOUT, Relay};
use crate::publisher::Publisher;

impl Relay {
    /// A LISTEN connection, or `None` if the database cannot give one now (then the fallback
    /// poll alone wakes the relay, and the next cycle tries again).
    pub(super) async fn listen(&self) -> Option<PgListener> {
        // A pool of one connection of its own (outside `self.pool`, whose connections it would
        // keep forever), which `PgListener` also uses to reconnect.
        let own = PgPoolOptions::new()
            .max_connections(1)
            .max_lifetime(None)
            .idle_timeout(None)
            .connect_lazy_with((*self.pool.connect_options()).clone());
        let connect = async {
            let mut l = PgListener::connect_with(&own).await?;
            l.listen(&self.cfg.table.notify_channel()).await?;
            Ok::<_, sqlx::Error>(l)
        };
        match tokio::time::timeout(DB_TIMEOUT, connect).await {
            Ok(Ok(l)) => Some(l),
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "relay: cannot LISTEN, polling only for now");
                None
            }
            Err(_) => None,
        }
    }

    /// Waits for a notification, the fallback poll, the end of the earliest order hold, or
    /// shutdown.
    pub(super) async fn wait(&self, listener: &mut Option<PgListener>) {
        let mut until = Instant::now() + self.cfg.poll_interval;
        if let Some(hold_end) = self.next_hold_end() {
            until = until.min(hold_end);
        }
        if let Some(figures) = self.figures_due_at() {
            until = until.min(figures);
        }
        let poll = tokio::time::sleep_until(until.into());
        let Some(l) = listener.as_mut() else {
            tokio::select! {
                _ = self.shutdown.cancelled() => {}
                _ = poll => {}
            }
            return;
        };
        tokio::select! {
            _ = self.shutdown.cancelled() => {}
            _ = poll => {}
            received = l.try_recv() => match received {
                // Many commits, one cycle: drop the notifications already queued.
                Ok(Some(_)) => while l.next_buffered().is_some() {},
                // The connection dropped and was re-established: notifications in between are
                // lost, so read now.
                Ok(None) => {}
                Err(e) => {
                    tracing::debug!(error = %e, "relay: LISTEN connection lost");
                    *listener = None;
                }
            },
        }
    }
}

/// Resolves when the connection of `publisher` is lost (never without one).
pub(super) async fn connection_lost(publisher: &Option<Publisher>) {
    match publisher {
        Some(p) => {
            p.lost().await;
        }
        None => std::future::pending().await,
    }
}
