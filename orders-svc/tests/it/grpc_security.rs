//! The gRPC port's protection, with a real tonic client as grpcurl would call: bearer tokens
//! (`AUTH_TOKENS_FILE`, re-read on SIGHUP), TLS (`TLS_CERT_FILE`/`TLS_KEY_FILE`) and client
//! certificates (`TLS_CLIENT_CA_FILE`); health and reflection stay open; bad files stop start-up
//! naming their setting.

use std::{net::SocketAddr, path::PathBuf, time::Duration};

use orders_svc::App;
use outbox_kit::tls::ClientTls;
use outbox_proto::orders::v1::{
    GetOrderRequest, OrderStatus, UpsertOrderRequest, order_service_client::OrderServiceClient,
};
use outbox_testkit::pki::{CertFiles, TestPki};
use tokio_util::sync::CancellationToken;
use tonic::{Code, metadata::MetadataValue, transport::Channel};
use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};

use crate::common::config;

const ALICE: &str = "alice-0123456789abcdef";
const BOB: &str = "bob-fedcba9876543210";

struct Running {
    addr: SocketAddr,
    shutdown: CancellationToken,
    app: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl Running {
    async fn stop(self) {
        self.shutdown.cancel();
        self.app.await.unwrap().unwrap();
    }
}

async fn start(cfg: orders_svc::Config) -> Running {
    let shutdown = CancellationToken::new();
    let app = App::build(cfg, shutdown.clone())
        .await
        .expect("orders-svc starts");
    let addr = app.grpc_addr();
    Running {
        addr,
        shutdown,
        app: tokio::spawn(app.run()),
    }
}

fn upsert_request(token: Option<&str>) -> tonic::Request<UpsertOrderRequest> {
    let mut r = tonic::Request::new(UpsertOrderRequest {
        id: 1,
        status: OrderStatus::Pending as i32,
        customer_email: "a@example.com".into(),
    });
    if let Some(t) = token {
        r.metadata_mut().insert(
            "authorization",
            MetadataValue::try_from(format!("Bearer {t}")).unwrap(),
        );
    }
    r
}

async fn plain_channel(addr: SocketAddr) -> Channel {
    Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect()
        .await
        .expect("connects")
}

/// A TLS channel to `localhost:<port>` configured as outboxctl and `healthcheck` are.
async fn tls_channel(addr: SocketAddr, tls: &ClientTls) -> Result<Channel, String> {
    let config = tls.load().map_err(|e| format!("{e:#}"))?.expect("TLS");
    Channel::from_shared(format!("https://localhost:{}", addr.port()))
        .unwrap()
        .tls_config(config)
        .map_err(|e| e.to_string())?
        .connect()
        .await
        .map_err(|e| format!("{e:?}"))
}

/// Connects with `tls` and calls Upsert: the error of whichever step failed.
async fn upsert_over_tls(addr: SocketAddr, tls: &ClientTls) -> Result<(), String> {
    let channel = tls_channel(addr, tls).await?;
    // TLS 1.3: the server's refusal may arrive with the first call.
    OrderServiceClient::new(channel)
        .upsert(upsert_request(None))
        .await
        .map(|_| ())
        .map_err(|s| s.to_string())
}

fn client_tls(ca: Option<PathBuf>, client: Option<&CertFiles>) -> ClientTls {
    ClientTls {
        grpc_ca_file: ca,
        grpc_tls_server_name: None,
        grpc_client_cert_file: client.map(|c| c.cert.clone()),
        grpc_client_key_file: client.map(|c| c.key.clone()),
    }
}

#[tokio::test]
async fn tokens_are_required_except_for_health_and_reflection_and_reload_on_sighup() {
    let dir = TestPki::new("tokens");
    let tokens_file = dir.dir().join("tokens");
    std::fs::write(&tokens_file, format!("# operators\nalice {ALICE}\n")).unwrap();
    let mut cfg = config(outbox_testkit::fresh_database_url("orders_auth"));
    cfg.server.grpc_security.auth_tokens_file = Some(tokens_file.clone());
    let svc = start(cfg).await;
    let mut orders = OrderServiceClient::new(plain_channel(svc.addr).await);

    for (token, want) in [
        (None, Code::Unauthenticated),
        (Some("wrong-token-0123456789"), Code::Unauthenticated),
        (Some(ALICE), Code::Ok),
    ] {
        let got = orders
            .upsert(upsert_request(token))
            .await
            .map(|_| Code::Ok)
            .unwrap_or_else(|s| s.code());
        assert_eq!(got, want, "Upsert with {token:?}");
    }
    // Reads too.
    let err = orders
        .get_order(GetOrderRequest { id: 1 })
        .await
        .expect_err("no token");
    assert_eq!(err.code(), Code::Unauthenticated);

    // Health and reflection answer without a token.
    let health = HealthClient::new(plain_channel(svc.addr).await)
        .check(HealthCheckRequest {
            service: String::new(),
        })
        .await;
    assert!(health.is_ok(), "{health:?}");
    let listed = outbox_testkit::reflection::services_v1(svc.addr).await;
    assert!(
        listed.iter().any(|s| s == "orders.v1.OrderService"),
        "{listed:?}"
    );

    // SIGHUP: bob in, alice out.
    std::fs::write(&tokens_file, format!("bob {BOB}\n")).unwrap();
    let status = std::process::Command::new("kill")
        .args(["-HUP", &std::process::id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let mut swapped = false;
    for _ in 0..100 {
        let bob = orders.upsert(upsert_request(Some(BOB))).await;
        if bob.is_ok() {
            swapped = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(swapped, "bob's token is accepted after SIGHUP");
    let alice = orders.upsert(upsert_request(Some(ALICE))).await;
    assert_eq!(alice.unwrap_err().code(), Code::Unauthenticated);

    // A broken file on SIGHUP keeps the list in force.
    std::fs::write(&tokens_file, "bob\n").unwrap();
    std::process::Command::new("kill")
        .args(["-HUP", &std::process::id().to_string()])
        .status()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(orders.upsert(upsert_request(Some(BOB))).await.is_ok());
    svc.stop().await;
}

// Multi-threaded: the healthcheck binary is waited for on this thread while the server answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_and_client_certificates() {
    let pki = TestPki::new("grpc");
    let server = pki.server("orders-svc");
    let client = pki.client("operator");
    let other = TestPki::new("other");

    // TLS.
    let mut cfg = config(outbox_testkit::fresh_database_url("orders_tls"));
    cfg.server.grpc_security.tls.tls_cert_file = Some(server.cert.clone());
    cfg.server.grpc_security.tls.tls_key_file = Some(server.key.clone());
    let svc = start(cfg.clone()).await;
    let channel = tls_channel(svc.addr, &client_tls(Some(pki.ca_file()), None))
        .await
        .expect("a client trusting the CA connects");
    OrderServiceClient::new(channel)
        .upsert(upsert_request(None))
        .await
        .expect("called over TLS");
    let err = tls_channel(svc.addr, &client_tls(Some(other.ca_file()), None))
        .await
        .expect_err("a client trusting another CA fails the handshake");
    assert!(
        err.contains("certificate") || err.contains("UnknownIssuer"),
        "{err}"
    );
    let plain = OrderServiceClient::new(plain_channel_lazy(svc.addr))
        .upsert(upsert_request(None))
        .await;
    assert!(plain.is_err(), "plaintext is refused");
    svc.stop().await;

    // Mutual TLS.
    cfg.database_url = outbox_testkit::fresh_database_url("orders_mtls").into();
    cfg.server.grpc_security.tls.tls_client_ca_file = Some(pki.ca_file());
    let svc = start(cfg).await;
    let with_cert = tls_channel(svc.addr, &client_tls(Some(pki.ca_file()), Some(&client)))
        .await
        .expect("a client with a certificate connects");
    OrderServiceClient::new(with_cert)
        .upsert(upsert_request(None))
        .await
        .expect("called over mutual TLS");
    let without = upsert_over_tls(svc.addr, &client_tls(Some(pki.ca_file()), None)).await;
    assert!(
        without.is_err(),
        "a client without a certificate is refused"
    );
    let stranger = other.client("stranger");
    let foreign =
        upsert_over_tls(svc.addr, &client_tls(Some(pki.ca_file()), Some(&stranger))).await;
    assert!(foreign.is_err(), "a certificate of another CA is refused");

    // `orders-svc healthcheck` over mutual TLS: with the CA and a client certificate it passes;
    // without the CA it says why and fails.
    let healthcheck = |env: Vec<(&str, PathBuf)>| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_orders-svc"))
            .arg("healthcheck")
            .env_clear()
            .env("GRPC_ADDR", svc.addr.to_string())
            .env("GRPC_TLS_SERVER_NAME", "localhost")
            .envs(env)
            .output()
            .expect("runs");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (ok, line) = healthcheck(vec![
        ("GRPC_CA_FILE", pki.ca_file()),
        ("GRPC_CLIENT_CERT_FILE", client.cert.clone()),
        ("GRPC_CLIENT_KEY_FILE", client.key.clone()),
    ]);
    assert!(ok && line.contains("SERVING"), "{line}");
    let (ok, line) = healthcheck(vec![]);
    assert!(!ok, "plaintext healthcheck of a TLS port: {line}");
    let (ok, line) = healthcheck(vec![("GRPC_CA_FILE", pki.dir().join("missing.pem"))]);
    assert!(!ok && line.contains("GRPC_CA_FILE"), "{line}");
    svc.stop().await;
}

fn plain_channel_lazy(addr: SocketAddr) -> Channel {
    Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect_timeout(Duration::from_secs(5))
        .timeout(Duration::from_secs(5))
        .connect_lazy()
}

#[tokio::test]
async fn bad_files_stop_start_up_naming_the_setting() {
    let pki = TestPki::new("bad");
    let server = pki.server("orders-svc");
    let garbage = pki.dir().join("garbage");
    std::fs::write(&garbage, "not a certificate\n").unwrap();
    let missing = pki.dir().join("missing.pem");
    let tokens = pki.dir().join("tokens");
    std::fs::write(&tokens, format!("alice {ALICE} extra\n")).unwrap();

    type Edit = Box<dyn Fn(&mut orders_svc::Config)>;
    let cases: Vec<(&str, Edit)> = vec![
        ("TLS_CERT_FILE", {
            let (m, k) = (missing.clone(), server.key.clone());
            Box::new(move |c| {
                c.server.grpc_security.tls.tls_cert_file = Some(m.clone());
                c.server.grpc_security.tls.tls_key_file = Some(k.clone());
            })
        }),
        ("TLS_CERT_FILE", {
            let (g, k) = (garbage.clone(), server.key.clone());
            Box::new(move |c| {
                c.server.grpc_security.tls.tls_cert_file = Some(g.clone());
                c.server.grpc_security.tls.tls_key_file = Some(k.clone());
            })
        }),
        ("TLS_KEY_FILE", {
            let (cert, g) = (server.cert.clone(), garbage.clone());
            Box::new(move |c| {
                c.server.grpc_security.tls.tls_cert_file = Some(cert.clone());
                c.server.grpc_security.tls.tls_key_file = Some(g.clone());
            })
        }),
        ("TLS_KEY_FILE", {
            let cert = server.cert.clone();
            Box::new(move |c| c.server.grpc_security.tls.tls_cert_file = Some(cert.clone()))
        }),
        ("TLS_CLIENT_CA_FILE", {
            let ca = pki.ca_file();
            Box::new(move |c| c.server.grpc_security.tls.tls_client_ca_file = Some(ca.clone()))
        }),
        ("AUTH_TOKENS_FILE", {
            let t = tokens.clone();
            Box::new(move |c| c.server.grpc_security.auth_tokens_file = Some(t.clone()))
        }),
        ("AUTH_TOKENS_FILE", {
            let m = missing.clone();
            Box::new(move |c| c.server.grpc_security.auth_tokens_file = Some(m.clone()))
        }),
    ];
    for (setting, edit) in cases {
        let mut cfg = config(format!("{}/postgres", outbox_testkit::pg_server_url()));
        edit(&mut cfg);
        let err = App::build(cfg, CancellationToken::new())
            .await
            .expect_err(setting);
        let text = format!("{err:#}");
        assert!(text.contains(setting), "{setting}: {text}");
        assert!(!text.contains(ALICE), "never the token: {text}");
    }
}
