//! Connecting to the broker, with failover across its addresses.

use super::Relay;
use crate::{error::Error, publisher::Publisher};

impl Relay {
    /// Connects to the first broker address that answers, starting after the one last
    /// connected to. On failure the `unsent` rows of the batch in hand count as unreachable.
    pub(super) async fn connect<'p>(
        &mut self,
        publisher: &'p mut Option<Publisher>,
        unsent: usize,
    ) -> Result<&'p mut Publisher, Error> {
        let cfg = &self.cfg;
        let (exchange, timeout, tls, heartbeat) = (
            &cfg.amqp_exchange,
            cfg.confirm_timeout,
            &cfg.amqp_tls,
            cfg.amqp_heartbeat,
        );
        let status = &self.status;
        let connected = self
            .broker
            .connect(|url| {
                let (number, on_change) = status.on_broker_change();
                let connect = Publisher::connect(url, tls, heartbeat, exchange, timeout, on_change);
                async move { connect.await.map(|p| (number, p)) }
            })
            .await;
        match connected {
            Ok(((number, p), _)) => {
                tracing::info!(exchange = %self.cfg.amqp_exchange, "relay: connected to the broker");
                self.status.broker_connection_ok(number);
                Ok(publisher.insert(p))
            }
            Err(e) => {
                self.status.failed("unreachable", unsent);
                let _ = self.refresh_backlog(true).await;
                Err(e)
            }
        }
    }
}
