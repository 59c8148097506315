//! # 1. The first operator
//!
//! ## The crate
//!
//! An operator is an ordinary Rust crate: `cargo new note-operator`, then these dependencies in its
//! `Cargo.toml` (the crates are not published yet, so `kubewright` comes by path from a checkout):
//!
//! ```toml
//! [dependencies]
//! kubewright = { path = "../kubewright/operator", features = ["cli", "testing"] }
//! kube = { version = "5", features = ["runtime", "derive"] }
//! k8s-openapi = { version = "0.29", features = ["latest"] }
//! schemars = "1"
//! serde = { version = "1", features = ["derive"] }
//! serde_json = "1"
//! tokio = { version = "1", features = ["full"] }
//! ```
//!
//! `cli` is the command line of a whole operator ([`App`](crate::cli::App)); `testing` the embedded in-memory
//! cluster it runs on by default, and the test tools. The operator crate picks the Kubernetes version of
//! `k8s-openapi` (`latest` here); the libraries pick none.
//!
//! ## The first kind
//!
//! A kind is a spec struct with kube's `CustomResource` derive, a status struct, and plain functions. A `Note`
//! keeps a ConfigMap holding its text: `#[child(desired = f)]` names the function that says what the child
//! should be, and the runtime creates it, owns it (a controller owner reference, so it is deleted with the
//! Note), updates it when it drifts, and reports it in the status.
//!
//! ```
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kubewright::prelude::*;
//!
//! /// A text kept in a ConfigMap.
//! #[derive(CustomResource, Reconciler, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
//! #[kube(group = "example.dev", version = "v1", kind = "Note", namespaced, status = "NoteStatus")]
//! #[child(desired = desired_config_map)]
//! pub struct NoteSpec {
//!     /// The text.
//!     pub text: String,
//! }
//!
//! /// What the operator observed.
//! #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, ReconcilerStatus)]
//! #[serde(rename_all = "camelCase", default)]
//! pub struct NoteStatus {
//!     /// The generation this status describes.
//!     pub observed_generation: Option<i64>,
//!     /// `Ready`, and `ConfigMapReady` under it.
//!     pub conditions: Vec<Condition>,
//! }
//!
//! /// The ConfigMap of a Note: its name, holding the text.
//! fn desired_config_map(note: &Note, _cx: &mut Context) -> kubewright::Result<Option<ConfigMap>> {
//!     let text = note.spec.text.clone();
//!     Ok(Some(object!(ConfigMap { metadata: { name: note.name_any() }, data: { "text": text } })))
//! }
//!
//! // The derive gives `Note::reconciler()`, the controller's whole pass, and declares it for `App::operate`.
//! let reconciler = Note::reconciler();
//! # let _ = reconciler;
//! ```
//!
//! The status needs `observed_generation` and `conditions`; `#[derive(ReconcilerStatus)]` finds them. After
//! each pass the status says which generation of the spec it describes, and `Ready` rolls up one condition per
//! child (`ConfigMapReady`): `True` when every child is written and ready (a Deployment once its replicas are
//! available, a ConfigMap once written), `False` with the reason otherwise. [`object!`](crate::object!) writes
//! an object as the fields that are set.
//!
//! ## Running it
//!
//! [`App`](crate::cli::App) is the whole binary: its `main` is one call.
//!
//! ```no_run
//! # use kubewright::prelude::*;
//! # #[derive(CustomResource, Reconciler, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
//! # #[kube(group = "example.dev", version = "v1", kind = "Note", namespaced, status = "NoteStatus")]
//! # #[child(desired = desired_config_map)]
//! # pub struct NoteSpec { pub text: String }
//! # #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, ReconcilerStatus)]
//! # #[serde(rename_all = "camelCase", default)]
//! # pub struct NoteStatus { pub observed_generation: Option<i64>, pub conditions: Vec<Condition> }
//! # fn desired_config_map(note: &Note, _: &mut Context) -> kubewright::Result<Option<k8s_openapi::api::core::v1::ConfigMap>> { Ok(None) }
//! #[tokio::main(flavor = "current_thread")]
//! async fn main() -> Result<(), kubewright::cli::CliError> {
//!     App::new("note-operator")
//!         .namespace("note-system")
//!         .image("example.dev/note-operator:latest")
//!         .operate::<Note>()
//!         .run()
//!         .await
//! }
//! ```
//!
//! `cargo run` starts the embedded cluster, installs the CRD and runs the operator on it until Ctrl-C.
//! `cargo run -- --listen 127.0.0.1:8001 --write-kubeconfig kubeconfig` also serves the cluster to `kubectl`:
//! `kubectl --kubeconfig kubeconfig apply -f note.yaml`, then `... get notes,configmaps`, as on any cluster.
//! With `--kubeconfig FILE` (or `KUBECONFIG`) it runs on that cluster instead; `--help` lists the flags. A
//! sample object makes the first run show something: `.sample(note)` creates it on the embedded cluster.
//!
//! The same command line runs from a test: here the operator runs on the embedded cluster for a moment, with a
//! sample Note, and stops.
//!
//! ```
//! # use kubewright::prelude::*;
//! # #[derive(CustomResource, Reconciler, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
//! # #[kube(group = "example.dev", version = "v1", kind = "Note", namespaced, status = "NoteStatus")]
//! # #[child(desired = desired_config_map)]
//! # pub struct NoteSpec { pub text: String }
//! # #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, ReconcilerStatus)]
//! # #[serde(rename_all = "camelCase", default)]
//! # pub struct NoteStatus { pub observed_generation: Option<i64>, pub conditions: Vec<Condition> }
//! # fn desired_config_map(note: &Note, _: &mut Context) -> kubewright::Result<Option<k8s_openapi::api::core::v1::ConfigMap>> {
//! #     Ok(Some(object!(k8s_openapi::api::core::v1::ConfigMap { metadata: { name: note.name_any() } })))
//! # }
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut hello = Note::new("hello", NoteSpec { text: "hi".into() });
//! hello.metadata.namespace = Some("default".into());
//! let app = App::new("note-operator").operate::<Note>().sample(hello);
//! let cli = app.try_parse_from(["note-operator"])?;
//! let stop = tokio::time::sleep(std::time::Duration::from_secs(2));
//! app.run_with(cli, stop).await?;
//! # Ok(()) }
//! ```
//!
//! Next: [what a child step does](super::children).
