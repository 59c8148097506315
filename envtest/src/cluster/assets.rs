//! Where the whole cluster's binaries are: kube-controller-manager, kube-scheduler and kwok (with kwok's
//! default stages), beside etcd and kube-apiserver or in the cache `cargo xtask envtest` builds.

use std::path::{Path, PathBuf};

use crate::assets::version_of;
use crate::{Assets, Error, default_assets_dir};

/// The kwok release `cargo xtask envtest` builds (`sigs.k8s.io/kwok`, Kubernetes WithOut Kubelet).
pub const KWOK_VERSION: &str = "v0.8.0";

/// The file, beside the kwok binary, holding kwok's default stages (node initialization, pods ready,
/// completed and deleted) as the release's `kustomize/stage` folder has them.
pub const KWOK_STAGES_FILE: &str = "kwok-stages.yaml";

/// The checked binaries of the cluster components that run beside etcd and kube-apiserver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterAssets {
    /// The directory holding them.
    pub dir: PathBuf,
    /// The kube-controller-manager binary.
    pub kube_controller_manager: PathBuf,
    /// The kube-scheduler binary.
    pub kube_scheduler: PathBuf,
    /// The kwok binary.
    pub kwok: PathBuf,
    /// kwok's stages, passed to it as `--config`.
    pub kwok_stages: PathBuf,
    /// What `kube-controller-manager --version` reported, e.g. `v1.35.4`.
    pub kubernetes_version: String,
    /// What `kwok --version` reported, e.g. `v0.8.0`.
    pub kwok_version: String,
}

impl ClusterAssets {
    /// The binaries in `dir`, checked by running each with `--version`.
    pub fn in_dir(dir: impl AsRef<Path>) -> Result<Self, Error> {
        let dir = dir.as_ref().to_path_buf();
        let kube_controller_manager = dir.join("kube-controller-manager");
        let kube_scheduler = dir.join("kube-scheduler");
        let kwok = dir.join("kwok");
        let kwok_stages = dir.join(KWOK_STAGES_FILE);
        let kubernetes_version = version_of(
            "kube-controller-manager",
            &kube_controller_manager,
            "Kubernetes ",
        )?;
        version_of("kube-scheduler", &kube_scheduler, "Kubernetes ")?;
        let kwok_version = version_of("kwok", &kwok, "kwok version ")?
            .split_whitespace()
            .next()
            .unwrap_or_default()
            .to_string();
        if !kwok_stages.is_file() {
            return Err(Error::MissingBinary {
                binary: "kwok",
                path: kwok_stages,
            });
        }
        Ok(ClusterAssets {
            dir,
            kube_controller_manager,
            kube_scheduler,
            kwok,
            kwok_stages,
            kubernetes_version,
            kwok_version,
        })
    }

    /// The cluster binaries that go with `assets`: in the same directory, else in the cache
    /// `cargo xtask envtest` builds (for a `KUBEBUILDER_ASSETS` that holds etcd and kube-apiserver only).
    pub fn beside(assets: &Assets) -> Result<Self, Error> {
        match Self::in_dir(&assets.dir) {
            Ok(found) => Ok(found),
            Err(first) => match default_assets_dir() {
                Some(cache) if cache != assets.dir => {
                    Self::in_dir(&cache).map_err(|_| Error::NoClusterAssets {
                        dir: assets.dir.clone(),
                        source: Box::new(first),
                    })
                }
                _ => Err(Error::NoClusterAssets {
                    dir: assets.dir.clone(),
                    source: Box::new(first),
                }),
            },
        }
    }
}
