//! What nearly every operator module names, in one import: the runtime's builder and step types, the derives
//! a custom resource needs (kube's, serde's, schemars', this crate's), the object metadata and condition
//! types, a child set's [`Retention`] and [`SetStrategy`], `BTreeMap` (labels, annotations and data are maps), [`ObjectMetaExt`],
//! [`object!`](crate::object!) for desired objects, and (feature `cli`) the command line.
//!
//! ```
//! use kubewright::prelude::*;
//!
//! #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
//! #[kube(group = "example.dev", version = "v1", kind = "Note", namespaced)]
//! pub struct NoteSpec {
//!     pub text: String,
//! }
//!
//! fn title(note: &Note) -> String {
//!     note.name_any()
//! }
//! ```
//!
//! The derives generate code that names `kube`, `serde`, `schemars` and `k8s_openapi` by their own paths, so
//! a crate using them depends on those crates too, as kube's own derive requires.

pub use std::collections::BTreeMap;

pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, ObjectMeta};
pub use kube::{CustomResource, CustomResourceExt, KubeSchema, Resource, ResourceExt};
pub use schemars::JsonSchema;
pub use serde::{Deserialize, Serialize};

pub use crate::admission::{Request, Verdict};
#[cfg(feature = "cli")]
pub use crate::cli::App;
pub use crate::meta::ObjectMetaExt;
pub use crate::{
    ChildOutcome, Context, Outcome, Reconciler, ReconcilerStatus, Retention, SetStrategy, object,
};
