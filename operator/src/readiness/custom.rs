//! The readiness of custom resources, by the conventions most of their controllers follow (kstatus: a
//! `Ready` condition, `observedGeneration`), and whether a kind reports a status at all.

use std::any::Any;

use serde::Serialize;
use serde_json::Value;

use super::{Readiness, builtin};
use crate::cache::{CachedKind, Caches};

/// The API groups Kubernetes itself serves (1.35); every other group is one of custom resources, including
/// the CRDs of Kubernetes' own projects (`gateway.networking.k8s.io`, `*.x-k8s.io`).
const BUILTIN_GROUPS: [&str; 23] = [
    "",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "apps",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "internal.apiserver.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "resource.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
    "storagemigration.k8s.io",
];

/// Whether `group` is one of the API groups Kubernetes itself serves (the core group `""`, `apps`, `batch`,
/// `networking.k8s.io`, ...); kinds of every other group are custom resources, the CRDs of Kubernetes' own
/// projects (`gateway.networking.k8s.io`, `cluster.x-k8s.io`) included.
///
/// ```
/// use kubewright::readiness::is_builtin_group;
/// assert!(is_builtin_group("") && is_builtin_group("apps") && is_builtin_group("rbac.authorization.k8s.io"));
/// assert!(!is_builtin_group("cert-manager.io") && !is_builtin_group("gateway.networking.k8s.io"));
/// ```
pub fn is_builtin_group(group: &str) -> bool {
    BUILTIN_GROUPS.binary_search(&group).is_ok()
}

/// The readiness of a custom resource from its JSON, by these rules, in this order:
///
/// 1. being deleted (`metadata.deletionTimestamp`): not ready, `Terminating`;
/// 2. no status (absent, `null` or `{}`): not ready, `AwaitingStatus`, when `reports_status` (its kind has a
///    `status` subresource, so its controller will report one), else ready: a kind with no status is ready
///    once written;
/// 3. `status.observedGeneration` set and not `metadata.generation`: not ready, `NotObserved`;
/// 4. a `Stalled` condition `True`: not ready, with that condition's reason (`Stalled` without one) and
///    message; then a `Reconciling` condition `True`: not ready, likewise (`Reconciling`);
/// 5. a `Ready` condition: ready when its status is `True` and its own `observedGeneration`, if set, is the
///    object's generation (else `NotObserved`); when `False` or `Unknown`, not ready with its reason
///    (`NotReady` without one) and message;
/// 6. a status with none of these: ready (what kstatus calls current).
///
/// ```
/// use kubewright::readiness::conventional;
/// use serde_json::json;
///
/// let mut cert = json!({"metadata": {"name": "web", "generation": 2}});
/// assert!(!conventional(&cert, true).is_ready()); // its controller has not spoken yet
/// cert["status"] = json!({"conditions": [{"type": "Ready", "status": "True", "observedGeneration": 1}]});
/// assert!(!conventional(&cert, true).is_ready()); // ready, but for the spec before this one
/// cert["status"]["conditions"][0]["observedGeneration"] = json!(2);
/// assert!(conventional(&cert, true).is_ready());
/// ```
pub fn conventional(object: &Value, reports_status: bool) -> Readiness {
    if !object["metadata"]["deletionTimestamp"].is_null() {
        return Readiness::not_ready("Terminating", "being deleted");
    }
    let status = &object["status"];
    if status.is_null() || status.as_object().is_some_and(|s| s.is_empty()) {
        return if reports_status {
            Readiness::not_ready(
                "AwaitingStatus",
                "its controller has not reported a status yet",
            )
        } else {
            Readiness::Ready
        };
    }
    let generation = object["metadata"]["generation"].as_i64();
    let not_observed = |observed: i64| {
        Readiness::not_ready(
            "NotObserved",
            format!(
                "its controller has observed generation {observed}, not {}",
                generation.unwrap_or_default()
            ),
        )
    };
    if let (Some(observed), Some(g)) = (status["observedGeneration"].as_i64(), generation)
        && observed != g
    {
        return not_observed(observed);
    }
    let conditions = status["conditions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    let condition = |type_: &str| conditions.iter().find(|c| c["type"] == type_);
    let text = |c: &Value, key: &str| c[key].as_str().unwrap_or_default().to_string();
    for (type_, reason) in [("Stalled", "Stalled"), ("Reconciling", "Reconciling")] {
        if let Some(c) = condition(type_).filter(|c| c["status"] == "True") {
            let given = text(c, "reason");
            let reason = if given.is_empty() {
                reason.to_string()
            } else {
                given
            };
            return Readiness::not_ready(reason, text(c, "message"));
        }
    }
    match condition("Ready") {
        Some(c) => {
            if let (Some(observed), Some(g)) = (c["observedGeneration"].as_i64(), generation)
                && observed != g
            {
                return not_observed(observed);
            }
            if c["status"] == "True" {
                return Readiness::Ready;
            }
            let given = text(c, "reason");
            let reason = if given.is_empty() {
                "NotReady".to_string()
            } else {
                given
            };
            let message = match text(c, "message") {
                m if m.is_empty() => {
                    format!("Ready is {}", c["status"].as_str().unwrap_or("unset"))
                }
                m => m,
            };
            Readiness::not_ready(reason, message)
        }
        None => Readiness::Ready,
    }
}

/// How a child step decides the readiness of a kind when its author gave no `ready` function: the built-in
/// rules for Kubernetes' own kinds ([`builtin`]), the conventions ([`conventional`]) for custom resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Convention {
    /// One of Kubernetes' own kinds.
    Builtin,
    /// A custom resource, whose kind has a `status` subresource or not.
    Custom { reports_status: bool },
}

