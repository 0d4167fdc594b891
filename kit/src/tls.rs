//! TLS of the gRPC port: the server side ([`ServerTls`]: `TLS_CERT_FILE`, `TLS_KEY_FILE`,
//! `TLS_CLIENT_CA_FILE`) and the client side of the tools that call it ([`ClientTls`]: the
//! `healthcheck` subcommand and outboxctl), plus the PEM checks every TLS setting shares, so that
//! a bad file stops start-up with an error naming its setting.

use std::path::{Path, PathBuf};

use anyhow::Context;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};
use tonic::transport::{Certificate, ClientTlsConfig, Identity, ServerTlsConfig};

/// TLS on the gRPC port, flattened into each service's command line.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServerTls {
    /// PEM file of the gRPC server's certificate (chain). With TLS_KEY_FILE it turns on TLS on
    /// GRPC_ADDR (plaintext calls are then refused). Read at start-up: a new certificate takes
    /// a restart.
    #[arg(long, env = "TLS_CERT_FILE")]
    pub tls_cert_file: Option<PathBuf>,

    /// PEM file of the private key of TLS_CERT_FILE. Never printed.
    #[arg(long, env = "TLS_KEY_FILE")]
    pub tls_key_file: Option<PathBuf>,

    /// PEM file of the CA(s) whose client certificates the gRPC server requires (mutual TLS):
    /// a client without such a certificate cannot connect. Needs TLS_CERT_FILE.
    #[arg(long, env = "TLS_CLIENT_CA_FILE")]
    pub tls_client_ca_file: Option<PathBuf>,
}

impl ServerTls {
    /// The server's TLS configuration, `None` when TLS is off; reads and checks every file.
    pub fn load(&self) -> anyhow::Result<Option<ServerTlsConfig>> {
        let (cert, key) = match (&self.tls_cert_file, &self.tls_key_file) {
            (None, None) => {
                if self.tls_client_ca_file.is_some() {
                    anyhow::bail!(
                        "TLS_CLIENT_CA_FILE is set but TLS_CERT_FILE and TLS_KEY_FILE are not \
                         (client certificates need TLS)"
                    );
                }
                return Ok(None);
            }
            (Some(_), None) => anyhow::bail!("TLS_CERT_FILE is set but TLS_KEY_FILE is not"),
            (None, Some(_)) => anyhow::bail!("TLS_KEY_FILE is set but TLS_CERT_FILE is not"),
            (Some(cert), Some(key)) => (cert, key),
        };
        let cert_pem = read_pem("TLS_CERT_FILE", cert)?;
        certificates("TLS_CERT_FILE", cert, &cert_pem)?;
        let key_pem = read_pem("TLS_KEY_FILE", key)?;
        private_key("TLS_KEY_FILE", key, &key_pem)?;
        let mut config = ServerTlsConfig::new().identity(Identity::from_pem(cert_pem, key_pem));
        if let Some(ca) = &self.tls_client_ca_file {
            let pem = read_pem("TLS_CLIENT_CA_FILE", ca)?;
            certificates("TLS_CLIENT_CA_FILE", ca, &pem)?;
            config = config.client_ca_root(Certificate::from_pem(pem));
        }
        Ok(Some(config))
    }
}

/// How a tool (`healthcheck`, outboxctl) reaches a gRPC port behind TLS.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ClientTls {
    /// Call the gRPC port over TLS, trusting the CA certificate(s) in this PEM file (the CA that
    /// signed the server's TLS_CERT_FILE). Unset: plaintext.
    #[arg(long, env = "GRPC_CA_FILE")]
    pub grpc_ca_file: Option<PathBuf>,

    /// The name the server's certificate must carry, when it differs from the host called
    /// (e.g. `healthcheck` calls 127.0.0.1 but the certificate names `orders-svc`).
    #[arg(long, env = "GRPC_TLS_SERVER_NAME")]
    pub grpc_tls_server_name: Option<String>,

    /// PEM file of the client certificate sent to a server that requires one
    /// (TLS_CLIENT_CA_FILE). Needs GRPC_CLIENT_KEY_FILE and GRPC_CA_FILE.
    #[arg(long, env = "GRPC_CLIENT_CERT_FILE")]
    pub grpc_client_cert_file: Option<PathBuf>,

    /// PEM file of the private key of GRPC_CLIENT_CERT_FILE. Never printed.
    #[arg(long, env = "GRPC_CLIENT_KEY_FILE")]
    pub grpc_client_key_file: Option<PathBuf>,
}

