//! `amqps://` end to end: relay-svc and mail-svc (the real binaries) reach a RabbitMQ node that
//! this test starts with a TLS listener, a throwaway CA and required client certificates, and an
//! order's event travels through it to its mail. A client that does not trust the CA, or that
//! sends no client certificate, gets a clear error.
//!
//! The node is this test's own (`tls-outbox@localhost`, TLS on 5681, plain on 5680, distribution
//! on 25680); the machine's broker is not touched. A node left over by an earlier run is stopped
//! first, and the node is stopped when the test ends, passed or failed.

use std::{
    path::{Path, PathBuf},
    process::Command,
    time::Duration,
};

use e2e::stack::{Stack, StackConfig};
use lapin::ConnectionProperties;
use outbox::{failover::BrokerUrls, secret::SecretUrl};
use outbox_kit::{
    amqp::TlsSettings,
    testing::pki::{CertFiles, TestPki},
};
use outbox_proto::orders::v1::OrderStatus;

use crate::serial;

const NODE: &str = "tls-outbox@localhost";
const TLS_PORT: u16 = 5681;
const TCP_PORT: u16 = 5680;
const DIST_PORT: u16 = 25680;

/// The RabbitMQ node of this test; stopped (and its directory removed) on drop.
struct TlsNode {
    dir: PathBuf,
}

impl TlsNode {
    fn start(pki: &TestPki, server: &CertFiles) -> Self {
        stop_node();
        let dir = std::env::temp_dir().join("outbox-tls-rabbitmq");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("mnesia")).unwrap();
        std::fs::create_dir_all(dir.join("log")).unwrap();
        for (from, to) in [
            (pki.ca_file(), "ca.pem"),
            (server.cert.clone(), "server.pem"),
            (server.key.clone(), "server.key"),
        ] {
            std::fs::copy(from, dir.join(to)).unwrap();
        }
        let d = dir.display();
        std::fs::write(
            dir.join("rabbitmq.conf"),
            format!(
                "listeners.tcp.default = 127.0.0.1:{TCP_PORT}\n\
                 listeners.ssl.default = 127.0.0.1:{TLS_PORT}\n\
                 ssl_options.cacertfile = {d}/ca.pem\n\
                 ssl_options.certfile = {d}/server.pem\n\
                 ssl_options.keyfile = {d}/server.key\n\
                 ssl_options.verify = verify_peer\n\
                 ssl_options.fail_if_no_peer_cert = true\n\
                 loopback_users = none\n"
            ),
        )
        .unwrap();
        std::fs::write(dir.join("enabled_plugins"), "[].\n").unwrap();
        run(Command::new("chown")
            .args(["-R", "rabbitmq:rabbitmq"])
            .arg(&dir));
        let node = Self { dir };
        run(node
            .env(&mut Command::new("rabbitmq-server"))
            .arg("-detached"));
        // `await_startup` fails at once while the node is not up yet: ask until it answers.
        let deadline = std::time::Instant::now() + Duration::from_secs(90);
        loop {
            let ok = Command::new("rabbitmqctl")
                .args(["-n", NODE, "--timeout", "10", "await_startup"])
                .stdin(std::process::Stdio::null())
                .output()
                .is_ok_and(|o| o.status.success());
            if ok {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the TLS node did not start:\n{}",
                node.log()
            );
            std::thread::sleep(Duration::from_millis(500));
        }
        node
    }

    fn env<'a>(&self, cmd: &'a mut Command) -> &'a mut Command {
        let d = &self.dir;
        cmd.env("RABBITMQ_NODENAME", NODE)
            .env("RABBITMQ_NODE_PORT", TCP_PORT.to_string())
            .env("RABBITMQ_DIST_PORT", DIST_PORT.to_string())
            .env("RABBITMQ_CONFIG_FILE", d.join("rabbitmq.conf"))
            .env("RABBITMQ_MNESIA_BASE", d.join("mnesia"))
            .env("RABBITMQ_LOG_BASE", d.join("log"))
            .env("RABBITMQ_ENABLED_PLUGINS_FILE", d.join("enabled_plugins"))
    }

    fn log(&self) -> String {
        let mut out = String::new();
        for entry in std::fs::read_dir(self.dir.join("log"))
            .into_iter()
            .flatten()
            .flatten()
        {
            out.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
        }
        out
    }
}

impl Drop for TlsNode {
    fn drop(&mut self) {
        stop_node();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Stops the node of this test if one runs (a leftover of an interrupted run included).
fn stop_node() {
    let _ = Command::new("rabbitmqctl")
        .args(["-n", NODE, "stop"])
        .stdin(std::process::Stdio::null())
        .output();
}

fn run(cmd: &mut Command) {
    let out = cmd
        .stdin(std::process::Stdio::null())
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
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
    let _serial = serial::shared().await;
    let pki = TestPki::new("amqp");
    let server = pki.server("rabbitmq");
    let client = pki.client("outbox-services");
    let node = TlsNode::start(&pki, &server);
    let url = SecretUrl::from(tls_url());
    let urls = BrokerUrls::from(url.clone());

    // Without the CA: the broker's certificate does not verify.
    let err = outbox::amqp::connect(
        &url,
        &settings(None, Some(&client)).load(&urls).unwrap(),
        outbox::amqp::DEFAULT_HEARTBEAT,
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
    let refused = outbox::amqp::connect(
        &url,
        &settings(Some(&pki.ca_file()), None).load(&urls).unwrap(),
        outbox::amqp::DEFAULT_HEARTBEAT,
        ConnectionProperties::default(),
    )
    .await;
    assert!(
        refused.is_err(),
        "a client without a certificate is refused"
    );

    // Both: connected.
    let conn = outbox::amqp::connect(
        &url,
        &settings(Some(&pki.ca_file()), Some(&client))
            .load(&urls)
            .unwrap(),
        outbox::amqp::DEFAULT_HEARTBEAT,
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
