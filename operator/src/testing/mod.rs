//! Testing support: an in-memory Kubernetes API server that a real `kube::Client` drives.
//!
//! Enabled by the `testing` feature. [`table`] holds table-driven tests of reconcilers and their steps on top
//! of the server (and, for steps, without it: [`store_from`], [`offline_caches`]).
//!
//! # Known differences from kube-apiserver
//!
//! - No authentication, authorization or admission webhooks; every request is allowed.
//! - CEL rules (`x-kubernetes-validations`) in CRD schemas are not evaluated.
//! - Garbage collection and namespace termination run synchronously inside the request that triggers them
//!   (a real cluster does this asynchronously in kube-controller-manager).
//! - Built-in kinds are checked by round-tripping through their `k8s-openapi` types and receive only the most
//!   common defaults (Pod templates, Deployments, StatefulSets, Services); no other built-in validation runs.
//! - Only JSON and YAML bodies; protobuf and CBOR are not served. `/openapi/v2` is not served; `/openapi/v3`
//!   only lists paths and the parameters kubectl checks.
//! - Watch history is kept per resource (`history_limit` changes), not compacted by time.

pub mod apiserver;
pub mod table;

pub use apiserver::ApiServer;
pub use table::{ToStore, offline_caches, store_from};
