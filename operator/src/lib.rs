//! A runtime for writing Kubernetes operators declaratively.
//!
//! An operator is a [`Reconciler`](struct@Reconciler) per kind: a list of steps ([`reconcilers`]) that compute desired
//! children, run custom logic and report into the parent's status. [`Operator`] runs reconcilers on
//! shared caches (kube-runtime's reflectors and watchers) with triggers from owned, watched and tracked kinds, error
//! backoff and graceful shutdown. Every write is a [`Command`], so steps can be tested by the commands they
//! produce; `kubewright::testing` (feature `testing`) adds an in-memory API server and table tests.
//!
//! New here? The [`guide`] takes you from an empty directory to an operator deployed on a cluster (built into
//! these docs with features `cli` and `testing`).
#![deny(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]

pub mod admission;
mod answer;
pub mod attributes;
mod by_write;
pub mod cache;
#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
pub mod cli;
pub mod client;
pub mod command;
pub mod conditions;
pub mod context;
pub mod controller;
pub mod conversion;
mod declared;
mod echoes;
pub mod error;
pub mod foreign;
#[cfg(all(any(doc, doctest), feature = "cli", feature = "testing"))]
#[cfg_attr(docsrs, doc(cfg(all(feature = "cli", feature = "testing"))))]
pub mod guide;
pub mod index;
mod json;
mod json_text;
pub mod leader;
mod limits;
pub mod manifests;
pub mod meta;
pub mod metrics;
mod metrics_auth;
pub mod object;
mod operator;
pub mod outcome;
mod own_status;
mod owners;
pub mod pause;
pub mod plan;
pub mod prelude;
pub mod probes;
mod process_metrics;
pub mod quantity;
pub mod readiness;
pub mod reconciler;
pub mod reconcilers;
mod recorder;
pub mod schedule;
mod serving;
pub mod sharding;
pub mod stash;
pub mod tracker;
pub mod triggers;
mod unmanaged;
pub mod untyped;
mod versions;

#[cfg(any(feature = "testing", feature = "envtest"))]
#[cfg_attr(docsrs, doc(cfg(any(feature = "testing", feature = "envtest"))))]
pub mod testing;

pub use answer::Answer;
pub use cache::{
    Cache, CacheOptions, CacheOptionsError, CachedKind, Caches, Form, ListStrategy, OWNER_LABEL,
};
pub use command::{Command, Dispatcher, RecordingDispatcher, Target};
pub use conditions::{ConditionStatus, ConditionUpdate, ReconcilerStatus};
pub use context::{Context, Settings};
pub use controller::Backoff;
pub use declared::Declared;
pub use error::{Error, Result};
pub use foreign::Foreign;
pub use json_text::JsonText;
pub use operator::{Operator, RunError, shutdown_signal};
pub use outcome::Outcome;
pub use reconciler::{ParentKind, Pass, Reconciler};
pub use reconcilers::{
    CastReconciler, ChildOutcome, ChildReconciler, ChildSetReconciler, IfThen, Retention, Sequence,
    SetStrategy, SubReconciler, SyncReconciler, TryCatch, WithFinalizer, WriteStrategy,
};
pub use stash::{Stash, StashKey};
pub use tracker::{TrackKey, Tracker};

/// Derives a [`Reconciler`](struct@Reconciler) from attributes on a custom resource's spec struct; see
/// [`attributes`] for the reference.
pub use kubewright_derive::Reconciler;
/// Derives [`ReconcilerStatus`](trait@ReconcilerStatus) for a status struct from its `conditions` and
/// `observed_generation` fields (or the fields marked `#[status(conditions)]` and
/// `#[status(observed_generation)]`; `#[status(crate = path)]` names a re-exported runtime).
///
/// ```
/// use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
/// use kubewright::ReconcilerStatus;
///
/// #[derive(Clone, Debug, Default, serde::Serialize, ReconcilerStatus)]
/// struct Status {
///     observed_generation: Option<i64>,
///     conditions: Vec<Condition>,
/// }
///
/// let mut s = Status::default();
/// s.set_observed_generation(Some(3));
/// assert_eq!(s.observed_generation(), Some(3));
/// ```
pub use kubewright_derive::ReconcilerStatus;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;

// Re-exported so that authors and generated code name one set of versions.
pub use k8s_openapi;
pub use kube;
