//! Who may publish: the stack with the broker users of deploy/rabbitmq/definitions.json (same
//! permission rules, test-unique names, in a vhost of the test's own). relay-svc publishes as its
//! user, mail-svc consumes as its own, and the broker refuses what each may not do: the mail user
//! cannot publish events, the relay user cannot claim another user's `user_id`, and an event that
//! a trusted-looking account forges without the relay's `user_id` is dead-lettered by mail-svc
//! (TRUSTED_PUBLISHERS) instead of moving the order's watermark.

use std::{process::Command, time::Duration};

use e2e::stack::{Stack, StackConfig};
use futures::StreamExt;
use lapin::{
    BasicProperties, Connection, ConnectionProperties,
    options::{BasicConsumeOptions, BasicPublishOptions},
    types::{AMQPValue, FieldTable, ShortString},
};
use outbox_proto::orders::v1::OrderStatus;

fn rabbitmqctl(args: &[&str]) {
    let out = Command::new("rabbitmqctl")
        .arg("-q")
        .args(args)
        .output()
        .expect("rabbitmqctl runs");
    assert!(out.status.success(), "rabbitmqctl {args:?}: {out:?}");
}

/// The permissions of one user in deploy/rabbitmq/definitions.json: configure, write, read.
fn permissions_of(user: &str) -> [String; 3] {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/rabbitmq/definitions.json"
    ))
    .expect("definitions.json");
    let definitions: serde_json::Value = serde_json::from_str(&text).expect("parses");
    let p = definitions["permissions"]
        .as_array()
        .expect("permissions")
        .iter()
        .find(|p| p["user"] == user)
        .unwrap_or_else(|| panic!("{user} in definitions.json"));
    ["configure", "write", "read"].map(|k| p[k].as_str().expect("regex").to_owned())
}

/// A vhost with the stack's users, removed on drop (also when the test fails).
struct Broker {
    vhost: String,
    relay: String,
    mail: String,
}

impl Broker {
    fn create() -> Self {
        let vhost = outbox_testkit::unique("e2e_test_vhost");
        let relay = outbox_testkit::unique("e2e_relay");
        let mail = outbox_testkit::unique("e2e_mail");
        rabbitmqctl(&["add_vhost", &vhost]);
        for (user, template) in [(&relay, "relay"), (&mail, "mail")] {
            rabbitmqctl(&["add_user", user, user]);
            let [configure, write, read] = permissions_of(template);
            rabbitmqctl(&[
                "set_permissions",
                "-p",
                &vhost,
                user,
                &configure,
                &write,
                &read,
            ]);
        }
        // The test itself plays the operator who can do anything in the vhost.
        let (operator, _) = operator();
        rabbitmqctl(&["set_permissions", "-p", &vhost, &operator, ".*", ".*", ".*"]);
        Self { vhost, relay, mail }
    }

    /// A URL for `user` on the test broker (`TEST_AMQP_URL`'s host and port) in this vhost.
    fn url(&self, user: &str, password: &str) -> String {
        let (_, host) = operator();
        format!("amqp://{user}:{password}@{host}/{}", self.vhost)
    }

    /// The test's own account (`TEST_AMQP_URL`), which may do anything, in this vhost.
    fn operator_url(&self) -> String {
        let server = outbox_testkit::amqp_url();
        let (base, _) = server.rsplit_once('/').expect("TEST_AMQP_URL has a vhost");
        format!("{base}/{}", self.vhost)
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        for args in [
            vec!["delete_vhost", self.vhost.as_str()],
            vec!["delete_user", self.relay.as_str()],
            vec!["delete_user", self.mail.as_str()],
        ] {
            Command::new("rabbitmqctl")
                .arg("-q")
                .args(&args)
                .output()
                .ok();
        }
    }
}

