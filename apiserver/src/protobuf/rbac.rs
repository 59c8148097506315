//! The RBAC kinds of `kubectl create role`, `clusterrole`, `rolebinding` and `clusterrolebinding`.

use k8s_pb::api::rbac::v1::{
    AggregationRule, ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef,
    Subject,
};
use serde_json::Value;

use super::error::Result;
use super::json::{Obj, list, opt};
use super::meta::{label_selector, object_meta};

/// A Role.
pub(super) fn role(m: Role) -> Result<Value> {
    let Role { metadata, rules } = m;
    Ok(Obj::new()
        .put("metadata", opt(metadata, object_meta)?)
        .put("rules", list(rules, policy_rule)?)
        .done())
}

/// A ClusterRole.
pub(super) fn cluster_role(m: ClusterRole) -> Result<Value> {
    let ClusterRole {
        metadata,
        rules,
        aggregation_rule,
    } = m;
    let aggregation_rule = opt(
        aggregation_rule,
        |AggregationRule {
             cluster_role_selectors,
         }| {
            Ok(Obj::new()
                .put(
                    "clusterRoleSelectors",
                    list(cluster_role_selectors, label_selector)?,
                )
                .done())
        },
    )?;
    Ok(Obj::new()
        .put("metadata", opt(metadata, object_meta)?)
        .put("rules", list(rules, policy_rule)?)
        .put("aggregationRule", aggregation_rule)
        .done())
}

fn policy_rule(r: PolicyRule) -> Result<Value> {
    let PolicyRule {
        verbs,
        api_groups,
        resources,
        resource_names,
        non_resource_ur_ls,
    } = r;
    Ok(Obj::new()
        .put("verbs", verbs)
        .put("apiGroups", api_groups)
        .put("resources", resources)
        .put("resourceNames", resource_names)
        .put("nonResourceURLs", non_resource_ur_ls)
        .done())
}

/// A RoleBinding.
pub(super) fn role_binding(m: RoleBinding) -> Result<Value> {
    let RoleBinding {
        metadata,
        subjects,
        role_ref,
    } = m;
    binding(metadata, subjects, role_ref)
}

/// A ClusterRoleBinding.
pub(super) fn cluster_role_binding(m: ClusterRoleBinding) -> Result<Value> {
    let ClusterRoleBinding {
        metadata,
        subjects,
        role_ref,
    } = m;
    binding(metadata, subjects, role_ref)
}

fn binding(
    metadata: Option<k8s_pb::apimachinery::pkg::apis::meta::v1::ObjectMeta>,
    subjects: Vec<Subject>,
    role_ref: Option<RoleRef>,
) -> Result<Value> {
    let role_ref = opt(
        role_ref,
        |RoleRef {
             api_group,
             kind,
             name,
         }| {
            Ok(Obj::new()
                .put("apiGroup", api_group)
                .put("kind", kind)
                .put("name", name)
                .done())
        },
    )?;
    Ok(Obj::new()
        .put("metadata", opt(metadata, object_meta)?)
        .put("subjects", list(subjects, subject)?)
        .put("roleRef", role_ref)
        .done())
}

fn subject(s: Subject) -> Result<Value> {
    let Subject {
        kind,
        api_group,
        name,
        namespace,
    } = s;
    Ok(Obj::new()
        .put("kind", kind)
        .put("apiGroup", api_group)
        .put("name", name)
        .put("namespace", namespace)
        .done())
}
