//! The webhook server's TLS material: read from files (cert-manager's `tls.crt`, `tls.key`, `ca.crt`) or
//! generated at start (a CA and a serving certificate for the names the API server uses).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::reload::{Reloading, certified};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DistinguishedName, DnType,
    ExtendedKeyUsagePurpose, IsCa, KeyPair, KeyUsagePurpose,
};

/// Why the webhook certificates could not be made or read.
#[derive(Debug, thiserror::Error)]
pub enum CertificateError {
    /// Generating a key or certificate failed.
    #[error("generating the webhook certificates: {0}")]
    Generate(#[from] rcgen::Error),
    /// A file could not be read.
    #[error("reading {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A PEM file holds no certificate or key.
    #[error("{path} holds no {what} in PEM")]
    Pem {
        /// The file.
        path: PathBuf,
        /// What was looked for.
        what: &'static str,
    },
    /// rustls refused the certificate and key.
    #[error("the webhook certificate and key do not make a TLS configuration: {0}")]
    Tls(#[from] rustls::Error),
}

/// A serving certificate chain and key, and the CA bundle the API server verifies them with.
#[derive(Clone)]
pub struct Certificates {
    cert_pem: String,
    key_pem: String,
    ca_pem: String,
    /// The directory they were read from: the server then reads them again when they change.
    dir: Option<PathBuf>,
}

impl std::fmt::Debug for Certificates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Certificates").finish_non_exhaustive()
    }
}

impl Certificates {
    /// A fresh CA and a serving certificate it signs, valid for `hosts` (DNS names or IP addresses, e.g.
    /// `127.0.0.1` or `webapp-webhook.webapp-system.svc`).
    pub fn generate<S: Into<String>>(
        hosts: impl IntoIterator<Item = S>,
    ) -> Result<Self, CertificateError> {
        let ca = {
            let mut params = CertificateParams::new(Vec::<String>::new())?;
            params.distinguished_name = name("operator-webhook-ca");
            params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
            params.key_usages = vec![
                KeyUsagePurpose::KeyCertSign,
                KeyUsagePurpose::CrlSign,
                KeyUsagePurpose::DigitalSignature,
            ];
            CertifiedIssuer::self_signed(params, KeyPair::generate()?)?
        };
        let key = KeyPair::generate()?;
        let hosts: Vec<String> = hosts.into_iter().map(Into::into).collect();
        let mut params = CertificateParams::new(hosts)?;
        params.distinguished_name = name("operator-webhook");
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let cert = params.signed_by(&key, &ca)?;
        Ok(Certificates {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
            ca_pem: ca.pem(),
            dir: None,
        })
    }

    /// `tls.crt`, `tls.key` and `ca.crt` from `dir`, as cert-manager writes them into a Secret mounted there.
    /// Without `ca.crt` the bundle is `tls.crt` itself (a self-signed certificate). A server with these
    /// certificates reads `tls.crt` and `tls.key` again when they change (a renewal), without a restart or a
    /// dropped connection; a changed pair that cannot be used is logged and counted, and the previous one
    /// keeps serving.
    pub fn from_dir(dir: &Path) -> Result<Self, CertificateError> {
        let read = |name: &str| {
            let path = dir.join(name);
            std::fs::read_to_string(&path).map_err(|source| CertificateError::Read { path, source })
        };
        let cert_pem = read("tls.crt")?;
        let key_pem = read("tls.key")?;
        let ca_pem = match read("ca.crt") {
            Ok(ca) => ca,
            Err(CertificateError::Read { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound =>
            {
                cert_pem.clone()
            }
            Err(e) => return Err(e),
        };
        let certs = Certificates {
            cert_pem,
            key_pem,
            ca_pem,
            dir: Some(dir.to_path_buf()),
        };
        certs.server_config()?;
        Ok(certs)
    }

    /// The CA bundle (PEM) for the webhook configurations' `caBundle`.
    pub fn ca_bundle(&self) -> &str {
        &self.ca_pem
    }

    /// The serving certificate chain (PEM).
    pub fn certificate(&self) -> &str {
        &self.cert_pem
    }

    /// The rustls server configuration (HTTP/1.1); for certificates read from a directory, one that serves
    /// the files' new pair once they change.
    pub fn server_config(&self) -> Result<Arc<rustls::ServerConfig>, CertificateError> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let dir = self.dir.as_deref().unwrap_or(Path::new("<generated>"));
        let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()?
            .with_no_client_auth();
        let mut config = match &self.dir {
            Some(dir) => builder.with_cert_resolver(Arc::new(Reloading::new(
                dir,
                &self.cert_pem,
                &self.key_pem,
                provider,
            )?)),
            None => builder.with_cert_resolver(Arc::new(rustls::sign::SingleCertAndKey::from(
                certified(dir, &self.cert_pem, &self.key_pem, &provider)?,
            ))),
        };
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}

fn name(common_name: &str) -> DistinguishedName {
    let mut dn = DistinguishedName::new();
    dn.push(DnType::CommonName, common_name);
    dn
}
