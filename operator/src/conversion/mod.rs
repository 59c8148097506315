//! Several versions of one kind: one Rust type per version, one of them the hub the reconciler works with,
//! conversions between each version and the hub, and the conversion webhook the API server calls.
//!
//! An author writes one `#[derive(CustomResource)]` type per version (kube's way), then declares them on a
//! [`Versions`] (or with `#[version(..)]` on the hub's `#[derive(Reconciler)]`, which writes this call):
//!
//! - [`Versions::new`] names the hub: the version the reconciler reads and writes;
//! - [`Versions::version`] adds another served version, converted to the hub with `TryFrom<V> for Hub` and
//!   back with `TryFrom<Hub> for V` (`From` implies both); [`Versions::version_with`] takes two plain
//!   functions instead;
//! - [`Versions::storage`] marks the version the API server stores (required: one, and only one);
//! - [`Versions::deprecated`] makes the API server answer requests to a version with a warning.
//!
//! [`Versions::crd`] merges the versions' CRDs into one (`spec.versions` with exactly one storage version);
//! [`Versions::convert`] converts one object to any version through the hub; and, as an
//! [`ErasedConversion`], the declaration answers ConversionReview v1 requests on the operator's webhook
//! server at [`ErasedConversion::path`]. [`webhook_conversion`] points a CRD's `spec.conversion` there, and
//! [`migrate`] (the `migrate` subcommand of an operator binary) moves stored objects to a new storage version.
//! In tests, [`Versions::check_round_trip`] shows a conversion loses nothing and [`Versions::check_crd`]
//! that a CRD kept elsewhere (a checked-in YAML, a chart) matches the Rust types.
//!
//! A conversion changes the object's `apiVersion` and its contents, never its identity: the converted object
//! always keeps the input's metadata (name, namespace, uid, resourceVersion, ...). Its `labels` and
//! `annotations` are the conversion's when it carried the input's metadata over (e.g. an annotation that keeps
//! a field the older version cannot express, as kube-apiserver does for `autoscaling/v1`); a conversion that
//! built new metadata leaves the input's.
//!
//! ```
//! use kube::CustomResource;
//! use kubewright::conversion::Versions;
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! mod v1 {
//!     use super::*;
//!     #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
//!     #[kube(group = "example.dev", version = "v1", kind = "Note", namespaced)]
//!     pub struct NoteSpec { pub text: String }
//! }
//! mod v2 {
//!     use super::*;
//!     #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
//!     #[kube(group = "example.dev", version = "v2", kind = "Note", namespaced)]
//!     pub struct NoteSpec { pub lines: Vec<String> }
//! }
//! impl From<v1::Note> for v2::Note {
//!     fn from(old: v1::Note) -> Self {
//!         let lines = old.spec.text.lines().map(String::from).collect();
//!         v2::Note { metadata: old.metadata, spec: v2::NoteSpec { lines } }
//!     }
//! }
//! impl From<v2::Note> for v1::Note {
//!     fn from(new: v2::Note) -> Self {
//!         v1::Note { metadata: new.metadata, spec: v1::NoteSpec { text: new.spec.lines.join("\n") } }
//!     }
//! }
//!
//! # fn main() {
//! let versions = Versions::<v2::Note>::new()
//!     .storage("v2")
//!     .version::<v1::Note>()
//!     .deprecated("v1", "example.dev/v1 Note is deprecated; use example.dev/v2");
//! let crd = versions.crd().unwrap();
//! assert_eq!(crd.spec.versions.len(), 2);
//!
//! let old = serde_json::json!({
//!     "apiVersion": "example.dev/v1", "kind": "Note",
//!     "metadata": {"name": "a", "namespace": "default"},
//!     "spec": {"text": "one\ntwo"},
//! });
//! let new = versions.convert(old, "example.dev/v2").unwrap();
//! assert_eq!(new["spec"]["lines"], serde_json::json!(["one", "two"]));
//! # }
//! ```

mod check;
mod crd;
mod migrate;
mod review;

use std::fmt::Display;
use std::marker::PhantomData;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::{CustomResourceExt, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use check::CheckError;
pub use crd::webhook_conversion;
pub use migrate::{MigrateError, Migrated, migrate};
pub use review::ErasedConversion;

/// Why a declaration of versions does not make a CRD.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VersionsError {
    /// No version is marked as stored.
    #[error("{kind}: no storage version (mark one with `storage`)")]
    NoStorage {
        /// The kind.
        kind: String,
    },
    /// [`Versions::storage`] or [`Versions::deprecated`] names a version that is not declared.
    #[error("{kind}: version {version} is not declared (declared: {declared})")]
    Unknown {
        /// The kind.
        kind: String,
        /// The version named.
        version: String,
        /// The versions declared.
        declared: String,
    },
    /// Two types declare the same version.
    #[error("{kind}: version {version} is declared twice")]
    Twice {
        /// The kind.
        kind: String,
        /// The version.
        version: String,
    },
    /// kube could not merge the versions' CRDs (different group, kind or scope).
    #[error("{kind}: cannot merge the versions' CRDs: {reason}")]
    Merge {
        /// The kind.
        kind: String,
        /// kube's reason.
        reason: String,
    },
}

/// Why one object could not be converted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConversionError {
    /// The object's `apiVersion` (or the one asked for) is not a declared version of the kind.
    #[error("{api_version} is not a version of {kind} (served: {served})")]
    UnknownVersion {
        /// The kind.
        kind: String,
        /// The API version asked for or found.
        api_version: String,
        /// The declared API versions.
        served: String,
    },
    /// The object does not read as its version's type.
    #[error("cannot read the object as {api_version} {kind}: {reason}")]
    Read {
        /// The kind.
        kind: String,
        /// Its API version.
        api_version: String,
        /// serde's message.
        reason: String,
    },
    /// The author's conversion returned an error (its `Display`) or panicked.
    #[error("converting from {from} to {to}: {reason}")]
    Failed {
        /// The API version converted from.
        from: String,
        /// The API version converted to.
        to: String,
        /// The conversion's message.
        reason: String,
    },
}

