//! The services' AMQP settings: the TLS settings of `amqps://` URLs ([`TlsSettings`]:
//! `AMQP_CA_FILE`, `AMQP_CLIENT_CERT_FILE`, `AMQP_CLIENT_KEY_FILE`), loaded into the
//! `outbox_support::amqp::Tls` that `outbox_support::amqp::connect` takes (the one place every AMQP connection of
//! the services and the outbox crates is opened).
//!
//! An `amqps://` URL verifies the broker's certificate against the system's trust store plus
//! `AMQP_CA_FILE`, and its host name against the URL's host. A client certificate is sent when
//! both `AMQP_CLIENT_CERT_FILE` and `AMQP_CLIENT_KEY_FILE` are set; with
//! `?auth_mechanism=external` in the URL the broker takes the user from that certificate.
//!
//! `AMQP_HEARTBEAT` ([`parse_heartbeat`]) is how soon a silent connection is noticed (about two
//! heartbeats; see `outbox_support::amqp`); `outbox_support::amqp::watch` reports what the broker says about a
//! connection (blocked by a resource alarm, lost).

use std::{path::PathBuf, str::FromStr};

use crate::tls::{certificates, private_key, read_pem};
use lapin::{
    tcp::{OwnedIdentity, OwnedTLSConfig},
    uri::{AMQPScheme, AMQPUri},
};
use outbox_support::{
    amqp::{MAX_HEARTBEAT, Tls},
    failover::BrokerUrls,
};

/// The help text every service gives `AMQP_HEARTBEAT`.
pub const HEARTBEAT_HELP: &str = "AMQP heartbeat, whole seconds from 1s to 600s: a connection \
     that receives nothing for two of them (a silent network, a frozen broker) is closed and \
     replaced, with the next address of AMQP_URL. An address's own `?heartbeat=` wins.";

/// Parses `AMQP_HEARTBEAT`: a duration (`10s`, `1m`) of whole seconds between 1 s and
/// [`MAX_HEARTBEAT`] (AMQP carries seconds; `0` would turn the check off: an address can still
/// say `?heartbeat=0`).
pub fn parse_heartbeat(s: &str) -> Result<std::time::Duration, String> {
    let d = crate::config::parse_duration(s)?;
    if d.subsec_nanos() != 0 {
        return Err(format!("{s:?} is not a whole number of seconds"));
    }
    if d.is_zero() || d > MAX_HEARTBEAT {
        return Err(format!("{s:?} must be between 1s and {MAX_HEARTBEAT:?}"));
    }
    Ok(d)
}

/// The TLS settings of `amqps://` connections, flattened into each service's command line.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct TlsSettings {
    /// PEM file of the CA certificate(s) that signed the broker's certificate, trusted for
    /// `amqps://` URLs in addition to the system's trust store (for a private CA). Needs an
    /// `amqps://` AMQP_URL.
    #[arg(long, env = "AMQP_CA_FILE")]
    pub amqp_ca_file: Option<PathBuf>,

    /// PEM file of the client certificate (chain) sent to the broker, for brokers that require
    /// one (`ssl_options.fail_if_no_peer_cert`); with `?auth_mechanism=external` in AMQP_URL
    /// the broker takes the user from it. Needs AMQP_CLIENT_KEY_FILE and an `amqps://` AMQP_URL.
    #[arg(long, env = "AMQP_CLIENT_CERT_FILE")]
    pub amqp_client_cert_file: Option<PathBuf>,

    /// PEM file of the private key (PKCS#8, PKCS#1 or SEC1) of AMQP_CLIENT_CERT_FILE.
    /// Never printed.
    #[arg(long, env = "AMQP_CLIENT_KEY_FILE")]
    pub amqp_client_key_file: Option<PathBuf>,
}

