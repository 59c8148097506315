//! Testing support for reconcilers: table tests on an in-memory Kubernetes API server that a real
//! `kube::Client` drives.
//!
//! [`table`] (table-driven tests of reconcilers and their steps on top of the server, and, for steps, without
//! it: `store_from`, `offline_caches`) and [`explore`] (the perturbation explorer: a scenario run again under a
//! crash at each write, API faults, lost watches and stale caches, each run checked against the unperturbed
//! one) are enabled by the `testing` feature, which also re-exports the in-memory
//! server, the `kubewright-apiserver` crate, as [`apiserver`] (and its [`ApiServer`]). The `envtest` feature
//! re-exports the `kubewright-envtest` crate as `envtest`: a real control plane (etcd and kube-apiserver) for
//! integration tests. Both crates stand on their own, without this runtime.
//!
//! The known differences of the in-memory server from kube-apiserver are listed in the
//! `kubewright-apiserver` crate documentation.

#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod explore;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod table;

/// The in-memory Kubernetes API server (the `kubewright-apiserver` crate).
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub use kubewright_apiserver as apiserver;
/// A real control plane for integration tests (the `kubewright-envtest` crate).
#[cfg(feature = "envtest")]
#[cfg_attr(docsrs, doc(cfg(feature = "envtest")))]
pub use kubewright_envtest as envtest;

#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub use apiserver::ApiServer;
#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub use table::{ToStore, offline_caches, store_from};