/// A JSON object of one version to the hub's JSON, or back.
type Step = Arc<dyn Fn(Value) -> Result<Value, ConversionError> + Send + Sync>;

/// One declared version other than the hub.
#[derive(Clone)]
struct Spoke {
    api_version: String,
    crd: CustomResourceDefinition,
    to_hub: Step,
    from_hub: Step,
}

/// The versions of kind `Hub`'s resource: the hub (the version the reconciler works with), the other served
/// versions with their conversions, the storage version and deprecations. See the [module](self).
pub struct Versions<Hub> {
    spokes: Vec<Spoke>,
    storage: Option<String>,
    deprecated: Vec<(String, Option<String>)>,
    hub: PhantomData<fn() -> Hub>,
}

impl<Hub> Clone for Versions<Hub> {
    fn clone(&self) -> Self {
        Versions {
            spokes: self.spokes.clone(),
            storage: self.storage.clone(),
            deprecated: self.deprecated.clone(),
            hub: PhantomData,
        }
    }
}

impl<Hub> std::fmt::Debug for Versions<Hub> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Versions")
            .field(
                "spokes",
                &self
                    .spokes
                    .iter()
                    .map(|s| s.api_version.as_str())
                    .collect::<Vec<_>>(),
            )
            .field("storage", &self.storage)
            .finish_non_exhaustive()
    }
}

/// What a version's type must be to be converted: a custom resource kube derived, readable and writable as
/// JSON.
pub trait VersionKind:
    Resource<DynamicType = ()> + CustomResourceExt + Serialize + DeserializeOwned + 'static
{
}

impl<K> VersionKind for K where
    K: Resource<DynamicType = ()> + CustomResourceExt + Serialize + DeserializeOwned + 'static
{
}

impl<Hub: VersionKind> Default for Versions<Hub> {
    fn default() -> Self {
        Self::new()
    }
}

impl<Hub: VersionKind> Versions<Hub> {
    /// `Hub`'s version alone; add the others with [`version`](Self::version).
    pub fn new() -> Self {
        Versions {
            spokes: Vec::new(),
            storage: None,
            deprecated: Vec::new(),
            hub: PhantomData,
        }
    }