/// The user and the `host:port` of `TEST_AMQP_URL`.
fn operator() -> (String, String) {
    let server = outbox_testkit::amqp_url();
    let authority = server
        .split("://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .expect("TEST_AMQP_URL has a host");
    let (userinfo, host) = authority.rsplit_once('@').unwrap_or(("guest", authority));
    let user = userinfo.split(':').next().unwrap_or("guest");
    (user.to_owned(), host.to_owned())
}

const EXCHANGE: &str = "orders.events";
const QUEUE: &str = "mail-svc.order-events";

async fn upsert(stack: &Stack, id: i64, status: OrderStatus) -> u64 {
    stack.upsert(id, status).await.expect("upsert")
}

async fn sent_seqs(stack: &Stack, order_id: i64, n: usize) -> Vec<u64> {
    let mails = stack.mails_for(order_id, n).await.expect("list mails");
    mails.iter().map(|m| m.seq).collect()
}

/// Publishes `body` as the given connection's user, with confirms; the broker's verdict.
async fn publish(
    url: &str,
    exchange: &str,
    user_id: Option<&str>,
    body: &[u8],
) -> Result<(), String> {
    let conn = Connection::connect(url, ConnectionProperties::default())
        .await
        .map_err(|e| e.to_string())?;
    let ch = conn.create_channel().await.map_err(|e| e.to_string())?;
    ch.confirm_select(Default::default())
        .await
        .map_err(|e| e.to_string())?;
    let mut props = BasicProperties::default()
        .with_content_type("application/json".into())
        .with_delivery_mode(2);
    if let Some(user) = user_id {
        props = props.with_user_id(user.into());
    }
    let confirm = ch
        .basic_publish(
            exchange.into(),
            "order.created".into(),
            BasicPublishOptions::default(),
            body,
            props,
        )
        .await
        .map_err(|e| e.to_string())?
        .await
        .map_err(|e| e.to_string())?;
    // A refused publish closes the channel; make sure the broker had its say.
    ch.basic_qos(1, Default::default())
        .await
        .map_err(|e| e.to_string())?;
    if confirm.is_nack() {
        return Err("nacked".into());
    }
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_service_publishes_and_consumes_only_as_its_own_user() {
    let broker = Broker::create();
    let mut cfg = StackConfig::new("e2e");
    cfg.relay_env = vec![
        ("AMQP_URL".into(), broker.url(&broker.relay, &broker.relay)),
        ("AMQP_EXCHANGE".into(), EXCHANGE.into()),
    ];
    cfg.mail_env = vec![
        ("AMQP_URL".into(), broker.url(&broker.mail, &broker.mail)),
        ("AMQP_EXCHANGE".into(), EXCHANGE.into()),
        ("MAIL_QUEUE".into(), QUEUE.into()),
        ("TRUSTED_PUBLISHERS".into(), broker.relay.clone()),
    ];
    let mut stack = Stack::start(cfg).await.expect("stack starts");

    // The real path works with least privilege, and the relay's messages carry its user.
    let first = upsert(&stack, 7, OrderStatus::Pending).await;
    assert_eq!(sent_seqs(&stack, 7, 1).await, [first]);

    // The broker refuses what the users may not do.
    let forged = format!(
        r#"{{"seq":{},"type":"OrderStatusChanged","aggregate_id":7,"prev_seq":{first},"payload":{{"id":7,"status":"shipped","customer_email":"customer7@example.com"}}}}"#,
        1u64 << 62
    );
    let by_mail = publish(
        &broker.url(&broker.mail, &broker.mail),
        EXCHANGE,
        None,
        forged.as_bytes(),
    )
    .await;
    assert!(
        by_mail
            .as_ref()
            .is_err_and(|e| e.contains("ACCESS_REFUSED")),
        "the mail user cannot publish events: {by_mail:?}"
    );
    let impersonating = publish(
        &broker.url(&broker.relay, &broker.relay),
        EXCHANGE,
        Some(&broker.mail),
        forged.as_bytes(),
    )
    .await;
    assert!(
        impersonating.is_err(),
        "RabbitMQ refuses a user_id that is not the connection's user: {impersonating:?}"
    );

    // An account that may publish (here the operator's) but is not the relay: dead-lettered with
    // the reason, and the order's watermark stays where the real chain left it.
    let guest = broker.operator_url();
    publish(&guest, EXCHANGE, Some(&operator().0), forged.as_bytes())
        .await
        .expect("guest may publish");
    let conn = Connection::connect(&guest, ConnectionProperties::default())
        .await
        .expect("connect");
    let ch = conn.create_channel().await.expect("channel");
    let mut dead = ch
        .basic_consume(
            format!("{QUEUE}.dead-letter").as_str().into(),
            "e2e".into(),
            BasicConsumeOptions::default(),
            FieldTable::default(),
        )
        .await
        .expect("consume the dead letters");
    let delivery = tokio::time::timeout(Duration::from_secs(30), dead.next())
        .await
        .expect("the forged event is dead-lettered")
        .expect("a delivery")
        .expect("ok");
    let reason = delivery
        .properties
        .headers()
        .as_ref()
        .and_then(|h| h.inner().get(&ShortString::from("x-death-reason")).cloned());
    let reason = match reason {
        Some(AMQPValue::LongString(s)) => s.to_string(),
        other => panic!("x-death-reason header: {other:?}"),
    };
    assert!(
        reason.contains("guest"),
        "the reason names the publisher: {reason}"
    );

    let second = upsert(&stack, 7, OrderStatus::Paid).await;
    assert_eq!(
        sent_seqs(&stack, 7, 2).await,
        [first, second],
        "the forged seq did not move the watermark"
    );
    stack.stop().await;
}
