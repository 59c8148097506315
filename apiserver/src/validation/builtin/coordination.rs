//! The `coordination.k8s.io` group's rules (`pkg/apis/coordination/validation`): a Lease's duration (above
//! 0) and its transitions (not negative).

use serde_json::Value;

use super::field::{Errors, FieldError};
use super::meta;

/// `ValidateLease`, or on update `ValidateLeaseUpdate`: the metadata, then the spec.
pub(super) fn lease(obj: &Value, update: bool) -> Errors {
    let mut errs = if update {
        meta::object_update(obj)
    } else {
        meta::object(obj)
    };
    let spec = &obj["spec"];
    if spec["leaseDurationSeconds"]
        .as_i64()
        .is_some_and(|n| n <= 0)
    {
        errs.push(FieldError::invalid_value(
            "spec.leaseDurationSeconds",
            &spec["leaseDurationSeconds"],
            "must be greater than 0",
        ));
    }
    if spec["leaseTransitions"].as_i64().is_some_and(|n| n < 0) {
        errs.push(FieldError::invalid_value(
            "spec.leaseTransitions",
            &spec["leaseTransitions"],
            "must be greater than or equal to 0",
        ));
    }
    // (`preferredHolder` and `strategy` belong to the CoordinatedLeaderElection feature, off by default:
    // kube-apiserver drops them before validating.)
    errs
}
