//! The built-in kinds of Kubernetes 1.35 that kube-apiserver serves by default, one file per few API groups.
//!
//! Group, version, kind, plural and scope come from k8s-openapi's `Resource` constants (`typed.rs`); each
//! file adds only what k8s-openapi does not know: short names, categories, subresources, whether
//! `metadata.generation` is kept, field selectors, and the odd verb a kind lacks. The table was checked
//! against `kubectl api-resources` on kube-apiserver v1.35 (the differential suite keeps it so).

use super::resource_type::ResourceType;

mod cluster;
mod core;
mod extensions;
mod networking;
mod reviews;
mod typed;
mod workloads;

/// Every built-in kind, in no particular order (the registry sorts them).
pub(super) fn all() -> Vec<ResourceType> {
    let mut out = Vec::new();
    out.extend(core::kinds());
    out.extend(workloads::kinds());
    out.extend(networking::kinds());
    out.extend(cluster::kinds());
    out.extend(extensions::kinds());
    out.extend(reviews::kinds());
    out
}

#[cfg(test)]
mod tests {
    use super::typed::builtin;
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
