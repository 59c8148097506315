//! # 5. Deploying
//!
//! ## The manifests
//!
//! The binary prints everything an installation needs: `cargo run -- manifests | kubectl apply -f -`. From the
//! kinds the operator reconciles it derives the CRDs, a Namespace, a ServiceAccount, the RBAC rules its
//! controllers need (each verb on each kind, from the wiring: no wildcard), and a Deployment running the image
//! given to [`App::image`](crate::cli::App::image) with the probes and metrics ports; `manifests --webhooks`
//! adds the webhook Service, certificate and configurations. The same manifests are a value in code:
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
//! # fn desired_config_map(note: &Note, _cx: &mut Context) -> kubewright::Result<Option<ConfigMap>> { Ok(None) }
//! let app = App::new("note-operator")
//!     .namespace("note-system")
//!     .image("example.dev/note-operator:1.0")
//!     .operate::<Note>();
//! let yaml = app.installation().to_yaml()?;
//! assert!(yaml.contains("kind: CustomResourceDefinition"));
//! assert!(yaml.contains("image: example.dev/note-operator:1.0"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## The image
//!
//! The operator is one binary; any image that holds it works: a two-stage `Dockerfile` that builds it with
//! `cargo build --release` and copies it into a small base image, with the binary as `ENTRYPOINT` and no
//! arguments, since the manifests' Deployment passes `--in-cluster` and the flags below.
//!
//! ## Flags
//!
//! The flags are controller-runtime's, so they read the same in any manifest (`--help` lists them all):
//!
//! - `--in-cluster` uses the pod's service account; `--kubeconfig FILE` (or `KUBECONFIG`) another cluster;
//!   without either, the embedded cluster (when built with the `testing` feature).
//! - `--leader-elect` elects a leader on a Lease before reconciling, so that only one replica writes;
//!   `--leader-elect-lease-duration`, `--leader-elect-renew-deadline` and `--leader-elect-retry-period` take Go
//!   durations (`15s`, `1m30s`).
//! - `--reconcile-timeout 30s` cancels a pass that runs longer (the parent's `Ready` condition names the step it
//!   was in, and the pass is retried with backoff); `--sync-period 10h` reconciles every parent at least that
//!   often even when nothing changed. Both are off by default.
//! - `--metrics-bind-address :8080` serves Prometheus metrics (controller-runtime's names:
//!   `controller_runtime_reconcile_total`, the work queue's depth and latencies);
//!   `--health-probe-bind-address :8081` serves `/healthz` and `/readyz` (ready once the caches have synced).
//! - `--namespace NS` (repeated) watches and caches only those namespaces; `manifests --namespace NS` then
//!   grants Roles there for the namespaced kinds.
//!
//! ```
//! # use kubewright::prelude::*;
//! let cli = App::new("note-operator").try_parse_from([
//!     "note-operator", "--leader-elect", "--leader-elect-lease-duration", "30s",
//!     "--metrics-bind-address", ":8080",
//! ])?;
//! # let _ = cli;
//! assert!(App::new("note-operator").try_parse_from(["note-operator", "--leader-elect-lease-duration", "30 sec"]).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! On a real cluster, [`kubewright-envtest`](crate::testing::envtest) (feature `envtest`) starts etcd and
//! kube-apiserver for integration tests, so the same scenario can run on the embedded cluster and on the real
//! control plane under the operator's own RBAC.
//!
//! Next: [changing the API](super::evolving).
