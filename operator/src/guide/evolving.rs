//! # 6. Changing the API
//!
//! Users keep objects of a kind for years, so its API changes carefully. Within one version, these changes keep
//! every stored object valid:
//!
//! - **A new optional field**, with a default the operator applies when it is absent: `Option<T>` with
//!   `#[serde(default, skip_serializing_if = "Option::is_none")]`, or a plain field with
//!   `#[serde(default = "f")]`, which also puts the default in the schema, so the API server fills it on
//!   writes. Objects stored before the field existed are read with the default.
//! - **A looser rule** (a wider range, an optional field that was required).
//!
//! A stricter schema does not reach objects already stored: kube-apiserver validates an object when it is
//! written, not when the schema changes. The reconciler sees old objects as they are, so a value the new rule
//! refuses must be an [invalid spec](crate::Error::invalid_spec) in the reconciler too, not a panic or a
//! silent skip:
//!
//! ```
//! use kubewright::prelude::*;
//!
//! #[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
//! #[kube(group = "example.dev", version = "v1", kind = "Web", namespaced)]
//! #[serde(rename_all = "camelCase")]
//! pub struct WebSpec {
//!     pub image: String,
//!     /// Added later: objects stored before have none, and read as 1.
//!     #[serde(default = "one")]
//!     #[schemars(range(min = 1, max = 50))]
//!     pub replicas: i32,
//! }
//!
//! fn one() -> i32 {
//!     1
//! }
//!
//! /// The rule the schema now enforces on writes, checked again for objects stored before it.
//! fn replicas(web: &Web) -> kubewright::Result<i32> {
//!     match web.spec.replicas {
//!         n @ 1..=50 => Ok(n),
//!         n => Err(kubewright::Error::invalid_spec("InvalidReplicas", format!("{n} is not within 1 to 50"))),
//!     }
//! }
//!
//! let stored_before: Web = serde_json::from_value(serde_json::json!({
//!     "apiVersion": "example.dev/v1", "kind": "Web",
//!     "metadata": {"name": "old"}, "spec": {"image": "nginx:1.27"},
//! }))?;
//! assert_eq!(replicas(&stored_before)?, 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Renaming or removing a field, or changing its type, needs a new version of the kind. Each version is its own
//! `#[derive(CustomResource)]` type; the one the reconciler works with (the hub) declares the others with
//! `#[version(..)]` and says which is stored, and `From`/`TryFrom` impls convert between each version and the
//! hub (see [`crate::conversion`] and the derive's reference, [`crate::attributes`]). The operator serves the
//! conversion webhook and installs the merged CRD; `migrate` then moves stored objects to the new storage version.
//!
//! The WebApp example does this: `v2` (`scale: {replicas, maxSurge}`, a list of `ports`) is the hub and stored,
//! `v1` (`replicas`, one `port`) is still served, deprecated with a warning:
//!
//! ```text
//! #[derive(CustomResource, Reconciler, ..)]
//! #[kube(group = "example.dev", version = "v2", kind = "WebApp", namespaced, status = "WebAppStatus")]
//! #[reconciler(storage)]
//! #[version(crate::webapp::v1::WebApp, deprecated = "example.dev/v1 WebApp is deprecated; use example.dev/v2")]
//! pub struct WebAppSpec { pub image: String, pub scale: Scale, pub ports: Vec<Port>, pub config_map: Option<String> }
//!
//! impl TryFrom<v1::WebApp> for WebApp { .. }   // replicas -> scale.replicas, port -> ports[0], the rest from the annotation
//! impl From<WebApp> for v1::WebApp { .. }      // what v1 cannot express -> the annotation example.dev/v2-fields
//! ```
//!
//! A conversion must lose nothing either way, or a client that reads at `v1` and writes back erases what only
//! `v2` holds. What the older version cannot express travels in an annotation of the older object, as
//! kube-apiserver keeps `autoscaling/v2` metrics on an `autoscaling/v1` HorizontalPodAutoscaler; a patch at `v1`
//! then changes only what `v1` shows. [`Versions::check_round_trip`](crate::conversion::Versions::check_round_trip)
//! checks the property; call it from property tests with objects of every version (the WebApp's are in
//! `tests/derive/webapp_versions.rs`, and `tests/src/webapp_upgrade.rs` plays the upgrade with kubectl on the
//! embedded cluster and on kube-apiserver). The source is `examples/src/webapp.rs` (the mapping),
//! `examples/src/webapp/v1.rs` and `examples/src/webapp_derive.rs`.
