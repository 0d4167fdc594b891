//! Throwaway certificate authorities for the TLS tests: a CA made in the test, a server
//! certificate for `localhost`/`127.0.0.1` and client certificates it signed, written as PEM
//! files into a directory of their own (removed on drop).

use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};

/// A CA and the files of what it signed, in a temporary directory.
#[derive(Debug)]
pub struct TestPki {
    dir: PathBuf,
    issuer: CertifiedIssuer<'static, KeyPair>,
}

/// A certificate and its key, as PEM files.
#[derive(Debug, Clone)]
pub struct CertFiles {
    /// The certificate (PEM).
    pub cert: PathBuf,
    /// Its private key (PEM, PKCS#8).
    pub key: PathBuf,
}

impl TestPki {
    /// A new CA named `name` (its certificate in [`TestPki::ca_file`]) in a fresh directory.
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(super::unique(&format!("pki_{name}")));
        std::fs::create_dir_all(&dir).expect("creates the PKI directory");
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(DnType::CommonName, format!("{name} test CA"));
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().expect("CA key");
        let issuer = CertifiedIssuer::self_signed(params, key).expect("CA certificate");
        std::fs::write(dir.join("ca.pem"), issuer.pem()).expect("writes ca.pem");
        Self { dir, issuer }
    }

    /// The directory holding the files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The CA's certificate (PEM).
    pub fn ca_file(&self) -> PathBuf {
        self.dir.join("ca.pem")
    }

    /// A server certificate for `localhost` and `127.0.0.1`, as `<name>.pem`/`<name>.key`.
    pub fn server(&self, name: &str) -> CertFiles {
        self.issue(
            name,
            vec!["localhost".into(), "127.0.0.1".into()],
            ExtendedKeyUsagePurpose::ServerAuth,
        )
    }

    /// A client certificate whose common name is `name`, as `<name>.pem`/`<name>.key`.
    pub fn client(&self, name: &str) -> CertFiles {
        self.issue(name, Vec::new(), ExtendedKeyUsagePurpose::ClientAuth)
    }

    fn issue(&self, name: &str, sans: Vec<String>, usage: ExtendedKeyUsagePurpose) -> CertFiles {
        let mut params = CertificateParams::new(sans).expect("leaf params");
        params.distinguished_name.push(DnType::CommonName, name);
        params.extended_key_usages = vec![usage];
        let key = KeyPair::generate().expect("leaf key");
        let cert = params.signed_by(&key, &self.issuer).expect("leaf cert");
        let files = CertFiles {
            cert: self.dir.join(format!("{name}.pem")),
            key: self.dir.join(format!("{name}.key")),
        };
        std::fs::write(&files.cert, cert.pem()).expect("writes the certificate");
        std::fs::write(&files.key, key.serialize_pem()).expect("writes the key");
        files
    }
}

impl Drop for TestPki {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
