//! The policy kinds kubectl's generators create: ResourceQuota (`create quota`), PodDisruptionBudget
//! (`create poddisruptionbudget`) and PriorityClass (`create priorityclass`).

use k8s_pb::api::core::v1::{
    ResourceQuota, ResourceQuotaSpec, ScopeSelector, ScopedResourceSelectorRequirement,
};
use k8s_pb::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
use k8s_pb::api::scheduling::v1::PriorityClass;
use serde_json::Value;

use super::error::Result;
use super::json::{Obj, Ptr, list, opt};
use super::meta::{int_or_string, object_meta, opt_selector, quantities};

/// A ResourceQuota.
pub(super) fn resource_quota(m: ResourceQuota) -> Result<Value> {
    let ResourceQuota {
        metadata,
        spec,
        // Reset on create and kept on update by kube-apiserver (see the module documentation).
        status: _,
    } = m;
    let spec = opt(
        spec,
        |ResourceQuotaSpec {
             hard,
             scopes,
             scope_selector,
         }| {
            Ok(Obj::new()
                .put("hard", quantities(hard))
                .put("scopes", scopes)
                .put("scopeSelector", opt(scope_selector, scope_selector_json)?)
                .done())
        },
    )?;
    Ok(Obj::new()
        .put("metadata", opt(metadata, object_meta)?)
        .put("spec", spec)
        .done())
}

fn scope_selector_json(s: ScopeSelector) -> Result<Value> {
    let ScopeSelector { match_expressions } = s;
    let requirement = |r: ScopedResourceSelectorRequirement| {
        let ScopedResourceSelectorRequirement {
            scope_name,
            operator,
            values,
        } = r;
        Ok(Obj::new()
            .put("scopeName", scope_name)
            .put("operator", operator)
            .put("values", values)
            .done())
    };
    Ok(Obj::new()
        .put("matchExpressions", list(match_expressions, requirement)?)
        .done())
}

/// A PodDisruptionBudget.
pub(super) fn pod_disruption_budget(m: PodDisruptionBudget) -> Result<Value> {
    let PodDisruptionBudget {
        metadata,
        spec,
        // Reset on create and kept on update by kube-apiserver (see the module documentation).
        status: _,
    } = m;
    let spec = opt(
        spec,
        |PodDisruptionBudgetSpec {
             min_available,
             selector,
             max_unavailable,
             unhealthy_pod_eviction_policy,
         }| {
            Ok(Obj::new()
                .put("minAvailable", opt(min_available, int_or_string)?)
                .put("selector", opt_selector(selector)?)
                .put("maxUnavailable", opt(max_unavailable, int_or_string)?)
                .put("unhealthyPodEvictionPolicy", unhealthy_pod_eviction_policy)
                .done())
        },
    )?;
    Ok(Obj::new()
        .put("metadata", opt(metadata, object_meta)?)
        .put("spec", spec)
        .done())
}

/// A PriorityClass: `value` is written even when zero (it is not `omitempty` in Go).
pub(super) fn priority_class(m: PriorityClass) -> Result<Value> {
    let PriorityClass {
        metadata,
        value,
        global_default,
        description,
        preemption_policy,
    } = m;
    Ok(Obj::new()
        .put("metadata", opt(metadata, object_meta)?)
        .put("value", Ptr(value))
        .put("globalDefault", global_default)
        .put("description", description)
        .put("preemptionPolicy", preemption_policy)
        .done())
}
