//! # 6. Changing the API
//!
//! Users keep objects of a kind for years, so its API changes carefully. What this crate supports today is one
//! version per kind (`#[kube(version = "v1")]`); serving two versions with conversion between them is not
//! supported yet. Within one version, these changes keep every stored object valid:
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
//! Renaming or removing a field, or changing its type, breaks the objects users have; until versions and
//! conversion are supported, such a change needs a new kind, or a migration the users run.