impl Convention {
    /// The convention for kind `C`: for a custom resource, whether it reports a status is asked of the API
    /// server's discovery once per process ([`Caches::reports_status`]).
    pub(crate) async fn of<C: CachedKind>(caches: &Caches) -> Self {
        if is_builtin_group(&C::group(&())) {
            return Convention::Builtin;
        }
        Convention::Custom {
            reports_status: caches.reports_status::<C>().await,
        }
    }

    /// The readiness of `child` by this convention.
    pub(crate) fn readiness<C: Any + Serialize>(self, child: &C) -> Readiness {
        match self {
            Convention::Builtin => builtin(child),
            Convention::Custom { reports_status } => match serde_json::to_value(child) {
                Ok(object) => conventional(&object, reports_status),
                Err(e) => Readiness::not_ready("Unreadable", e.to_string()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(status: Value) -> Value {
        json!({"metadata": {"name": "x", "generation": 3}, "status": status})
    }

    #[test]
    fn the_rules_in_order() {
        let ready = |status: Value, reports| conventional(&object(status), reports);
        let reason = |r: Readiness| match r {
            Readiness::Ready => "Ready".to_string(),
            Readiness::NotReady { reason, .. } => reason,
        };
        assert_eq!(reason(ready(Value::Null, true)), "AwaitingStatus");
        assert_eq!(reason(ready(json!({}), true)), "AwaitingStatus");
        assert_eq!(reason(ready(Value::Null, false)), "Ready");
        assert_eq!(
            reason(ready(json!({"observedGeneration": 2}), false)),
            "NotObserved"
        );
        assert_eq!(
            reason(ready(json!({"observedGeneration": 3}), true)),
            "Ready"
        );
        let stalled = json!({"conditions": [
            {"type": "Ready", "status": "True"},
            {"type": "Stalled", "status": "True", "reason": "BadConfig", "message": "no issuer"},
        ]});
        assert_eq!(
            ready(stalled, true),
            Readiness::not_ready("BadConfig", "no issuer")
        );
        let reconciling = json!({"conditions": [{"type": "Reconciling", "status": "True"}]});
        assert_eq!(reason(ready(reconciling, true)), "Reconciling");
        let not_ready = json!({"conditions": [{"type": "Ready", "status": "False", "reason": "Pending", "message": "issuing"}]});
        assert_eq!(
            ready(not_ready, true),
            Readiness::not_ready("Pending", "issuing")
        );
        let unknown = json!({"conditions": [{"type": "Ready", "status": "Unknown"}]});
        assert_eq!(
            ready(unknown, true),
            Readiness::not_ready("NotReady", "Ready is Unknown")
        );
        let stale =
            json!({"conditions": [{"type": "Ready", "status": "True", "observedGeneration": 2}]});
        assert_eq!(reason(ready(stale, true)), "NotObserved");
        let phase_only = json!({"phase": "Running"});
        assert_eq!(reason(ready(phase_only, true)), "Ready");
        let mut deleting = object(json!({"conditions": [{"type": "Ready", "status": "True"}]}));
        deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        assert_eq!(reason(conventional(&deleting, true)), "Terminating");
    }

    #[test]
    fn builtin_groups() {
        assert!(BUILTIN_GROUPS.is_sorted());
        for g in ["", "apps", "batch", "networking.k8s.io", "storage.k8s.io"] {
            assert!(is_builtin_group(g), "{g}");
        }
        for g in [
            "example.dev",
            "cert-manager.io",
            "gateway.networking.k8s.io",
            "cluster.x-k8s.io",
        ] {
            assert!(!is_builtin_group(g), "{g}");
        }
    }
}
