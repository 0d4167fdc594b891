//! A queue the broker refuses to take messages for (see [`RefusingQueue`]).

use lapin::{
    Connection, ConnectionProperties,
    options::{QueueBindOptions, QueueDeclareOptions, QueueDeleteOptions},
    types::{AMQPValue, FieldTable},
};

/// A queue that is always full (`x-max-length` 0, `x-overflow: reject-publish`): the broker nacks
/// every publish routed to it, as it does for a queue at its limit. On a connection of its own;
/// the refusal ends with [`RefusingQueue::delete`] (or with the connection: it auto-deletes).
#[derive(Debug)]
pub struct RefusingQueue {
    pub name: String,
    channel: lapin::Channel,
    connection: Connection,
}

impl RefusingQueue {
    /// Declares a queue named `unique(prefix)` on the tests' broker.
    pub async fn declare(prefix: &str) -> Self {
        let connection = Connection::connect(&super::amqp_url(), ConnectionProperties::default())
            .await
            .expect("connect");
        let channel = connection.create_channel().await.expect("channel");
        let name = super::unique(prefix);
        let mut args = FieldTable::default();
        args.insert("x-max-length".into(), AMQPValue::LongInt(0));
        args.insert(
            "x-overflow".into(),
            AMQPValue::LongString("reject-publish".into()),
        );
        let auto_delete = QueueDeclareOptions {
            auto_delete: true,
            ..Default::default()
        };
        channel
            .queue_declare(name.as_str().into(), auto_delete, args)
            .await
            .expect("declare the refusing queue");
        Self {
            name,
            channel,
            connection,
        }
    }

    /// Binds it to `exchange` under `routing_key`: what is routed there is refused from now on.
    pub async fn bind(&self, exchange: &str, routing_key: &str) {
        self.channel
            .queue_bind(
                self.name.as_str().into(),
                exchange.into(),
                routing_key.into(),
                QueueBindOptions::default(),
                FieldTable::default(),
            )
            .await
            .expect("bind");
    }

    /// Deletes the queue (publishes are no longer refused) and closes its connection.
    pub async fn delete(self) {
        self.channel
            .queue_delete(self.name.as_str().into(), QueueDeleteOptions::default())
            .await
            .expect("delete the refusing queue");
        outbox_support::amqp::close(&self.connection, "test done").await;
    }
}