    /// Serves `V`'s version too, converted with `Hub: TryFrom<V>` and `V: TryFrom<Hub>` (a `From` impl gives
    /// both); a conversion's error is its `Display`.
    #[must_use]
    pub fn version<V>(self) -> Self
    where
        V: VersionKind,
        Hub: TryFrom<V>,
        <Hub as TryFrom<V>>::Error: Display,
        V: TryFrom<Hub>,
        <V as TryFrom<Hub>>::Error: Display,
    {
        self.version_with::<V, _, _, _, _>(Hub::try_from, V::try_from)
    }

    /// Serves `V`'s version too, converted to the hub with `to_hub` and back with `from_hub`.
    #[must_use]
    pub fn version_with<V, E1, E2, F1, F2>(mut self, to_hub: F1, from_hub: F2) -> Self
    where
        V: VersionKind,
        E1: Display,
        E2: Display,
        F1: Fn(V) -> Result<Hub, E1> + Send + Sync + 'static,
        F2: Fn(Hub) -> Result<V, E2> + Send + Sync + 'static,
    {
        let (v_api, hub_api) = (api_version::<V>(), api_version::<Hub>());
        let (a, b) = (v_api.clone(), hub_api.clone());
        let to: Step = Arc::new(move |object| typed_step::<V, Hub, E1>(object, &a, &b, &to_hub));
        let (a, b) = (hub_api, v_api.clone());
        let from: Step =
            Arc::new(move |object| typed_step::<Hub, V, E2>(object, &a, &b, &from_hub));
        self.spokes.push(Spoke {
            api_version: v_api,
            crd: V::crd(),
            to_hub: to,
            from_hub: from,
        });
        self
    }

    /// The version the API server stores objects at (`v1`, the hub's or another declared one).
    #[must_use]
    pub fn storage(mut self, version: impl Into<String>) -> Self {
        self.storage = Some(version.into());
        self
    }

    /// Marks `version` deprecated: the API server answers every request to it with `warning` (an empty
    /// warning: kube-apiserver's default, "GROUP/VERSION KIND is deprecated").
    #[must_use]
    pub fn deprecated(mut self, version: impl Into<String>, warning: impl Into<String>) -> Self {
        let warning = warning.into();
        self.deprecated
            .push((version.into(), (!warning.is_empty()).then_some(warning)));
        self
    }

    /// The API versions declared, the hub's first.
    pub fn api_versions(&self) -> Vec<String> {
        std::iter::once(api_version::<Hub>())
            .chain(self.spokes.iter().map(|s| s.api_version.clone()))
            .collect()
    }

    /// The merged CRD: every declared version served, exactly one stored, deprecations set. Its
    /// `spec.conversion` is left to [`webhook_conversion`], which points it at a served webhook.
    pub fn crd(&self) -> Result<CustomResourceDefinition, VersionsError> {
        let kind = Hub::kind(&()).into_owned();
        let names: Vec<String> = self
            .api_versions()
            .iter()
            .map(|a| version_of(a).to_string())
            .collect();
        for (i, name) in names.iter().enumerate() {
            if names[..i].contains(name) {
                return Err(VersionsError::Twice {
                    kind,
                    version: name.clone(),
                });
            }
        }
        let unknown = |version: &str| VersionsError::Unknown {
            kind: kind.clone(),
            version: version.to_string(),
            declared: names.join(", "),
        };
        let Some(storage) = &self.storage else {
            return Err(VersionsError::NoStorage { kind });
        };
        if !names.contains(storage) {
            return Err(unknown(storage));
        }
        let crds = std::iter::once(Hub::crd())
            .chain(self.spokes.iter().map(|s| s.crd.clone()))
            .collect();
        let mut merged =
            kube::core::crd::merge_crds(crds, storage).map_err(|e| VersionsError::Merge {
                kind: kind.clone(),
                reason: e.to_string(),
            })?;
        for (version, warning) in &self.deprecated {
            let Some(v) = merged.spec.versions.iter_mut().find(|v| &v.name == version) else {
                return Err(unknown(version));
            };
            v.deprecated = Some(true);
            v.deprecation_warning = warning.clone();
        }
        Ok(merged)
    }