impl TlsSettings {
    /// Reads and checks the files, and checks that `urls` (the `AMQP_URL` setting) is an
    /// `amqps://` URL (every address of a list) when any of them is set: a CA or a client certificate configured for a
    /// plaintext connection would be silently unused. Errors name the setting to fix.
    pub fn load(&self, urls: &BrokerUrls) -> anyhow::Result<Tls> {
        let uris = urls.validate("AMQP_URL", "AMQP URL", AMQPUri::from_str)?;
        let any_set = self.amqp_ca_file.is_some()
            || self.amqp_client_cert_file.is_some()
            || self.amqp_client_key_file.is_some();
        let plain = uris.iter().position(|u| u.scheme != AMQPScheme::AMQPS);
        if let (true, Some(i)) = (any_set, plain) {
            let url = &urls.urls()[i];
            let set = [
                ("AMQP_CA_FILE", self.amqp_ca_file.is_some()),
                (
                    "AMQP_CLIENT_CERT_FILE",
                    self.amqp_client_cert_file.is_some(),
                ),
                ("AMQP_CLIENT_KEY_FILE", self.amqp_client_key_file.is_some()),
            ]
            .iter()
            .filter(|(_, on)| *on)
            .map(|(name, _)| *name)
            .collect::<Vec<_>>()
            .join(", ");
            anyhow::bail!("{set} is set but AMQP_URL ({url}) is not an amqps:// URL");
        }
        let cert_chain = match &self.amqp_ca_file {
            Some(path) => {
                let pem = read_pem("AMQP_CA_FILE", path)?;
                certificates("AMQP_CA_FILE", path, &pem)?;
                Some(pem)
            }
            None => None,
        };
        let identity = match (&self.amqp_client_cert_file, &self.amqp_client_key_file) {
            (None, None) => None,
            (Some(_), None) => {
                anyhow::bail!("AMQP_CLIENT_CERT_FILE is set but AMQP_CLIENT_KEY_FILE is not")
            }
            (None, Some(_)) => {
                anyhow::bail!("AMQP_CLIENT_KEY_FILE is set but AMQP_CLIENT_CERT_FILE is not")
            }
            (Some(cert), Some(key)) => {
                let pem = read_pem("AMQP_CLIENT_CERT_FILE", cert)?;
                certificates("AMQP_CLIENT_CERT_FILE", cert, &pem)?;
                let key_pem = read_pem("AMQP_CLIENT_KEY_FILE", key)?;
                private_key("AMQP_CLIENT_KEY_FILE", key, &key_pem)?;
                Some(OwnedIdentity::PKCS8 {
                    pem: pem.into_bytes(),
                    key: key_pem.into_bytes(),
                })
            }
        };
        Ok(Tls::new(OwnedTLSConfig {
            identity,
            cert_chain,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(ca: Option<&str>, cert: Option<&str>, key: Option<&str>) -> TlsSettings {
        TlsSettings {
            amqp_ca_file: ca.map(PathBuf::from),
            amqp_client_cert_file: cert.map(PathBuf::from),
            amqp_client_key_file: key.map(PathBuf::from),
        }
    }

    #[test]
    fn heartbeats_are_whole_seconds_in_range() {
        assert_eq!(
            parse_heartbeat("10s"),
            Ok(std::time::Duration::from_secs(10))
        );
        assert_eq!(parse_heartbeat("2"), Ok(std::time::Duration::from_secs(2)));
        for bad in ["0s", "1500ms", "11m", "soon"] {
            assert!(parse_heartbeat(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn bad_settings_name_the_setting() {
        let tls_url = BrokerUrls::from_str("amqps://u:s3cret@broker:5671/%2f").unwrap();
        let plain_url = BrokerUrls::from_str("amqp://u:s3cret@broker:5672/%2f").unwrap();
        let dir = std::env::temp_dir().join(format!("kit-amqp-tls-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let not_pem = dir.join("not.pem");
        std::fs::write(&not_pem, "hello\n").unwrap();
        let not_pem = not_pem.to_str().unwrap();
        let cases = [
            (
                settings(Some("/nonexistent/ca.pem"), None, None),
                &tls_url,
                "AMQP_CA_FILE: cannot read /nonexistent/ca.pem",
            ),
            (
                settings(Some(not_pem), None, None),
                &tls_url,
                "AMQP_CA_FILE: ",
            ),
            (
                settings(Some(not_pem), None, None),
                &plain_url,
                "AMQP_CA_FILE is set but AMQP_URL (amqp://u:***@broker:5672/%2f) is not an amqps:// URL",
            ),
            (
                settings(None, Some(not_pem), None),
                &tls_url,
                "AMQP_CLIENT_CERT_FILE is set but AMQP_CLIENT_KEY_FILE is not",
            ),
            (
                settings(None, None, Some(not_pem)),
                &tls_url,
                "AMQP_CLIENT_KEY_FILE is set but AMQP_CLIENT_CERT_FILE is not",
            ),
            (
                settings(None, Some(not_pem), Some(not_pem)),
                &tls_url,
                "AMQP_CLIENT_CERT_FILE: ",
            ),
            (
                settings(None, None, None),
                &BrokerUrls::from_str("amqp://u:s3cret@broker:x/").unwrap(),
                "AMQP_URL is not a valid AMQP URL",
            ),
        ];
        for (s, url, want) in cases {
            let err = format!("{:#}", s.load(url).unwrap_err());
            assert!(err.starts_with(want), "want {want:?}, got {err:?}");
            assert!(!err.contains("s3cret"), "{err}");
        }
        assert!(settings(None, None, None).load(&plain_url).is_ok());
        assert!(settings(None, None, None).load(&tls_url).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