impl ClientTls {
    /// The client's TLS configuration, `None` for plaintext; reads and checks every file.
    pub fn load(&self) -> anyhow::Result<Option<ClientTlsConfig>> {
        let Some(ca) = &self.grpc_ca_file else {
            if self.grpc_client_cert_file.is_some() || self.grpc_client_key_file.is_some() {
                anyhow::bail!("GRPC_CLIENT_CERT_FILE/GRPC_CLIENT_KEY_FILE need GRPC_CA_FILE (TLS)");
            }
            return Ok(None);
        };
        let pem = read_pem("GRPC_CA_FILE", ca)?;
        certificates("GRPC_CA_FILE", ca, &pem)?;
        let mut config = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(pem));
        if let Some(name) = &self.grpc_tls_server_name {
            config = config.domain_name(name.clone());
        }
        match (&self.grpc_client_cert_file, &self.grpc_client_key_file) {
            (None, None) => {}
            (Some(_), None) => {
                anyhow::bail!("GRPC_CLIENT_CERT_FILE is set but GRPC_CLIENT_KEY_FILE is not")
            }
            (None, Some(_)) => {
                anyhow::bail!("GRPC_CLIENT_KEY_FILE is set but GRPC_CLIENT_CERT_FILE is not")
            }
            (Some(cert), Some(key)) => {
                let cert_pem = read_pem("GRPC_CLIENT_CERT_FILE", cert)?;
                certificates("GRPC_CLIENT_CERT_FILE", cert, &cert_pem)?;
                let key_pem = read_pem("GRPC_CLIENT_KEY_FILE", key)?;
                private_key("GRPC_CLIENT_KEY_FILE", key, &key_pem)?;
                config = config.identity(Identity::from_pem(cert_pem, key_pem));
            }
        }
        Ok(Some(config))
    }

    /// `http://` or `https://` for a target `host:port`, as the configuration asks.
    pub fn scheme(&self) -> &'static str {
        if self.grpc_ca_file.is_some() {
            "https"
        } else {
            "http"
        }
    }
}

/// The text of the PEM file `path` of `setting`.
pub fn read_pem(setting: &str, path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path)
        .with_context(|| format!("{setting}: cannot read {}", path.display()))
}

/// The certificates of the PEM text `pem` (at least one) read from `path` for `setting`.
pub fn certificates(
    setting: &str,
    path: &Path,
    pem: &str,
) -> anyhow::Result<Vec<CertificateDer<'static>>> {
    let certs = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .with_context(|| format!("{setting}: {} is not valid PEM", path.display()))?;
    if certs.is_empty() {
        anyhow::bail!(
            "{setting}: {} holds no PEM certificate (-----BEGIN CERTIFICATE-----)",
            path.display()
        );
    }
    Ok(certs)
}

/// The private key of the PEM text `pem` read from `path` for `setting`; the error never
/// quotes the file's content.
pub fn private_key(
    setting: &str,
    path: &Path,
    pem: &str,
) -> anyhow::Result<PrivateKeyDer<'static>> {
    PrivateKeyDer::from_pem_slice(pem.as_bytes()).map_err(|e| {
        let why = match e {
            rustls_pki_types::pem::Error::NoItemsFound => "no private key found".to_owned(),
            other => format!("not a valid PEM private key ({other})"),
        };
        anyhow::anyhow!("{setting}: {}: {why}", path.display())
    })
}
