//! The broker side the tests observe: an exchange of their own and an exclusive queue bound to it.

use lapin::{
    Connection, ConnectionProperties, Consumer,
    options::{BasicConsumeOptions, QueueBindOptions, QueueDeclareOptions},
    types::FieldTable,
};
use outbox_kit::testing;

/// Declares a fresh exchange (`<prefix>_ex`) as the relay does and a queue bound to it under
/// `binding`, before anything is published (an unroutable event would stay in the outbox), and
/// consumes the queue without acks. The queue is exclusive: the broker drops it with the
/// returned connection, whatever the test's end.
pub async fn consume_all(prefix: &str, binding: &str) -> (String, Connection, Consumer) {
    let exchange = testing::unique(&format!("{prefix}_ex"));
    let queue = testing::unique(&format!("{prefix}_q"));
    let conn = Connection::connect(&testing::amqp_url(), ConnectionProperties::default())
        .await
        .expect("broker");
    let channel = conn.create_channel().await.expect("channel");
    outbox_relay::publisher::declare_exchange(&channel, &exchange)
        .await
        .expect("exchange");
    let exclusive = QueueDeclareOptions {
        exclusive: true,
        auto_delete: true,
        ..Default::default()
    };
    channel
        .queue_declare(queue.as_str().into(), exclusive, FieldTable::default())
        .await
        .expect("queue");
    channel
        .queue_bind(
            queue.as_str().into(),
            exchange.as_str().into(),
            binding.into(),
            QueueBindOptions::default(),
            FieldTable::default(),
        )
        .await
        .expect("bind");
    let no_ack = BasicConsumeOptions {
        no_ack: true,
        ..Default::default()
    };
    let deliveries = channel
        .basic_consume(
            queue.as_str().into(),
            "".into(),
            no_ack,
            FieldTable::default(),
        )
        .await
        .expect("consume");
    (exchange, conn, deliveries)
}
