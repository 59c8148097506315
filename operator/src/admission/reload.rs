//! A serving certificate read again when its files change (cert-manager renews the Secret mounted in the pod
//! in place, every 60 days by default): rustls asks [`Reloading`] for the certificate on every handshake, and
//! at most once per [`CHECK_EVERY`] it reads `tls.crt` and `tls.key` again. A new, valid pair serves the next
//! handshakes (connections already open keep theirs; nothing is dropped); an unreadable or mismatched pair
//! keeps the old one serving, logged as an error and counted in `operator_certificate_reloads_total{result="error"}`
//! once per content seen.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use super::CertificateError;
use crate::metrics::Metrics;

/// How often the files are looked at, at most (on a handshake).
pub const CHECK_EVERY: Duration = Duration::from_secs(1);

/// The pair as last read: its PEM text, to see a change, and the key rustls serves.
struct Loaded {
    pem: (String, String),
    key: Arc<CertifiedKey>,
}

/// The certificate resolver of a webhook (or metrics) server whose certificate lives in files.
pub(crate) struct Reloading {
    dir: PathBuf,
    provider: Arc<CryptoProvider>,
    current: RwLock<Loaded>,
    /// When the files were last looked at, and the last content that could not be used.
    checked: Mutex<(Instant, Option<(String, String)>)>,
}

impl std::fmt::Debug for Reloading {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reloading")
            .field("dir", &self.dir)
            .finish_non_exhaustive()
    }
}

impl Reloading {
    /// Serves `cert_pem` and `key_pem` (read from `dir`) until the files there change.
    pub(crate) fn new(
        dir: &Path,
        cert_pem: &str,
        key_pem: &str,
        provider: Arc<CryptoProvider>,
    ) -> Result<Self, CertificateError> {
        let key = certified(dir, cert_pem, key_pem, &provider)?;
        Ok(Reloading {
            dir: dir.to_path_buf(),
            provider,
            current: RwLock::new(Loaded {
                pem: (cert_pem.to_string(), key_pem.to_string()),
                key: Arc::new(key),
            }),
            checked: Mutex::new((Instant::now(), None)),
        })
    }

    /// Reads the files again if [`CHECK_EVERY`] has passed, and swaps in a changed, valid pair.
    fn refresh(&self) {
        let Ok(mut checked) = self.checked.lock() else {
            return;
        };
        if checked.0.elapsed() < CHECK_EVERY {
            return;
        }
        checked.0 = Instant::now();
        let read = |name: &str| std::fs::read_to_string(self.dir.join(name));
        let (Ok(cert), Ok(key)) = (read("tls.crt"), read("tls.key")) else {
            // Mid-update (cert-manager swaps a symlink) or gone: keep serving, look again later.
            return;
        };
        let pem = (cert, key);
        let unchanged = self.current.read().map(|c| c.pem == pem).unwrap_or(true);
        if unchanged || checked.1.as_ref() == Some(&pem) {
            return;
        }
        match certified(&self.dir, &pem.0, &pem.1, &self.provider) {
            Ok(key) => {
                if let Ok(mut current) = self.current.write() {
                    *current = Loaded {
                        pem,
                        key: Arc::new(key),
                    };
                }
                checked.1 = None;
                Metrics::global().certificate_reloaded(true);
                tracing::info!(dir = %self.dir.display(), "serving the renewed certificate");
            }
            Err(e) => {
                checked.1 = Some(pem);
                Metrics::global().certificate_reloaded(false);
                tracing::error!(dir = %self.dir.display(), error = %e, "cannot use the changed certificate files; the previous certificate keeps serving");
            }
        }
    }
}

impl ResolvesServerCert for Reloading {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        self.refresh();
        self.current.read().ok().map(|c| c.key.clone())
    }
}

/// The chain and key of the PEM texts, checked to match.
pub(crate) fn certified(
    dir: &Path,
    cert_pem: &str,
    key_pem: &str,
    provider: &CryptoProvider,
) -> Result<CertifiedKey, CertificateError> {
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert_pem.as_bytes())
        .filter_map(Result::ok)
        .collect();
    if chain.is_empty() {
        return Err(CertificateError::Pem {
            path: dir.join("tls.crt"),
            what: "certificate",
        });
    }
    let key =
        PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).map_err(|_| CertificateError::Pem {
            path: dir.join("tls.key"),
            what: "private key",
        })?;
    Ok(CertifiedKey::from_der(chain, key, provider)?)
}
