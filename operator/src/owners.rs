//! The parents an object names as its controller in its owner references: how a change to a child finds the
//! parent to reconcile.

use kube::Resource;
use kube::runtime::reflector::ObjectRef;

/// The parents named as controller in an object's owner references.
pub(crate) fn controller_parents<P: Resource<DynamicType = ()>>(
    api_version: &str,
    kind: &str,
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> Vec<ObjectRef<P>>
where
    P::Scope: 'static,
{
    let _ = (api_version, kind);
    meta.owner_references
        .iter()
        .flatten()
        .filter(|r| {
            r.controller == Some(true)
                && r.kind == P::kind(&())
                && r.api_version == P::api_version(&())
        })
        .map(|r| {
            let mut o = ObjectRef::new(&r.name);
            // A cluster-scoped parent's ref has no namespace, whatever its namespaced child's is.
            if let Some(ns) = meta.namespace.as_ref().filter(|_| {
                std::any::TypeId::of::<P::Scope>()
                    != std::any::TypeId::of::<k8s_openapi::ClusterResourceScope>()
            }) {
                o = o.within(ns);
            }
            o
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_namespaced_child_names_its_cluster_scoped_parent_without_a_namespace() {
        use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
        let meta = serde_json::from_value(json!({
            "name": "quota",
            "namespace": "team-dev",
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Namespace", "name": "team", "uid": "1", "controller": true},
                {"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "2", "controller": true},
            ],
        }))
        .unwrap();
        let cluster = controller_parents::<Namespace>("v1", "ResourceQuota", &meta);
        assert_eq!(cluster.len(), 1);
        assert_eq!(cluster[0].namespace, None);
        let namespaced = controller_parents::<ConfigMap>("v1", "ResourceQuota", &meta);
        assert_eq!(namespaced[0].namespace.as_deref(), Some("team-dev"));
    }
}
