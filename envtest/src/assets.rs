//! Where the control-plane binaries are: `KUBEBUILDER_ASSETS`, or the cache `cargo xtask envtest` builds.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::Error;

/// The Kubernetes release `cargo xtask envtest` builds kube-apiserver from.
pub const KUBERNETES_VERSION: &str = "v1.35.4";
/// The etcd release `cargo xtask envtest` builds.
pub const ETCD_VERSION: &str = "v3.6.16";
/// The variable naming a directory with `etcd` and `kube-apiserver`, as in controller-runtime's envtest.
pub const ASSETS_ENV: &str = "KUBEBUILDER_ASSETS";
/// Set (to anything but `0` or `false`) to make a missing control plane fail the tests that need one
/// instead of skipping them. `.ci/run` sets it.
pub const REQUIRE_ENV: &str = "OPERATOR_REQUIRE_CONTROL_PLANE";
/// Overrides the cache directory `cargo xtask envtest` builds into (default `$XDG_CACHE_HOME/operator-envtest`
/// or `~/.cache/operator-envtest`).
pub const CACHE_ENV: &str = "OPERATOR_ENVTEST_CACHE";

/// Whether [`REQUIRE_ENV`] is set.
pub fn control_plane_required() -> bool {
    std::env::var(REQUIRE_ENV).is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// The root of the build cache: [`CACHE_ENV`], else `$XDG_CACHE_HOME/operator-envtest`, else
/// `$HOME/.cache/operator-envtest`.
pub fn cache_root() -> Option<PathBuf> {
    let var = |name| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    var(CACHE_ENV)
        .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("kubewright-envtest")))
        .or_else(|| var("HOME").map(|d| d.join(".cache").join("kubewright-envtest")))
}

/// The cache directory for the pinned versions on this platform, e.g.
/// `~/.cache/operator-envtest/kubernetes-v1.35.4-etcd-v3.6.16-linux-amd64`.
pub fn default_assets_dir() -> Option<PathBuf> {
    cache_root().map(|root| root.join(assets_dir_name()))
}

/// The name of the cache directory for the pinned versions on this platform.
pub fn assets_dir_name() -> String {
    let arch = match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    };
    format!(
        "kubernetes-{KUBERNETES_VERSION}-etcd-{ETCD_VERSION}-{}-{arch}",
        std::env::consts::OS
    )
}

/// A checked pair of control-plane binaries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assets {
    /// The directory holding them.
    pub dir: PathBuf,
    /// The etcd binary.
    pub etcd: PathBuf,
    /// The kube-apiserver binary.
    pub kube_apiserver: PathBuf,
    /// What `etcd --version` reported, e.g. `3.6.16`.
    pub etcd_version: String,
    /// What `kube-apiserver --version` reported, e.g. `v1.35.4`.
    pub kubernetes_version: String,
}

impl Assets {
    /// The binaries in `dir`, checked by running each with `--version`.
    pub fn in_dir(dir: impl AsRef<Path>) -> Result<Self, Error> {
        let dir = dir.as_ref().to_path_buf();
        let etcd = dir.join("etcd");
        let kube_apiserver = dir.join("kube-apiserver");
        let etcd_version = version_of("etcd", &etcd, "etcd Version: ")?;
        let kubernetes_version = version_of("kube-apiserver", &kube_apiserver, "Kubernetes ")?;
        Ok(Assets {
            dir,
            etcd,
            kube_apiserver,
            etcd_version,
            kubernetes_version,
        })
    }

    /// `KUBEBUILDER_ASSETS` when set (an error if it does not hold working binaries), else the cache
    /// `cargo xtask envtest` builds, else [`Error::NoAssets`].
    pub fn locate() -> Result<Self, Error> {
        if let Some(dir) = std::env::var_os(ASSETS_ENV).filter(|v| !v.is_empty()) {
            return Self::in_dir(PathBuf::from(dir)).map_err(|e| Error::InvalidAssets {
                variable: ASSETS_ENV,
                source: Box::new(e),
            });
        }
        match default_assets_dir() {
            Some(dir) if dir.join("kube-apiserver").is_file() => Self::in_dir(dir),
            dir => Err(Error::NoAssets {
                searched: dir.map(|d| d.display().to_string()).unwrap_or_else(|| {
                    "(no cache directory: HOME and XDG_CACHE_HOME are unset)".to_string()
                }),
            }),
        }
    }
}

/// Runs `path --version` and returns what follows `prefix` on the first line, or an error naming the binary.
pub(crate) fn version_of(binary: &'static str, path: &Path, prefix: &str) -> Result<String, Error> {
    if !path.is_file() {
        return Err(Error::MissingBinary {
            binary,
            path: path.to_path_buf(),
        });
    }
    let output = Command::new(path)
        .arg("--version")
        .output()
        .map_err(|source| Error::Spawn {
            binary,
            path: path.to_path_buf(),
            source,
        })?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let first = stdout.lines().next().unwrap_or_default().trim();
    match first.strip_prefix(prefix) {
        Some(version) if output.status.success() => Ok(version.trim().to_string()),
        _ => Err(Error::WrongBinary {
            binary,
            path: path.to_path_buf(),
            expected: format!("{prefix}…"),
            found: if first.is_empty() {
                String::from_utf8_lossy(&output.stderr)
                    .lines()
                    .next()
                    .unwrap_or("nothing")
                    .to_string()
            } else {
                first.to_string()
            },
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_directory_names_both_versions_and_the_platform() {
        let name = assets_dir_name();
        assert!(name.starts_with(&format!(
            "kubernetes-{KUBERNETES_VERSION}-etcd-{ETCD_VERSION}-"
        )));
    }

    #[test]
    fn a_missing_binary_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let err = Assets::in_dir(dir.path()).unwrap_err();
        assert!(
            matches!(err, Error::MissingBinary { binary: "etcd", .. }),
            "{err}"
        );
        assert!(err.to_string().contains("etcd"), "{err}");
    }

    #[test]
    fn a_binary_that_is_not_etcd_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/bin/echo", dir.path().join("etcd")).unwrap();
        let err = Assets::in_dir(dir.path()).unwrap_err();
        assert!(
            matches!(err, Error::WrongBinary { binary: "etcd", .. }),
            "{err}"
        );
        assert!(err.to_string().contains("--version"), "{err}");
    }
}
