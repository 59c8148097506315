//! The built-in kinds of Kubernetes 1.35 that kube-apiserver serves by default, one file per few API groups.
//!
//! Group, version, kind, plural and scope come from k8s-openapi's `Resource` constants ([`builtin`]); each
//! file adds only what k8s-openapi does not know: short names, categories, subresources, whether
//! `metadata.generation` is kept, field selectors, and the odd verb a kind lacks. The table was checked
//! against `kubectl api-resources` on kube-apiserver v1.35 (the differential suite keeps it so).

use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::ResourceType;

mod cluster;
mod core;
mod extensions;
mod networking;
mod workloads;

/// Every built-in kind, in no particular order (the registry sorts them).
pub(super) fn all() -> Vec<ResourceType> {
    let mut out = Vec::new();
    out.extend(core::kinds());
    out.extend(workloads::kinds());
    out.extend(networking::kinds());
    out.extend(cluster::kinds());
    out.extend(extensions::kinds());
    out
}

/// The scope of a k8s-openapi resource, as a value.
pub(super) trait Scope {
    /// Whether objects live in namespaces.
    const NAMESPACED: bool;
}

impl Scope for NamespaceResourceScope {
    const NAMESPACED: bool = true;
}

impl Scope for ClusterResourceScope {
    const NAMESPACED: bool = false;
}

/// The kind `K` as k8s-openapi describes it, checked on writes by a round trip through `K`.
pub(super) fn builtin<K>() -> ResourceType
where
    K: k8s_openapi::Resource
        + Serialize
        + DeserializeOwned
        + k8s_openapi::schemars::JsonSchema
        + 'static,
    K::Scope: Scope,
{
    ResourceType::new(
        K::GROUP,
        K::VERSION,
        K::KIND,
        K::URL_PATH_SEGMENT,
        <K::Scope as Scope>::NAMESPACED,
    )
    .typed(typed_check::<K>)
    .openapi(super::OpenApiSource::Builtin(|generator| {
        generator.subschema_for::<K>()
    }))
}

/// Checks and normalizes an object by round-tripping it through its k8s-openapi type (fields the type does
/// not know are dropped, as kube-apiserver prunes them), then drops what Go's `omitempty` would and puts its
/// quantities in canonical form.
fn typed_check<K: Serialize + DeserializeOwned + k8s_openapi::schemars::JsonSchema + 'static>(
    v: Value,
) -> Result<Value, String> {
    round_trip::<K>(v).map(|out| {
        let mut out = crate::omit_empty::omit_empty(out, round_trip::<K>);
        crate::quantity::canonicalize::<K>(&mut out);
        out
    })
}

fn round_trip<K: Serialize + DeserializeOwned>(v: Value) -> Result<Value, String> {
    let typed: K = serde_json::from_value(v).map_err(|e| e.to_string())?;
    serde_json::to_value(typed).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn every_kind_is_listed_once() {
        let kinds = all();
        let keys: BTreeSet<(String, String, String)> = kinds
            .iter()
            .map(|t| (t.group.clone(), t.version.clone(), t.plural.clone()))
            .collect();
        assert_eq!(keys.len(), kinds.len(), "a kind is listed twice");
    }

    #[test]
    fn scope_and_names_come_from_k8s_openapi() {
        let quota = builtin::<k8s_openapi::api::core::v1::ResourceQuota>();
        assert_eq!(
            (
                quota.group.as_str(),
                quota.version.as_str(),
                quota.kind.as_str()
            ),
            ("", "v1", "ResourceQuota")
        );
        assert_eq!(quota.plural, "resourcequotas");
        assert!(quota.namespaced);
        let class = builtin::<k8s_openapi::api::storage::v1::StorageClass>();
        assert_eq!(class.group, "storage.k8s.io");
        assert!(!class.namespaced);
    }
}
