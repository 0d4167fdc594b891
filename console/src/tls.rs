//! HTTPS, set up as the services set up their gRPC TLS: `TLS_CERT_FILE` and `TLS_KEY_FILE`
//! (PEM, read at start-up and checked by kit's readers, whose errors name the setting and never
//! quote a key), rustls with ring.

use std::{net::SocketAddr, sync::Arc, time::Duration};

use outbox_kit::tls::{ServerTls, certificates, private_key, read_pem};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::{TlsAcceptor, server::TlsStream};

/// How long a client may take over its TLS handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The acceptor of the settings, `None` when TLS is off.
pub fn load(settings: &ServerTls) -> anyhow::Result<Option<TlsAcceptor>> {
    let (Some(cert), Some(key)) = (&settings.tls_cert_file, &settings.tls_key_file) else {
        return Ok(None);
    };
    let certs = certificates("TLS_CERT_FILE", cert, &read_pem("TLS_CERT_FILE", cert)?)?;
    let key = private_key("TLS_KEY_FILE", key, &read_pem("TLS_KEY_FILE", key)?)?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| anyhow::anyhow!("TLS_CERT_FILE / TLS_KEY_FILE: {e}"))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Some(TlsAcceptor::from(Arc::new(config))))
}

/// A TCP listener that hands axum TLS streams.
pub struct Listener {
    tcp: TcpListener,
    acceptor: TlsAcceptor,
}

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listener")
            .field("tcp", &self.tcp)
            .finish_non_exhaustive()
    }
}

impl Listener {
    pub fn new(tcp: TcpListener, acceptor: TlsAcceptor) -> Self {
        Self { tcp, acceptor }
    }
}

impl axum::serve::Listener for Listener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let (tcp, addr) = match self.tcp.accept().await {
                Ok(c) => c,
                Err(e) => {
                    // Out of file descriptors and the like: wait rather than spin.
                    tracing::warn!(error = %e, "console: accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            // The handshake runs here, one at a time: an operator console has few clients,
            // and a client that stalls is cut off after HANDSHAKE_TIMEOUT.
            match tokio::time::timeout(HANDSHAKE_TIMEOUT, self.acceptor.accept(tcp)).await {
                Ok(Ok(tls)) => return (tls, addr),
                Ok(Err(e)) => tracing::debug!(error = %e, %addr, "console: TLS handshake failed"),
                Err(_) => tracing::debug!(%addr, "console: TLS handshake timed out"),
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}
