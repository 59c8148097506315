//! # 3. Testing
//!
//! Three tools, all on the embedded cluster inside `cargo test`, none needing a real cluster:
//!
//! - a **table test** runs one pass of the reconciler over objects you give and checks every write it makes
//!   ([`ReconcilerTestCase`](crate::testing::table::ReconcilerTestCase));
//! - a **test environment** runs passes until the parent settles, as the controller would
//!   ([`TestEnv::converge`](crate::testing::table::TestEnv::converge)), for scenarios of several steps;
//! - the **explorer** runs a scenario again with a crash, a stale cache or a lost event at each write, and
//!   checks the operator still ends in the same state ([`explore`](crate::testing::explore)).
//!
//! The `Note` of [the first chapter](super::start) serves every example below:
//!
//! ```
//! # use k8s_openapi::api::core::v1::ConfigMap;
//! # use kubewright::prelude::*;
//! # #[derive(CustomResource, Reconciler, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
//! # #[kube(group = "example.dev", version = "v1", kind = "Note", namespaced, status = "NoteStatus")]
//! # #[child(desired = desired_config_map)]
//! # pub struct NoteSpec { pub text: String }
//! # #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, ReconcilerStatus)]
//! # #[serde(rename_all = "camelCase", default)]
//! # pub struct NoteStatus { pub observed_generation: Option<i64>, pub conditions: Vec<Condition> }
//! # fn desired_config_map(note: &Note, _cx: &mut Context) -> kubewright::Result<Option<ConfigMap>> {
//! #     let text = note.spec.text.clone();
//! #     Ok(Some(object!(ConfigMap { metadata: { name: note.name_any() }, data: { "text": text } })))
//! # }
//! use kube::runtime::reflector::ObjectRef;
//! use kubewright::testing::table::{EventExpectation, ReconcilerTestCase};
//! use serde_json::json;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! ReconcilerTestCase::new("creates the config map", ObjectRef::new("hello").within("default"))
//!     .crd(Note::crd())
//!     .given(json!({
//!         "apiVersion": "example.dev/v1", "kind": "Note",
//!         "metadata": {"name": "hello", "namespace": "default"},
//!         "spec": {"text": "hi"},
//!     }))
//!     // Each expected write is a subset of what was sent; a write nobody expected fails the case.
//!     .expect_create(json!({
//!         "kind": "ConfigMap",
//!         "metadata": {"name": "hello", "ownerReferences": [{"kind": "Note", "name": "hello", "controller": true}]},
//!         "data": {"text": "hi"},
//!     }))
//!     .expect_event(EventExpectation::normal("Created").note("ConfigMap default/hello"))
//!     .expect_status_update(json!({
//!         "observedGeneration": 1,
//!         "conditions": [{"type": "ConfigMapReady", "status": "True"}, {"type": "Ready", "status": "True"}],
//!     }))
//!     .run(Note::reconciler())
//!     .await?;
//! # Ok(()) }
//! ```
//!
//! A failing case names the case and the write, with a YAML diff of what was expected and what was sent. The
//! server's clock is fixed ([`default_time`](crate::testing::table::default_time)) and its names and uids
//! seeded, so a case gives the same writes on every run.
//!
//! ## A whole operator, several passes
//!
//! [`TestEnv`](crate::testing::table::TestEnv) holds an embedded cluster and the caches; `converge` runs passes
//! until one writes nothing, and fails listing every pass's writes when the parent never settles. The test
//! writes to the cluster through [`TestEnv::client`](crate::testing::table::TestEnv::client) between passes, as a
//! user would.
//!
//! ```
//! # use k8s_openapi::api::core::v1::ConfigMap;
//! # use kubewright::prelude::*;
//! # #[derive(CustomResource, Reconciler, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
//! # #[kube(group = "example.dev", version = "v1", kind = "Note", namespaced, status = "NoteStatus")]
//! # #[child(desired = desired_config_map)]
//! # pub struct NoteSpec { pub text: String }
//! # #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, ReconcilerStatus)]
//! # #[serde(rename_all = "camelCase", default)]
//! # pub struct NoteStatus { pub observed_generation: Option<i64>, pub conditions: Vec<Condition> }
//! # fn desired_config_map(note: &Note, _cx: &mut Context) -> kubewright::Result<Option<ConfigMap>> {
//! #     let text = note.spec.text.clone();
//! #     Ok(Some(object!(ConfigMap { metadata: { name: note.name_any() }, data: { "text": text } })))
//! # }
//! use kube::api::{Api, Patch, PatchParams};
//! use kube::runtime::reflector::ObjectRef;
//! use kubewright::testing::table::TestEnv;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut env = TestEnv::new();
//! env.install_crd(&Note::crd()).await?;
//! let mut note = Note::new("hello", NoteSpec { text: "hi".into() });
//! note.metadata.namespace = Some("default".into());
//! env.insert(&note)?;
//! let hello = ObjectRef::new("hello").within("default");
//! env.converge(&Note::reconciler(), &hello).await?;
//!
//! // The user changes the text; the next passes follow.
//! let notes: Api<Note> = Api::namespaced(env.client(), "default");
//! let change = serde_json::json!({"spec": {"text": "bye"}});
//! notes.patch("hello", &PatchParams::default(), &Patch::Merge(&change)).await?;
//! env.converge(&Note::reconciler(), &hello).await?;
//!
//! let config_maps: Api<ConfigMap> = Api::namespaced(env.client(), "default");
//! let data = config_maps.get("hello").await?.data.unwrap_or_default();
//! assert_eq!(data["text"], "bye");
//! # Ok(()) }
//! ```
//!
//! ## The explorer
//!
//! A table test checks the writes you thought of. The explorer checks the ones you did not: it runs a
//! [`Scenario`](crate::testing::explore::Scenario) once as the reference, then again for every write of it with
//! a crash before or after that write, a stale cache, a lost watch event or an API error, and checks that each
//! run settles in the reference's state, deletes nothing the reference keeps, takes over nothing, and leaves no
//! change without a pass to notice it. A finding names the smallest perturbation that broke the operator and
//! the state it left, as YAML.
//!
//! ```
//! # use k8s_openapi::api::core::v1::ConfigMap;
//! # use kubewright::prelude::*;
//! # #[derive(CustomResource, Reconciler, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
//! # #[kube(group = "example.dev", version = "v1", kind = "Note", namespaced, status = "NoteStatus")]
//! # #[child(desired = desired_config_map)]
//! # pub struct NoteSpec { pub text: String }
//! # #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, ReconcilerStatus)]
//! # #[serde(rename_all = "camelCase", default)]
//! # pub struct NoteStatus { pub observed_generation: Option<i64>, pub conditions: Vec<Condition> }
//! # fn desired_config_map(note: &Note, _cx: &mut Context) -> kubewright::Result<Option<ConfigMap>> {
//! #     let text = note.spec.text.clone();
//! #     Ok(Some(object!(ConfigMap { metadata: { name: note.name_any() }, data: { "text": text } })))
//! # }
//! use kubewright::testing::explore::{Explore, Scenario};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut note = Note::new("hello", NoteSpec { text: "hi".into() });
//! note.metadata.namespace = Some("default".into());
//! let mut changed = note.clone();
//! changed.spec.text = "bye".into();
//! let scenario = Scenario::new().apply(&note).settle().apply(&changed).settle();
//! let explored = Explore::new(Note::reconciler).crd(Note::crd()).scenario(scenario).run().await?;
//! println!("{explored}"); // how many runs, and of which perturbations
//! # Ok(()) }
//! ```
//!
//! `run` fails with the finding when a perturbed run ends elsewhere than the reference. Time stands still
//! unless the scenario [advances](crate::testing::explore::Scenario::advance) it; `.normalize(..)` hides values
//! that differ by design (a generated password) from the comparison, while still checking they stay stable.
//!
//! Next: [admission webhooks](super::admission).