    /// Converts `object` (JSON of any declared version) to `desired_api_version`, through the hub.
    pub fn convert(
        &self,
        object: Value,
        desired_api_version: &str,
    ) -> Result<Value, ConversionError> {
        let hub = api_version::<Hub>();
        let from = object["apiVersion"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if from == desired_api_version {
            return Ok(object);
        }
        let spoke = |api_version: &str| -> Result<Option<&Spoke>, ConversionError> {
            if api_version == hub {
                return Ok(None);
            }
            self.spokes
                .iter()
                .find(|s| s.api_version == api_version)
                .map(Some)
                .ok_or_else(|| ConversionError::UnknownVersion {
                    kind: Hub::kind(&()).into_owned(),
                    api_version: api_version.to_string(),
                    served: self.api_versions().join(", "),
                })
        };
        let (source, target) = (spoke(&from)?, spoke(desired_api_version)?);
        let metadata = object.get("metadata").cloned();
        let at_hub = match source {
            Some(s) => (s.to_hub)(object)?,
            None => object,
        };
        let converted = match target {
            Some(t) => (t.from_hub)(at_hub)?,
            None => at_hub,
        };
        Ok(keep_identity(converted, metadata, desired_api_version))
    }
}

impl<Hub> Versions<Hub> {
    /// Whether more than one version is declared (only then does the API server need a webhook).
    pub fn converts(&self) -> bool {
        !self.spokes.is_empty()
    }
}

/// `GROUP/VERSION` of `K`.
fn api_version<K: Resource<DynamicType = ()>>() -> String {
    K::api_version(&()).into_owned()
}

/// `VERSION` of `GROUP/VERSION`.
fn version_of(api_version: &str) -> &str {
    api_version.rsplit('/').next().unwrap_or(api_version)
}

/// Reads `object` as `A`, converts it with `f` (catching a panic), writes the `B` as JSON.
fn typed_step<A, B, E>(
    object: Value,
    from: &str,
    to: &str,
    f: &(dyn Fn(A) -> Result<B, E> + Send + Sync),
) -> Result<Value, ConversionError>
where
    A: VersionKind,
    B: Serialize,
    E: Display,
{
    let typed: A = serde_json::from_value(object).map_err(|e| ConversionError::Read {
        kind: A::kind(&()).into_owned(),
        api_version: from.to_string(),
        reason: e.to_string(),
    })?;
    let failed = |reason: String| ConversionError::Failed {
        from: from.to_string(),
        to: to.to_string(),
        reason,
    };
    let converted = catch_unwind(AssertUnwindSafe(|| f(typed)))
        .map_err(|panic| {
            failed(format!(
                "the conversion panicked: {}",
                crate::limits::panic_message(panic.as_ref())
            ))
        })?
        .map_err(|e| failed(e.to_string()))?;
    serde_json::to_value(converted).map_err(|e| failed(format!("cannot write the result: {e}")))
}

/// The converted object with the input's metadata and `apiVersion`. A conversion that carried the metadata
/// over (its result has the object's name) decides the labels and annotations, absent meaning none; one that
/// built new metadata (no name) leaves the input's.
fn keep_identity(mut converted: Value, metadata: Option<Value>, api_version: &str) -> Value {
    if let Some(Value::Object(mut meta)) = metadata {
        let carried = converted.get("metadata").filter(|m| {
            m.get("name")
                .and_then(Value::as_str)
                .is_some_and(|n| !n.is_empty())
        });
        if let Some(out) = carried {
            for key in ["labels", "annotations"] {
                match out.get(key).filter(|v| !v.is_null()) {
                    Some(v) => meta.insert(key.into(), v.clone()),
                    None => meta.remove(key),
                };
            }
        }
        converted["metadata"] = Value::Object(meta);
    }
    converted["apiVersion"] = Value::String(api_version.to_string());
    converted
}

#[cfg(test)]
mod tests;
