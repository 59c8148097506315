//! What can go wrong while finding, starting and using a control plane.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// An error of the envtest harness. Each names the binary, flag or log line involved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Neither `KUBEBUILDER_ASSETS` nor the build cache holds the binaries.
    #[error(
        "no control plane binaries: KUBEBUILDER_ASSETS is not set and {searched} has none; run `cargo xtask envtest` \
         (needs Go) or set KUBEBUILDER_ASSETS to a directory with etcd and kube-apiserver"
    )]
    NoAssets {
        /// The cache directory that was looked at.
        searched: String,
    },
    /// The directory named by a variable does not hold working binaries.
    #[error("{variable} does not name a usable control plane: {source}")]
    InvalidAssets {
        /// The variable (`KUBEBUILDER_ASSETS`).
        variable: &'static str,
        /// Why.
        source: Box<Error>,
    },
    /// The cluster components (kube-controller-manager, kube-scheduler, kwok) are not beside etcd and
    /// kube-apiserver, nor in the build cache.
    #[error(
        "no cluster binaries beside the control plane in {}: {source}; run `cargo xtask envtest`, which builds \
         kube-controller-manager, kube-scheduler and kwok (needs Go)", dir.display()
    )]
    NoClusterAssets {
        /// The control plane's directory.
        dir: PathBuf,
        /// What was missing there.
        source: Box<Error>,
    },
    /// A cluster component did not start or did not become ready; every process already started was stopped.
    #[error("{component} did not start ({why}); the last lines of its log ({}):\n{last_lines}", log.display())]
    ComponentFailed {
        /// `kube-controller-manager`, `kube-scheduler` or `kwok`.
        component: &'static str,
        /// What went wrong: how it ended, or what was awaited.
        why: String,
        /// The last lines of its log.
        last_lines: String,
        /// The log file.
        log: PathBuf,
    },
    /// A binary is missing.
    #[error("{binary} not found: {path} does not exist")]
    MissingBinary {
        /// `etcd` or `kube-apiserver`.
        binary: &'static str,
        /// Where it was expected.
        path: PathBuf,
    },
    /// A binary could not be run.
    #[error("{binary} at {path} could not be run: {source}")]
    Spawn {
        /// `etcd` or `kube-apiserver`.
        binary: &'static str,
        /// The path.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// A binary answered `--version` with something unexpected.
    #[error(
        "{path} is not {binary}: `{binary} --version` printed {found:?}, expected {expected:?}"
    )]
    WrongBinary {
        /// `etcd` or `kube-apiserver`.
        binary: &'static str,
        /// The path.
        path: PathBuf,
        /// The start of the line expected.
        expected: String,
        /// The line printed.
        found: String,
    },
    /// A port is taken.
    #[error("port {port} for {binary} {flag} is already in use")]
    PortInUse {
        /// `etcd` or `kube-apiserver`.
        binary: &'static str,
        /// The flag that names the port, e.g. `--secure-port`.
        flag: String,
        /// The port.
        port: u16,
    },
    /// A process ended while it was starting.
    #[error("{binary} exited while starting ({status}): {line}\n(full log: {})", log.display())]
    Exited {
        /// `etcd` or `kube-apiserver`.
        binary: &'static str,
        /// How it ended.
        status: String,
        /// The log line that explains it.
        line: String,
        /// The log file.
        log: PathBuf,
    },
    /// A process did not become ready in time.
    #[error("{binary} was not ready after {timeout:?} ({waiting_for}); last telling log line: {line}\n(full log: {})", log.display())]
    NotReady {
        /// `etcd` or `kube-apiserver`.
        binary: &'static str,
        /// How long it was given.
        timeout: Duration,
        /// What was being waited for, e.g. `GET /readyz`.
        waiting_for: String,
        /// The log line that explains it best.
        line: String,
        /// The log file.
        log: PathBuf,
    },
    /// Generating certificates failed.
    #[error("generating certificates: {0}")]
    Certificates(#[from] rcgen::Error),
    /// A file could not be read or written.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The generated kubeconfig was refused by kube.
    #[error("kubeconfig: {0}")]
    Kubeconfig(String),
    /// A request to the control plane failed.
    #[error("{context}: {source}")]
    Kube {
        /// What was being done.
        context: String,
        /// kube's error.
        source: kube::Error,
    },
    /// A CRD did not become established.
    #[error(
        "CustomResourceDefinition {name} was not established after {timeout:?}; conditions: {conditions}"
    )]
    CrdNotEstablished {
        /// The CRD's name.
        name: String,
        /// How long it was given.
        timeout: Duration,
        /// Its conditions when the time ran out.
        conditions: String,
    },
    /// The shared control plane failed to start (earlier, in another test).
    #[error("the shared control plane did not start: {0}")]
    Shared(Arc<Error>),
}

impl Error {
    /// Whether this means "no binaries to start" (a skip unless a control plane is required), as opposed to
    /// binaries that failed.
    pub fn is_no_assets(&self) -> bool {
        match self {
            Error::NoAssets { .. } | Error::NoClusterAssets { .. } => true,
            Error::Shared(inner) => inner.is_no_assets(),
            _ => false,
        }
    }
}
