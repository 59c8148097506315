//! The RBAC rules a reconciler's wiring needs, each with its scope: a rule on a namespaced resource can be
//! granted by a Role in each watched namespace, one on a cluster-scoped resource only by a ClusterRole.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::rbac::v1::PolicyRule;
use kube::Resource;

use crate::cache::is_namespaced;
use crate::reconcilers::{Role, Wiring};

/// Verbs on the parent kind.
pub const PARENT_VERBS: &[&str] = &["get", "list", "watch"];
/// Extra verbs on the parent kind when a finalizer is added and removed.
pub const FINALIZER_VERBS: &[&str] = &["patch", "update"];
/// Verbs on the parent's status subresource.
pub const STATUS_VERBS: &[&str] = &["patch", "update"];
/// Verbs on owned (child) kinds.
pub const OWNED_VERBS: &[&str] = &[
    "get", "list", "watch", "create", "patch", "update", "delete",
];
/// Verbs on tracked and watched kinds.
pub const READ_VERBS: &[&str] = &["get", "list", "watch"];
/// Verbs on `events.k8s.io` events.
pub const EVENT_VERBS: &[&str] = &["create", "patch"];
/// Verbs on `coordination.k8s.io` leases, for leader election (what [`crate::leader`] does: read, create,
/// and update with the resourceVersion read).
pub const LEASE_VERBS: &[&str] = &["get", "create", "update"];
/// Verbs on the roles an operator's own RoleBindings and ClusterRoleBindings refer to.
pub const BIND_VERBS: &[&str] = &["bind"];

pub(super) const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// The role resources a binding of this owned resource may refer to.
fn bound_roles(group: &str, plural: &str) -> &'static [&'static str] {
    match (group, plural) {
        (RBAC_GROUP, "rolebindings") => &["roles", "clusterroles"],
        (RBAC_GROUP, "clusterrolebindings") => &["clusterroles"],
        _ => &[],
    }
}

/// The RBAC rules a reconciler of `P` with this wiring needs.
pub fn rules<P: Resource<DynamicType = ()>>(wiring: &Wiring) -> Vec<PolicyRule> {
    scoped_rules::<P>(wiring, true).into_rules(|_| true)
}

/// [`rules`], knowing which are on namespaced resources; `status`: whether the parent's status is written
/// (not for a [`Foreign`](crate::Foreign) parent).
pub(super) fn scoped_rules<P: Resource<DynamicType = ()>>(wiring: &Wiring, status: bool) -> Rules {
    let mut rules = Rules::default();
    let (group, plural) = (P::group(&()).into_owned(), P::plural(&()).into_owned());
    let parent_namespaced = is_namespaced::<P>();
    rules.add(&group, &plural, PARENT_VERBS, parent_namespaced);
    if !wiring.finalizers().is_empty() {
        rules.add(&group, &plural, FINALIZER_VERBS, parent_namespaced);
    }
    if status {
        rules.add(
            &group,
            &format!("{plural}/status"),
            STATUS_VERBS,
            parent_namespaced,
        );
    }
    for kind in wiring.kinds() {
        let verbs = match kind.role {
            Role::Owned => OWNED_VERBS,
            Role::Tracked | Role::Watched => READ_VERBS,
        };
        rules.add(&kind.group, &kind.plural, verbs, kind.namespaced);
        if kind.role == Role::Owned {
            // `bind` for a RoleBinding is checked in its namespace; for a ClusterRoleBinding, cluster-wide.
            for roles in bound_roles(&kind.group, &kind.plural) {
                rules.add(RBAC_GROUP, roles, BIND_VERBS, kind.namespaced);
            }
        }
    }
    rules.add("events.k8s.io", "events", EVENT_VERBS, true);
    rules
}

/// Verbs by (API group, resource), merged, and which (group, resource) may be granted per namespace.
#[derive(Debug, Default, Clone)]
pub(super) struct Rules {
    verbs: BTreeMap<(String, String), BTreeSet<String>>,
    /// Resources every rule of which can be granted by a Role (namespaced resources).
    namespaced: BTreeSet<(String, String)>,
    /// Resources some rule of which needs a ClusterRole.
    cluster: BTreeSet<(String, String)>,
}

impl Rules {
    pub(super) fn add(&mut self, group: &str, resource: &str, verbs: &[&str], namespaced: bool) {
        let key = (group.to_string(), resource.to_string());
        self.verbs
            .entry(key.clone())
            .or_default()
            .extend(verbs.iter().map(|v| v.to_string()));
        if namespaced {
            self.namespaced.insert(key);
        } else {
            self.cluster.insert(key);
        }
    }

    /// Whether rules on this resource can be granted per namespace.
    pub(super) fn is_namespaced(&self, group: &str, resource: &str) -> bool {
        let key = (group.to_string(), resource.to_string());
        self.namespaced.contains(&key) && !self.cluster.contains(&key)
    }

    pub(super) fn remove_verbs(&mut self, group: &str, resource: &str, verbs: &[&str]) {
        let key = (group.to_string(), resource.to_string());
        if let Some(have) = self.verbs.get_mut(&key) {
            have.retain(|v| !verbs.contains(&v.as_str()));
            if have.is_empty() {
                self.verbs.remove(&key);
            }
        }
    }

    pub(super) fn merge(&mut self, other: &Rules) {
        for ((group, resource), verbs) in &other.verbs {
            let verbs: Vec<&str> = verbs.iter().map(String::as_str).collect();
            let namespaced = other.is_namespaced(group, resource);
            self.add(group, resource, &verbs, namespaced);
        }
    }

    /// One rule per resource that `keep` accepts (given whether the resource is namespaced), verbs in the
    /// canonical order of [`OWNED_VERBS`].
    pub(super) fn into_rules(self, keep: impl Fn(bool) -> bool) -> Vec<PolicyRule> {
        let order = |v: &str| {
            OWNED_VERBS
                .iter()
                .position(|o| *o == v)
                .unwrap_or(OWNED_VERBS.len())
        };
        let namespaced = |k: &(String, String)| self.is_namespaced(&k.0, &k.1);
        self.verbs
            .iter()
            .filter(|(key, _)| keep(namespaced(key)))
            .map(|((group, resource), verbs)| {
                let mut verbs: Vec<String> = verbs.iter().cloned().collect();
                verbs.sort_by(|a, b| order(a).cmp(&order(b)).then(a.cmp(b)));
                PolicyRule {
                    api_groups: Some(vec![group.clone()]),
                    resources: Some(vec![resource.clone()]),
                    verbs,
                    ..Default::default()
                }
            })
            .collect()
    }
}
