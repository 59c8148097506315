//! How a child is bound to its parent before the runtime writes it: the parent's namespace, the controller
//! owner reference, the owner label and the parent's shard label (a sharded operator), refusing what
//! Kubernetes' garbage collector would not collect.

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::{Resource, ResourceExt};

use super::child::is_cluster_scoped;
use crate::OWNER_LABEL;
use crate::error::{Error, Result};

/// The parent as a child is bound to it: typed ([`Owner::of`]) or as a pass's context knows it
/// ([`Owner::of_reference`]).
#[derive(Debug, Clone)]
pub(crate) struct Owner {
    kind: String,
    name: String,
    namespace: Option<String>,
    /// The controller owner reference; `None` while the parent has no uid.
    reference: Option<OwnerReference>,
    /// The parent's shard label, copied onto the child (see [`crate::sharding`]).
    shard: Option<String>,
}

impl Owner {
    /// A typed parent.
    pub(crate) fn of<P: Resource<DynamicType = ()>>(parent: &P) -> Self {
        Self {
            kind: P::kind(&()).into_owned(),
            name: parent.name_any(),
            namespace: parent.namespace(),
            reference: parent.controller_owner_ref(&()),
            shard: crate::sharding::shard_of(parent.meta()).map(str::to_string),
        }
    }

    /// The parent of a pass, as [`Context::parent`](crate::Context::parent) names it, with its shard label.
    pub(crate) fn of_reference(parent: &ObjectReference, shard: Option<&str>) -> Self {
        let reference = match (&parent.api_version, &parent.kind, &parent.name, &parent.uid) {
            (Some(api_version), Some(kind), Some(name), Some(uid)) => Some(OwnerReference {
                api_version: api_version.clone(),
                kind: kind.clone(),
                name: name.clone(),
                uid: uid.clone(),
                controller: Some(true),
                ..OwnerReference::default()
            }),
            _ => None,
        };
        Self {
            kind: parent.kind.clone().unwrap_or_default(),
            name: parent.name.clone().unwrap_or_default(),
            namespace: parent.namespace.clone(),
            reference,
            shard: shard.map(str::to_string),
        }
    }
}

/// Puts the child in the parent's namespace and sets the controller owner reference and the
/// [`OWNER_LABEL`](crate::OWNER_LABEL), refusing what Kubernetes would not collect: cross-namespace owners and
/// namespaced parents of cluster-scoped children.
pub(crate) fn prepare<P, C>(parent: &P, child: &mut C) -> Result<()>
where
    P: Resource<DynamicType = ()>,
    C: Resource<DynamicType = ()>,
    C::Scope: 'static,
{
    bind(&Owner::of(parent), child)
}

/// [`prepare`] for any [`Owner`].
pub(crate) fn bind<C>(owner: &Owner, child: &mut C) -> Result<()>
where
    C: Resource<DynamicType = ()>,
    C::Scope: 'static,
{
    let label = format!("{} {}", C::kind(&()), child_label(child));
    let what = || label.clone();
    let parent_ns = owner.namespace.clone();
    if is_cluster_scoped::<C>() {
        if parent_ns.is_some() {
            return Err(Error::Ownership {
                child: what(),
                reason: format!(
                    "a namespaced {} cannot own a cluster-scoped object",
                    owner.kind
                ),
            });
        }
        child.meta_mut().namespace = None;
    } else {
        match (child.namespace(), &parent_ns) {
            (Some(ns), Some(pns)) if &ns != pns => {
                return Err(Error::Ownership {
                    child: what(),
                    reason: format!("owner references cannot cross namespaces ({pns} to {ns})"),
                });
            }
            (Some(_), None) => {}
            _ => child.meta_mut().namespace = parent_ns.clone(),
        }
        if child.namespace().is_none() {
            return Err(Error::Ownership {
                child: what(),
                reason: "a namespaced child of a cluster-scoped parent needs a namespace".into(),
            });
        }
    }
    let Some(mut oref) = owner.reference.clone() else {
        return Err(Error::Ownership {
            child: what(),
            reason: format!("{} {} has no uid yet", owner.kind, owner.name),
        });
    };
    // The garbage collector's foreground deletion waits for children that block it.
    oref.block_owner_deletion = Some(true);
    let refs = child
        .meta_mut()
        .owner_references
        .get_or_insert_with(Vec::new);
    if refs
        .iter()
        .any(|r| r.controller == Some(true) && r.uid != oref.uid)
    {
        return Err(Error::Ownership {
            child: what(),
            reason: "the desired object already names another controller".into(),
        });
    }
    refs.retain(|r| r.uid != oref.uid);
    let uid = oref.uid.clone();
    refs.push(oref);
    // Lets a cache hold only the objects the runtime wrote as children (`CacheOptions::owned`).
    let labels = child.meta_mut().labels.get_or_insert_with(Default::default);
    labels.insert(OWNER_LABEL.to_string(), uid);
    // A sharded parent's children follow it: the member that owns it caches them by this label.
    if let Some(shard) = &owner.shard {
        labels.insert(crate::sharding::SHARD_LABEL.to_string(), shard.clone());
    }
    Ok(())
}

fn child_label<C: Resource>(child: &C) -> String {
    child
        .meta()
        .name
        .clone()
        .or_else(|| child.meta().generate_name.clone().map(|g| format!("{g}*")))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

    use super::*;
    use crate::sharding::SHARD_LABEL;

    fn object(name: &str, labels: &[(&str, &str)]) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.into()),
                namespace: Some("default".into()),
                uid: Some(format!("uid-{name}")),
                labels: Some(
                    labels
                        .iter()
                        .map(|(k, v)| (k.to_string(), v.to_string()))
                        .collect(),
                ),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    #[test]
    fn a_child_carries_its_owner_label_and_its_parents_shard_label() {
        let labels = |c: &ConfigMap| c.metadata.labels.clone().unwrap_or_default();
        let sharded = object("parent", &[(SHARD_LABEL, "replica-1")]);
        let mut child = object("child", &[]);
        prepare(&sharded, &mut child).unwrap();
        assert_eq!(labels(&child)[OWNER_LABEL], "uid-parent");
        assert_eq!(labels(&child)[SHARD_LABEL], "replica-1");
        // Bound through a pass's context, which knows the parent's shard.
        let mut child = object("child", &[]);
        let reference = sharded.object_ref(&());
        bind(
            &Owner::of_reference(&reference, Some("replica-1")),
            &mut child,
        )
        .unwrap();
        assert_eq!(labels(&child)[SHARD_LABEL], "replica-1");
        // An unsharded parent's child gets no shard label.
        let mut child = object("child", &[]);
        prepare(&object("plain", &[]), &mut child).unwrap();
        assert!(!labels(&child).contains_key(SHARD_LABEL));
    }
}
