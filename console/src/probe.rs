//! `outbox-console healthcheck`: asks the console listening on `CONSOLE_ADDR` on this host for
//! `/healthz` (over HTTPS when TLS_CERT_FILE is set, trusting GRPC_CA_FILE, as the services'
//! `healthcheck` does) and exits 0 when it answers 200. Compose's health check runs it.

use std::{process::ExitCode, sync::Arc, time::Duration};

use anyhow::Context;
use outbox_kit::{
    health::loopback,
    tls::{certificates, read_pem},
};
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::{config::Config, paths::Route};

/// How long the whole probe may take.
const TIMEOUT: Duration = Duration::from_secs(5);

/// Probes the console of `cfg`; prints one line; 0 when healthy.
pub async fn healthcheck(cfg: &Config) -> ExitCode {
    let target = loopback(cfg.addr);
    match tokio::time::timeout(TIMEOUT, ask(cfg))
        .await
        .unwrap_or_else(|_| Err(anyhow::anyhow!("no answer within {TIMEOUT:?}")))
    {
        Ok(()) => {
            println!("outbox-console: healthy ({target})");
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("outbox-console: unhealthy ({target}): {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn ask(cfg: &Config) -> anyhow::Result<()> {
    let target = loopback(cfg.addr);
    let tcp = tokio::net::TcpStream::connect(target)
        .await
        .with_context(|| format!("cannot connect to {target}"))?;
    if !cfg.tls_on() {
        return get(tcp).await;
    }
    let ca = cfg
        .grpc_tls
        .grpc_ca_file
        .as_ref()
        .context("TLS is on: set GRPC_CA_FILE to the CA that signed TLS_CERT_FILE")?;
    let mut roots = rustls::RootCertStore::empty();
    for c in certificates("GRPC_CA_FILE", ca, &read_pem("GRPC_CA_FILE", ca)?)? {
        roots.add(c)?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = match &cfg.grpc_tls.grpc_tls_server_name {
        Some(n) => ServerName::try_from(n.clone()).context("GRPC_TLS_SERVER_NAME")?,
        None => ServerName::IpAddress(target.ip().into()),
    };
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await
        .context("TLS handshake")?;
    get(tls).await
}

/// `GET /healthz`; an error unless the answer is 200.
async fn get(mut s: impl AsyncRead + AsyncWrite + Unpin) -> anyhow::Result<()> {
    s.write_all(format!("GET {} HTTP/1.0\r\nHost: localhost\r\n\r\n", Route::Health).as_bytes())
        .await?;
    let mut answer = Vec::new();
    let _ = s.take(64 * 1024).read_to_end(&mut answer).await;
    let head = String::from_utf8_lossy(&answer);
    let status = head.lines().next().unwrap_or_default();
    anyhow::ensure!(
        status.split(' ').nth(1) == Some("200"),
        "answered {status:?}"
    );
    Ok(())
}
