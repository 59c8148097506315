//! How a child is bound to its parent before the runtime writes it: the parent's namespace, the controller
//! owner reference and the owner label, refusing what Kubernetes' garbage collector would not collect.

use kube::{Resource, ResourceExt};

use super::child::is_cluster_scoped;
use crate::OWNER_LABEL;
use crate::error::{Error, Result};

/// Puts the child in the parent's namespace and sets the controller owner reference and the
/// [`OWNER_LABEL`](crate::OWNER_LABEL), refusing what Kubernetes would not collect: cross-namespace owners and
/// namespaced parents of cluster-scoped children.
pub(crate) fn prepare<P, C>(parent: &P, child: &mut C) -> Result<()>
where
    P: Resource<DynamicType = ()>,
    C: Resource<DynamicType = ()>,
    C::Scope: 'static,
{
    let label = format!("{} {}", C::kind(&()), child_label(child));
    let what = || label.clone();
    let parent_ns = parent.namespace();
    if is_cluster_scoped::<C>() {
        if parent_ns.is_some() {
            return Err(Error::Ownership {
                child: what(),
                reason: format!(
                    "a namespaced {} cannot own a cluster-scoped object",
                    P::kind(&())
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
    let Some(mut oref) = parent.controller_owner_ref(&()) else {
        return Err(Error::Ownership {
            child: what(),
            reason: format!("{} {} has no uid yet", P::kind(&()), parent.name_any()),
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
    child
        .meta_mut()
        .labels
        .get_or_insert_with(Default::default)
        .insert(OWNER_LABEL.to_string(), uid);
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
