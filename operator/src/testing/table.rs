//! Table tests for reconcilers and their steps, in the style of reconciler-runtime's `ReconcilerTestSuite` and
//! `SubReconcilerTestSuite`, on the production code path.
//!
//! A [`ReconcilerTestCase`] names a parent, the objects the cluster holds (`given`), and what one pass must do:
//! its creates, applies, updates, patches, deletes, status updates and events (each category compared in
//! order), the objects it tracks, values it stashes, and its outcome. Running it starts a fresh in-memory
//! [`ApiServer`](crate::testing::ApiServer) with a fixed clock and seed, stores the given objects, starts the
//! controller's shared caches on it, reads the parent from the cache and runs one
//! [`Reconciler::run_pass`](crate::Reconciler::run_pass) with the same dispatcher production uses. Then every
//! successful write request the server saw is matched against the expectations: an expected object must be a
//! subset of what was sent ([`is_subset`]); a write nobody expected fails the case, and so does an expected
//! one that did not happen. Failures name the case and the write, and show a YAML diff.
//!
//! A [`SubReconcilerTestCase`] runs one step with a [`Context`](crate::Context) built directly, against the same server
//! ([`SubReconcilerTestCase::run`]), or with no server at all ([`SubReconcilerTestCase::run_pure`]): caches
//! preloaded from the given objects ([`store_from`], [`Caches::insert_store`](crate::Caches::insert_store)) and a
//! [`RecordingDispatcher`](crate::RecordingDispatcher) whose commands stand for the writes. [`TestEnv`] is the environment under both,
//! for scenarios of several passes.
//!
//! ```
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
//! use kube::runtime::reflector::ObjectRef;
//! use kube::{CustomResource, CustomResourceExt, ResourceExt};
//! use kubewright::testing::table::{EventExpectation, ReconcilerTestCase};
//! use kubewright::{ChildReconciler, Context, Reconciler, ReconcilerStatus};
//! use serde_json::json;
//!
//! #[derive(CustomResource, Clone, Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
//! #[kube(group = "example.dev", version = "v1", kind = "Note", namespaced, status = "NoteStatus")]
//! pub struct NoteSpec {
//!     text: String,
//! }
//!
//! #[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
//! #[serde(rename_all = "camelCase")]
//! pub struct NoteStatus {
//!     observed_generation: Option<i64>,
//!     #[serde(default)]
//!     conditions: Vec<Condition>,
//! }
//!
//! impl ReconcilerStatus for NoteStatus {
//!     fn conditions(&self) -> &[Condition] { &self.conditions }
//!     fn conditions_mut(&mut self) -> &mut Vec<Condition> { &mut self.conditions }
//!     fn observed_generation(&self) -> Option<i64> { self.observed_generation }
//!     fn set_observed_generation(&mut self, g: Option<i64>) { self.observed_generation = g }
//! }
//!
//! fn reconciler() -> Reconciler<Note> {
//!     Reconciler::new("notes").step(ChildReconciler::new("configmap", |note: &Note, _: &mut Context| {
//!         let mut cm = ConfigMap::default();
//!         cm.metadata.name = Some(note.name_any());
//!         cm.data = Some([("text".to_string(), note.spec.text.clone())].into());
//!         Ok(Some(cm))
//!     }))
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), kubewright::testing::table::CaseFailure> {
//! ReconcilerTestCase::new("creates the config map", ObjectRef::new("hello").within("default"))
//!     .crd(Note::crd())
//!     .given(json!({
//!         "apiVersion": "example.dev/v1",
//!         "kind": "Note",
//!         "metadata": {"name": "hello", "namespace": "default", "uid": "0b4c5a7e-0000-4000-8000-000000000001"},
//!         "spec": {"text": "hi"},
//!     }))
//!     .expect_create(json!({
//!         "kind": "ConfigMap",
//!         "metadata": {
//!             "name": "hello",
//!             "ownerReferences": [{"kind": "Note", "name": "hello", "controller": true}],
//!         },
//!         "data": {"text": "hi"},
//!     }))
//!     .expect_event(EventExpectation::normal("Created").note("ConfigMap default/hello"))
//!     .expect_status_update(json!({
//!         "observedGeneration": 1,
//!         "conditions": [
//!             {"type": "ConfigMapReady", "status": "True"},
//!             {"type": "Ready", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z"},
//!         ],
//!     }))
//!     .run(reconciler())
//!     .await?;
//! # Ok(()) }
//! ```

// Defines `scenario_builders!`, which both kinds of case expand, so it comes before them.
#[macro_use]
mod scenario;

mod converge;
mod env;
mod expect;
mod failure;
mod fixtures;
mod pure;
mod reconciler_case;
mod sub_case;

pub use failure::{CaseFailure, CaseReport, SuiteFailure};
pub use reconciler_case::{ReconcilerTestCase, ReconcilerTestSuite};
pub use sub_case::SubReconcilerTestCase;

pub use converge::{Converged, MAX_PASSES};
pub use env::{DEFAULT_SEED, HarnessError, PassReport, TestEnv, default_time};
pub(crate) use env::{caches_caught_up, describe, install_crd};
pub use expect::{
    Category, EventExpectation, Write, is_subset, writes_of_commands, writes_of_requests, yaml_diff,
};
pub use fixtures::{Fixtures, PARENT_UID};
pub use pure::{Offline, ToStore, offline_caches, offline_client, store_from};
