//! Publishes one order event in the hand-published JSON shape (`{seq, type, aggregate_id, prev_seq, payload}`) to the exchange, as a person would by
//! hand (the broker's management plugin, and so `rabbitmqadmin`, may not be enabled):
//!
//! ```text
//! cargo run -p mail-svc --example publish -- \
//!   '{"seq":1,"type":"OrderCreated","aggregate_id":42,"payload":{"id":42,"status":"pending","customer_email":"taro@example.jp"}}'
//! ```
//!
//! `AMQP_URL` and `AMQP_EXCHANGE` are read like mail-svc reads them; the routing key is
//! `order.created` for `OrderCreated` and `order.status_changed` otherwise.

use anyhow::Context;
use lapin::{
    BasicProperties, Connection, ConnectionProperties,
    options::{BasicPublishOptions, ConfirmSelectOptions},
};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let body = std::env::args()
        .nth(1)
        .context("usage: publish '<event JSON>'")?;
    let value: serde_json::Value = serde_json::from_str(&body).context("the event is not JSON")?;
    let routing_key = match value.get("type").and_then(|t| t.as_str()) {
        Some("OrderCreated") => "order.created",
        _ => "order.status_changed",
    };
    let url = std::env::var("AMQP_URL").unwrap_or_else(|_| outbox_kit::defaults::AMQP_URL.into());
    let exchange =
        std::env::var("AMQP_EXCHANGE").unwrap_or_else(|_| outbox_kit::defaults::EXCHANGE.into());
    let conn = Connection::connect(&url, ConnectionProperties::default())
        .await
        .context("AMQP_URL: cannot connect")?;
    let ch = conn.create_channel().await?;
    ch.confirm_select(ConfirmSelectOptions::default()).await?;
    let mut props = BasicProperties::default()
        .with_content_type("application/json".into())
        .with_delivery_mode(2);
    if let Some(seq) = value.get("seq").and_then(|s| s.as_i64()) {
        props = props.with_message_id(seq.to_string().into());
    }
    let confirm = ch
        .basic_publish(
            exchange.as_str().into(),
            routing_key.into(),
            BasicPublishOptions {
                mandatory: true,
                ..BasicPublishOptions::default()
            },
            body.as_bytes(),
            props,
        )
        .await?
        .await?;
    anyhow::ensure!(confirm.is_ack(), "the broker refused the message");
    anyhow::ensure!(
        confirm.take_message().is_none(),
        "unroutable: is mail-svc's queue bound to {exchange}?"
    );
    println!("published to {exchange} with routing key {routing_key}");
    conn.close(200, "bye".into()).await?;
    Ok(())
}
