//! # 2. Children, status and invalid specs
//!
//! ## What a child step does
//!
//! For each `#[child(desired = f)]`, every pass calls `f` and makes the cluster match its answer:
//!
//! - `Ok(Some(child))`: the child is created when missing, with a controller owner reference to the parent
//!   (so Kubernetes' garbage collector deletes it with the parent) and the owner label the caches use; it is
//!   written again only when it drifted from `child` (quantities compared by value: `1Gi` is `1024Mi`), by
//!   server-side apply, so fields other controllers set are left alone. Each write is one event on the parent
//!   (`Created ConfigMap default/hello`).
//! - `Ok(None)`: the child is not wanted; one the parent controls is deleted.
//! - An object of that name that the parent does not control is never taken over: the condition says
//!   `NotOwned`, and nothing is written.
//!
//! The child's condition (`<Kind>Ready`) is `True` once the child is ready: a Deployment once its available
//! replicas reach the desired count for the current generation, a StatefulSet, DaemonSet or Job likewise (see
//! [`readiness`](crate::readiness)), other kinds once written; `ready = r` on the attribute decides instead.
//! `Ready` is `True` only when every condition under it is.
//!
//! ## Reflecting children into the status
//!
//! `reflect = r` gives the status what the pass saw of the child, whatever happened to it
//! ([`ChildOutcome`](crate::ChildOutcome): created, updated, unchanged, being deleted, deleted, absent, held by
//! another controller, failed), and
//! `reflect_name = field` stores the child's name in `status.field`. A spec that cannot be realised is an
//! [invalid spec](crate::Error::invalid_spec): `Ready=False` with the reason, one Warning event, no child
//! touched, and no retry until the spec changes.
//!
//! ```
//! use k8s_openapi::api::apps::v1::Deployment;
//! use kubewright::prelude::*;
//!
//! #[derive(CustomResource, Reconciler, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
//! #[kube(group = "example.dev", version = "v1", kind = "Web", namespaced, status = "WebStatus")]
//! #[child(desired = desired_deployment, reflect = reflect_deployment, reflect_name = deployment)]
//! pub struct WebSpec {
//!     pub image: String,
//!     pub replicas: i32,
//! }
//!
//! #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, ReconcilerStatus)]
//! #[serde(rename_all = "camelCase", default)]
//! pub struct WebStatus {
//!     pub observed_generation: Option<i64>,
//!     pub conditions: Vec<Condition>,
//!     /// The Deployment's name (`reflect_name`).
//!     pub deployment: Option<String>,
//!     /// Pods available, as the Deployment reports them.
//!     pub available_replicas: Option<i32>,
//! }
//!
//! fn desired_deployment(web: &Web, _cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
//!     if !web.spec.image.contains(':') {
//!         // Ready=False, reason ImageNeedsTag, one Warning event; the Deployment is left as it is.
//!         return Err(kubewright::Error::invalid_spec("ImageNeedsTag", "spec.image needs a tag"));
//!     }
//!     let labels: BTreeMap<String, String> = object!({ "app": web.name_any() });
//!     Ok(Some(object!(Deployment {
//!         metadata: { name: web.name_any() },
//!         spec: {
//!             replicas: web.spec.replicas,
//!             selector: { match_labels: labels.clone() },
//!             template: {
//!                 metadata: { labels },
//!                 spec: { containers: [{ name: "web", image: &web.spec.image }] },
//!             },
//!         },
//!     })))
//! }
//!
//! fn reflect_deployment(status: &mut WebStatus, outcome: &ChildOutcome<Deployment>) {
//!     outcome.reflect_into(&mut status.available_replicas, |d| d.status.as_ref()?.available_replicas);
//! }
//!
//! // Desired functions and reflections are plain functions: call them.
//! let mut status = WebStatus::default();
//! let mut deployment = Deployment::default();
//! deployment.status = Some(object!(k8s_openapi::api::apps::v1::DeploymentStatus { available_replicas: 2 }));
//! reflect_deployment(&mut status, &ChildOutcome::Unchanged(deployment));
//! assert_eq!(status.available_replicas, Some(2));
//! ```
//!
//! ## Several children of one kind
//!
//! `#[children(desired = f, id = g)]` keeps a set: `f` returns every child that should exist, `g` names each
//! one's identity (its name, usually), and children no longer listed are deleted, or kept by a `retain` rule
//! ([`Retention`](crate::Retention): a history of finished Jobs, say). `strategy = "create"` creates each child
//! once and never writes it again, for run-once children such as Jobs; [`schedule`](crate::schedule) adds the
//! rules of runs on a cron schedule.
//!
//! ## Objects the spec names
//!
//! `#[watches(ConfigMap, by = config_map)]` says that `spec.configMap` names a ConfigMap: a change to that
//! ConfigMap runs exactly the parents that name it, and a step reads it with
//! [`Context::referenced`](crate::Context::referenced) (a missing one is an invalid spec). `#[watches(Kind,
//! map = f)]` maps any change of a kind to the parents it concerns; `#[owns(Kind)]` watches children written
//! by hand. Everything a step reads through the [`Context`](crate::Context) comes from shared caches, and the
//! pass is run again when what it read changes.
//!
//! ## Kinds without Rust types, and kinds chosen at run time
//!
//! A child, a set's children, a watched, referenced or tracked kind can be another project's custom resource
//! with no Rust type: declare it by group/version, kind, plural and scope with [`kind!`](crate::kind) and name
//! [`Untyped<Marker>`](crate::untyped::Untyped) wherever a kind goes. When the kind is only known when the
//! operator runs (from a flag or a configuration file), declare a slot with
//! [`dynamic_kind!`](crate::dynamic_kind) instead and bind it to kube's `ApiResource` with
//! [`RunTimeKind::bind`](crate::untyped::RunTimeKind::bind) before building the reconciler
//! ([`attributes`](crate::attributes) shows both with the derive). A parent whose status is not the operator's
//! (a built-in kind, or such a kind) is [`Foreign<K>`](crate::Foreign). A kind the cluster does not serve, a
//! slot never bound, a scope that is not the cluster's and one kind named through two types in a reconciler
//! stop the operator at start; the last also fails a table test and an exploration.
//!
//! Next: [testing](super::testing).
