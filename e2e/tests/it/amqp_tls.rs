//! `amqps://` end to end: relay-svc and mail-svc (the real binaries) reach a RabbitMQ node that
//! this test starts with a TLS listener, a throwaway CA and required client certificates, and an
//! order's event travels through it to its mail. A client that does not trust the CA, or that
//! sends no client certificate, gets a clear error.
//!
//! The node is this test's own (`tls-outbox@localhost`, TLS on 5681, plain on 5680, distribution
//! on 25680, kit's [`RabbitNode`]); the machine's broker is not touched.

use std::{path::Path, time::Duration};

use e2e::stack::{Stack, StackConfig};
use lapin::ConnectionProperties;
use outbox_kit::broker::TlsSettings;
use outbox_proto::orders::v1::OrderStatus;
use outbox_support::{failover::BrokerUrls, secret::SecretUrl};
use outbox_testkit::{
    pki::{CertFiles, TestPki},
    rabbit_node::RabbitNode,
};

/// The test's node: its name, plain AMQP port (distribution on 25680) and TLS port.
const NODE: &str = "tls-outbox";
const TCP_PORT: u16 = 5680;
const TLS_PORT: u16 = 5681;

/// Starts the test's node with a TLS listener that requires client certificates issued by
/// `pki`'s CA and presents `server`.
fn start_tls_node(pki: &TestPki, server: &CertFiles) -> RabbitNode {
    RabbitNode::start(NODE, TCP_PORT, |dir| {
        for (from, to) in [
            (pki.ca_file(), "ca.pem"),
            (server.cert.clone(), "server.pem"),
            (server.key.clone(), "server.key"),
        ] {
            std::fs::copy(from, dir.join(to)).expect("the node's certificates");
        }
        let d = dir.display();
        format!(
            "listeners.ssl.default = 127.0.0.1:{TLS_PORT}\n\
             ssl_options.cacertfile = {d}/ca.pem\n\
             ssl_options.certfile = {d}/server.pem\n\
             ssl_options.keyfile = {d}/server.key\n\
             ssl_options.verify = verify_peer\n\
             ssl_options.fail_if_no_peer_cert = true\n"
        )
    })
}

fn tls_url() -> String {
    format!("amqps://guest:guest@localhost:{TLS_PORT}/%2f")
}

fn settings(ca: Option<&Path>, client: Option<&CertFiles>) -> TlsSettings {
    TlsSettings {
        amqp_ca_file: ca.map(Path::to_path_buf),
        amqp_client_cert_file: client.map(|c| c.cert.clone()),
        amqp_client_key_file: client.map(|c| c.key.clone()),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relay_and_mail_move_an_event_over_amqps_with_a_private_ca_and_client_certificates() {
    let pki = TestPki::new("amqp");
    let server = pki.server("rabbitmq");
    let client = pki.client("outbox-services");
    let node = tokio::task::block_in_place(|| start_tls_node(&pki, &server));
    let url = SecretUrl::from(tls_url());
    let urls = BrokerUrls::from(url.clone());

    // Without the CA: the broker's certificate does not verify.
    let err = outbox_support::amqp::connect(
        &url,
        &settings(None, Some(&client)).load(&urls).unwrap(),
        outbox_support::amqp::DEFAULT_HEARTBEAT,
        ConnectionProperties::default(),
    )
    .await
    .expect_err("the broker's CA is not trusted");
    let text = err.to_string();
    assert!(
        text.contains("certificate") || text.contains("UnknownIssuer"),
        "{text}"
    );

    // With the CA but no client certificate: the broker refuses.
    let refused = outbox_support::amqp::connect(
        &url,
        &settings(Some(&pki.ca_file()), None).load(&urls).unwrap(),
        outbox_support::amqp::DEFAULT_HEARTBEAT,
        ConnectionProperties::default(),
    )
    .await;
    assert!(
        refused.is_err(),
        "a client without a certificate is refused"
    );

    // Both: connected.
    let conn = outbox_support::amqp::connect(
        &url,
        &settings(Some(&pki.ca_file()), Some(&client))
            .load(&urls)
            .unwrap(),
        outbox_support::amqp::DEFAULT_HEARTBEAT,
        ConnectionProperties::default(),
    )
    .await
    .unwrap_or_else(|e| panic!("connects over TLS: {e}\n{}", node.log()));
    conn.close(200, "bye".into()).await.unwrap();

    // The real services over amqps://.
    let tls_env = vec![
        ("AMQP_URL".to_string(), tls_url()),
        ("AMQP_CA_FILE".into(), pki.ca_file().display().to_string()),
        (
            "AMQP_CLIENT_CERT_FILE".into(),
            client.cert.display().to_string(),
        ),
        (
            "AMQP_CLIENT_KEY_FILE".into(),
            client.key.display().to_string(),
        ),
    ];
    let mut cfg = StackConfig::new("amqp_tls");
    cfg.relay_env = tls_env.clone();
    cfg.mail_env = tls_env;
    let mut stack = Stack::start(cfg).await.expect("stack starts");
    let seq = stack.upsert(7, OrderStatus::Pending).await.expect("upsert");
    let mails = tokio::time::timeout(Duration::from_secs(90), stack.mails_for(7, 1))
        .await
        .map_err(|_| ())
        .and_then(|r| r.map_err(|_| ()))
        .unwrap_or_else(|()| panic!("the mail arrives\n{}\n{}", stack.logs(), node.log()));
    assert_eq!(mails.len(), 1);
    assert_eq!(mails[0].seq, seq);
    stack.stop().await;
}
