//! The `apps` kinds' status rules (`ValidateDeploymentStatusUpdate`, `ValidateReplicaSetStatusUpdate`,
//! `ValidateStatefulSetStatusUpdate`, `ValidateDaemonSetStatusUpdate` of `pkg/apis/apps/validation`), run on
//! writes to their `status` subresource in place of the spec rules: counts not negative, not above
//! `status.replicas` (nor `availableReplicas` above `readyReplicas`), `collisionCount` never decremented.
//! Their metadata checks find nothing here: a status write keeps the stored metadata.

use serde_json::{Value, json};

use super::apps::Kind;
use super::field::{Errors, FieldError};

const NEGATIVE: &str = "must be greater than or equal to 0";
const ABOVE_REPLICAS: &str = "cannot be greater than status.replicas";

/// A status count as Go reads it: absent is 0.
fn count(status: &Value, name: &str) -> i64 {
    status[name].as_i64().unwrap_or(0)
}

/// `ValidateNonnegativeField` of each named count; `optional` ones only when set.
fn non_negative(status: &Value, names: &[&str], optional: &[&str]) -> Errors {
    names
        .iter()
        .filter(|n| !optional.contains(n) || !status[**n].is_null())
        .filter(|n| count(status, n) < 0)
        .map(|n| {
            FieldError::invalid_value(format!("status.{n}"), &json!(count(status, n)), NEGATIVE)
        })
        .collect()
}

/// Each named count above `status.replicas`, then `availableReplicas` above `readyReplicas` with `detail`.
fn not_above(status: &Value, names: &[&str], available_detail: &str) -> Errors {
    let replicas = count(status, "replicas");
    let mut errs: Errors = names
        .iter()
        .filter(|n| count(status, n) > replicas)
        .map(|n| {
            FieldError::invalid_value(
                format!("status.{n}"),
                &json!(count(status, n)),
                ABOVE_REPLICAS,
            )
        })
        .collect();
    let available = count(status, "availableReplicas");
    if available > count(status, "readyReplicas") {
        errs.push(FieldError::invalid_value(
            "status.availableReplicas",
            &json!(available),
            available_detail,
        ));
    }
    errs
}

/// `IsDecremented` of `collisionCount`.
fn collision_decremented(status: &Value, old_status: &Value) -> Errors {
    let (new, old) = (&status["collisionCount"], &old_status["collisionCount"]);
    let decremented = match (new.as_i64(), old.as_i64()) {
        (_, None) => false,
        (None, Some(_)) => true,
        (Some(n), Some(o)) => n < o,
    };
    if !decremented {
        return Errors::new();
    }
    vec![FieldError::invalid_value(
        "status.collisionCount",
        &json!(new.as_i64().unwrap_or(0)),
        "cannot be decremented",
    )]
}

/// The errors of a write to the `status` of an `apps` kind.
pub(super) fn status_update(kind: Kind, obj: &Value, old: &Value) -> Errors {
    let (status, old_status) = (&obj["status"], &old["status"]);
    let mut errs = Errors::new();
    match kind {
        Kind::Deployment => {
            errs.extend(non_negative(
                status,
                &[
                    "observedGeneration",
                    "replicas",
                    "updatedReplicas",
                    "readyReplicas",
                    "availableReplicas",
                    "unavailableReplicas",
                    "terminatingReplicas",
                    "collisionCount",
                ],
                &["terminatingReplicas", "collisionCount"],
            ));
            errs.extend(not_above(
                status,
                &["updatedReplicas", "readyReplicas", "availableReplicas"],
                "cannot be greater than readyReplicas",
            ));
            errs.extend(collision_decremented(status, old_status));
        }
        Kind::ReplicaSet => {
            errs.extend(non_negative(
                status,
                &[
                    "replicas",
                    "fullyLabeledReplicas",
                    "readyReplicas",
                    "availableReplicas",
                    "observedGeneration",
                    "terminatingReplicas",
                ],
                &["terminatingReplicas"],
            ));
            errs.extend(not_above(
                status,
                &["fullyLabeledReplicas", "readyReplicas", "availableReplicas"],
                "cannot be greater than readyReplicas",
            ));
        }
        Kind::StatefulSet => {
            errs.extend(non_negative(
                status,
                &[
                    "replicas",
                    "readyReplicas",
                    "currentReplicas",
                    "updatedReplicas",
                    "availableReplicas",
                    "observedGeneration",
                    "collisionCount",
                ],
                &["observedGeneration", "collisionCount"],
            ));
            errs.extend(not_above(
                status,
                &[
                    "readyReplicas",
                    "currentReplicas",
                    "updatedReplicas",
                    "availableReplicas",
                ],
                "cannot be greater than status.readyReplicas",
            ));
            errs.extend(collision_decremented(status, old_status));
        }
        Kind::DaemonSet => {
            errs.extend(non_negative(
                status,
                &[
                    "currentNumberScheduled",
                    "numberMisscheduled",
                    "desiredNumberScheduled",
                    "numberReady",
                    "observedGeneration",
                    "updatedNumberScheduled",
                    "numberAvailable",
                    "numberUnavailable",
                    "collisionCount",
                ],
                &["collisionCount"],
            ));
            errs.extend(collision_decremented(status, old_status));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(errs: &Errors) -> Vec<String> {
        errs.iter().map(|e| e.cause().field).collect()
    }

    #[test]
    fn counts_are_checked_in_kube_apiservers_order() {
        let obj = json!({"status": {"replicas": 1, "readyReplicas": 2, "availableReplicas": 3,
            "updatedReplicas": -1, "collisionCount": 1}});
        let old = json!({"status": {"collisionCount": 2}});
        assert_eq!(
            fields(&status_update(Kind::Deployment, &obj, &old)),
            [
                "status.updatedReplicas",
                "status.readyReplicas",
                "status.availableReplicas",
                "status.availableReplicas",
                "status.collisionCount"
            ]
        );
        assert!(status_update(Kind::DaemonSet, &json!({"status": {}}), &old).len() == 1);
        assert!(status_update(Kind::ReplicaSet, &json!({"status": {}}), &old).is_empty());
    }
}
