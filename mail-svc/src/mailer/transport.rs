//! Where mails go: the log, or an SMTP server read from SMTP_URL (and SMTP_CA_FILE) with its
//! TLS. Kept apart from the sending so that the settings' rules (ports, schemes, a CA that needs
//! TLS, credentials never shown) live in one place, checked at startup.

use std::path::Path;

use anyhow::Context;
use lettre::{
    message::Mailbox,
    transport::smtp::{
        Error as SmtpError,
        authentication::Credentials,
        client::{Certificate, Tls, TlsParameters},
        extension::ClientId,
    },
};
use outbox_kit::tls::{certificates, read_pem};
use rustls_pki_types::CertificateDer;

/// Where mails go.
#[derive(Debug, Clone)]
pub enum Transport {
    /// The log (MAILER=log).
    Log,
    /// An SMTP server (MAILER=smtp).
    Smtp {
        server: Box<SmtpServer>,
        from: Box<Mailbox>,
    },
}

/// The SMTP server from SMTP_URL, with lettre's URL grammar: `smtp://host:port` (plain, port 25),
/// `smtp://host:port?tls=required|opportunistic` (STARTTLS, port 587), `smtps://host:port`
/// (implicit TLS, port 465), optional `user:password@`, and a path naming the EHLO name; TLS
/// trusts the Mozilla roots plus the CA certificates of SMTP_CA_FILE.
#[derive(Clone)]
pub struct SmtpServer {
    pub(super) host: String,
    pub(super) port: u16,
    pub(super) tls: Tls,
    pub(super) hello: ClientId,
    pub(super) credentials: Option<Credentials>,
}

impl std::fmt::Debug for SmtpServer {
    // Never the credentials.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmtpServer")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("authenticated", &self.credentials.is_some())
            .finish_non_exhaustive()
    }
}

impl SmtpServer {
    /// Parses SMTP_URL and reads SMTP_CA_FILE (`ca_file`). The error never repeats the URL (it
    /// may hold a password) nor the file's content.
    pub fn from_settings(url: &str, ca_file: Option<&Path>) -> anyhow::Result<Self> {
        let url = url::Url::parse(url).context("SMTP_URL is not a valid URL")?;
        let host = url
            .host_str()
            .context("SMTP_URL names no host")?
            .trim_matches(['[', ']'])
            .to_owned();
        let tls_param = url
            .query_pairs()
            .find(|(k, _)| k == "tls")
            .map(|(_, v)| v.into_owned());
        // A CA for a plaintext session would be silently unused: most likely SMTP_URL lost its
        // TLS by mistake.
        if ca_file.is_some() && url.scheme() == "smtp" && tls_param.is_none() {
            anyhow::bail!(
                "SMTP_CA_FILE is set but SMTP_URL uses no TLS (plain smtp://): use smtps:// or \
                 smtp://…?tls=required, or unset SMTP_CA_FILE"
            );
        }
        let ca_certs = match ca_file {
            Some(path) => {
                let pem = read_pem("SMTP_CA_FILE", path)?;
                certificates("SMTP_CA_FILE", path, &pem)?
            }
            None => Vec::new(),
        };
        let params = || {
            let built = tls_parameters(&host, &ca_certs);
            match ca_file {
                // rustls refuses a certificate it cannot use as a trust anchor.
                Some(path) => built.with_context(|| {
                    format!(
                        "SMTP_CA_FILE: {}: not a usable CA certificate",
                        path.display()
                    )
                }),
                None => built.context("SMTP_URL: TLS parameters"),
            }
        };
        let (port, tls) = match (url.scheme(), tls_param.as_deref()) {
            ("smtp", None) => (25, Tls::None),
            ("smtp", Some("required")) => (587, Tls::Required(params()?)),
            ("smtp", Some("opportunistic")) => (587, Tls::Opportunistic(params()?)),
            ("smtps", _) => (465, Tls::Wrapper(params()?)),
            (scheme, tls) => anyhow::bail!(
                "SMTP_URL: unknown scheme {scheme:?} or tls parameter {tls:?} (use smtp://, \
                 smtp://…?tls=required, smtp://…?tls=opportunistic or smtps://)"
            ),
        };
        let hello = match url.path().trim_matches('/') {
            "" => ClientId::default(),
            name => ClientId::Domain(name.to_owned()),
        };
        let decode = |s: &str| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8()
                .map(|s| s.into_owned())
                .context("SMTP_URL: the user or password is not UTF-8")
        };
        let credentials = match url.password() {
            Some(password) => Some(Credentials::new(decode(url.username())?, decode(password)?)),
            None => None,
        };
        Ok(Self {
            port: url.port().unwrap_or(port),
            host,
            tls,
            hello,
            credentials,
        })
    }
}

/// TLS verifying `host`'s certificate against the built-in roots plus `ca_certs`.
fn tls_parameters(host: &str, ca_certs: &[CertificateDer<'_>]) -> Result<TlsParameters, SmtpError> {
    let mut builder = TlsParameters::builder(host.to_owned());
    for der in ca_certs {
        builder = builder.add_root_certificate(Certificate::from_der(der.to_vec())?);
    }
    builder.build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smtp_urls() {
        let s = SmtpServer::from_settings("smtp://127.0.0.1:1025", None).expect("plain");
        assert_eq!((s.host.as_str(), s.port), ("127.0.0.1", 1025));
        assert!(matches!(s.tls, Tls::None) && s.credentials.is_none());
        let s =
            SmtpServer::from_settings("smtp://shop%40x:p%2Fw@mail.example.com?tls=required", None)
                .expect("starttls");
        assert_eq!(s.port, 587);
        assert!(matches!(s.tls, Tls::Required(_)) && s.credentials.is_some());
        assert!(!format!("{s:?}").contains("p/w"), "{s:?}");
        let s = SmtpServer::from_settings("smtps://mail.example.com/shop.example.com", None)
            .expect("smtps");
        assert_eq!(s.port, 465);
        assert!(matches!(s.tls, Tls::Wrapper(_)));
        assert_eq!(s.hello, ClientId::Domain("shop.example.com".into()));
        let e = SmtpServer::from_settings("ftp://u:secret@x", None).unwrap_err();
        assert!(!format!("{e:#}").contains("secret"), "{e:#}");
    }

    #[test]
    fn smtp_ca_file_is_checked_and_needs_tls() {
        let pki = outbox_testkit::pki::TestPki::new("smtp_unit");
        let ca = pki.ca_file();
        for url in [
            "smtps://mail.example.com",
            "smtp://mail.example.com?tls=required",
        ] {
            let s = SmtpServer::from_settings(url, Some(&ca)).expect(url);
            assert!(matches!(s.tls, Tls::Wrapper(_) | Tls::Required(_)), "{url}");
        }
        let not_pem = pki.dir().join("not.pem");
        std::fs::write(&not_pem, "s3cret-not-a-certificate\n").unwrap();
        let missing = pki.dir().join("missing.pem");
        let cases = [
            (
                "smtps://mail.example.com",
                &not_pem,
                "holds no PEM certificate",
            ),
            ("smtps://mail.example.com", &missing, "cannot read"),
            (
                "smtp://u:pw@mail.example.com",
                &ca,
                "SMTP_CA_FILE is set but SMTP_URL uses no TLS",
            ),
        ];
        for (url, file, says) in cases {
            let e = format!(
                "{:#}",
                SmtpServer::from_settings(url, Some(file)).unwrap_err()
            );
            assert!(e.contains("SMTP_CA_FILE") && e.contains(says), "{url}: {e}");
            assert!(!e.contains("s3cret") && !e.contains(":pw@"), "{e}");
        }
    }
}
