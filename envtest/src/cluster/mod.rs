//! The rest of a cluster beside etcd and kube-apiserver: kube-controller-manager (the workload, garbage
//! collection, namespace and service-account controllers), kube-scheduler, and kwok with a few simulated
//! nodes that move pods to `Running` and `Ready` (and a Job's pods to `Succeeded`) with no container runtime.

pub(crate) mod assets;
mod components;

use std::time::Duration;

pub use assets::{ClusterAssets, KWOK_STAGES_FILE, KWOK_VERSION};
pub(crate) use components::{Components, Joining, start};

/// The kube-controller-manager controllers a cluster runs: what the scenarios of an operator need (workloads,
/// garbage collection, namespace deletion, service accounts and their tokens, endpoints), and none that
/// watch nodes' health (kwok's nodes send no heartbeats), volumes or certificates.
pub const CONTROLLERS: [&str; 17] = [
    "serviceaccount-token-controller",
    "serviceaccount-controller",
    "root-ca-certificate-publisher-controller",
    "garbage-collector-controller",
    "namespace-controller",
    "deployment-controller",
    "replicaset-controller",
    "statefulset-controller",
    "daemonset-controller",
    "job-controller",
    "cronjob-controller",
    "ttl-after-finished-controller",
    "pod-garbage-collector-controller",
    "endpointslice-controller",
    "endpointslice-mirroring-controller",
    "endpoints-controller",
    "disruption-controller",
];

/// What runs beside etcd and kube-apiserver when a [`Builder`](crate::Builder) asks for a
/// [cluster](crate::Builder::cluster).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterOptions {
    /// How many simulated nodes kwok keeps `Ready` (default 3).
    pub nodes: usize,
    /// The queries per second (and twice as many in a burst) that kube-controller-manager, kube-scheduler
    /// and kwok may send (default 500: their own defaults of 20 to 50 would make the API server's clients wait
    /// for them in a benchmark of thousands of objects).
    pub qps: u32,
}

impl Default for ClusterOptions {
    fn default() -> Self {
        ClusterOptions { nodes: 3, qps: 500 }
    }
}

/// How long each cluster component took to become ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClusterStartup {
    /// From spawning kube-controller-manager until `/healthz` answered `ok` and the service-account
    /// controller had created the `default` ServiceAccount.
    pub controller_manager: Duration,
    /// From spawning kube-scheduler until `/healthz` answered `ok` (it starts alongside the controller manager).
    pub scheduler: Duration,
    /// From spawning kwok until every simulated node was `Ready`.
    pub nodes: Duration,
}
