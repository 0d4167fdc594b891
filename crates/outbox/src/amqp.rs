//! Opening an AMQP connection, the one way every outbox crate does: [`connect`] one URL with its
//! [`Tls`] material (used by `amqps://` URLs). A caller with several brokers tries them in its
//! own order ([`crate::failover`]).

use std::fmt;

use lapin::{Connection, ConnectionProperties, DefaultConnectionBuilder, tcp::OwnedTLSConfig};

/// TLS material for `amqps://` connections: extra trusted CA certificates and a client
/// certificate. The default is none (the system's roots, no client certificate).
/// `Debug` never shows the private key.
#[derive(Clone, Default)]
pub struct Tls(OwnedTLSConfig);

impl Tls {
    /// Wraps lapin's TLS configuration (PEM CA chain, client identity).
    pub fn new(config: OwnedTLSConfig) -> Self {
        Self(config)
    }
}

impl fmt::Debug for Tls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tls")
            .field("ca", &self.0.cert_chain.is_some())
            .field("client_cert", &self.0.identity.is_some())
            .finish()
    }
}

/// Opens one connection to `url` with `tls` (used by `amqps://` URLs; ignored by `amqp://`).
///
/// Takes one URL: a caller with several brokers tries them in its own order.
pub async fn connect(
    url: &str,
    tls: &Tls,
    properties: ConnectionProperties,
) -> lapin::Result<Connection> {
    DefaultConnectionBuilder::new()?
        .with_uri_str(url.to_owned())
        .with_properties(properties)
        .with_tls_config(tls.0.clone())
        .connect()
        .await
}
