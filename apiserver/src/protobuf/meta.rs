//! The apimachinery messages: `ObjectMeta`, `Time`, `LabelSelector`, `IntOrString`, `Quantity`.

use std::collections::BTreeMap;

use k8s_pb::apimachinery::pkg::api::resource::Quantity;
use k8s_pb::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, ObjectMeta, OwnerReference, Time,
};
use k8s_pb::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::Value;

use super::error::Result;
use super::json::{Obj, Ptr, list, opt, refuse};

/// `metadata`.
pub(super) fn object_meta(m: ObjectMeta) -> Result<Value> {
    let ObjectMeta {
        name,
        generate_name,
        namespace,
        self_link,
        uid,
        resource_version,
        generation,
        creation_timestamp,
        deletion_timestamp,
        deletion_grace_period_seconds,
        labels,
        annotations,
        owner_references,
        finalizers,
        managed_fields,
    } = m;
    refuse("metadata.managedFields", &managed_fields)?;
    Ok(Obj::new()
        .put("name", name)
        .put("generateName", generate_name)
        .put("namespace", namespace)
        .put("selfLink", self_link)
        .put("uid", uid)
        .put("resourceVersion", resource_version)
        .put("generation", generation)
        .put("creationTimestamp", creation_timestamp.and_then(time))
        .put("deletionTimestamp", deletion_timestamp.and_then(time))
        .put(
            "deletionGracePeriodSeconds",
            Ptr(deletion_grace_period_seconds),
        )
        .put("labels", labels)
        .put("annotations", annotations)
        .put("ownerReferences", list(owner_references, owner_reference)?)
        .put("finalizers", finalizers)
        .done())
}

fn owner_reference(r: OwnerReference) -> Result<Value> {
    let OwnerReference {
        api_version,
        kind,
        name,
        uid,
        controller,
        block_owner_deletion,
    } = r;
    Ok(Obj::new()
        .put("apiVersion", api_version)
        .put("kind", kind)
        .put("name", name)
        .put("uid", uid)
        .put("controller", Ptr(controller))
        .put("blockOwnerDeletion", Ptr(block_owner_deletion))
        .done())
}

/// A `metav1.Time` as JSON: RFC 3339 in seconds. The zero time is `None` (Go's JSON writes it as `null`):
/// apimachinery encodes it as an empty message, and Go's protobuf code as the seconds of January 1, year 1.
pub(super) fn time(t: Time) -> Option<Value> {
    let Time { seconds, nanos } = t;
    let seconds = seconds?;
    // Go's zero time.Time: January 1, year 1.
    const GO_ZERO: i64 = -62_135_596_800;
    if seconds == GO_ZERO && nanos.unwrap_or_default() == 0 {
        return None;
    }
    chrono::DateTime::from_timestamp(seconds, 0)
        .map(|t| Value::String(t.format("%Y-%m-%dT%H:%M:%SZ").to_string()))
}

/// `selector` of workloads.
pub(super) fn label_selector(s: LabelSelector) -> Result<Value> {
    let LabelSelector {
        match_labels,
        match_expressions,
    } = s;
    Ok(Obj::new()
        .put("matchLabels", match_labels)
        .put("matchExpressions", list(match_expressions, requirement)?)
        .done())
}

fn requirement(r: LabelSelectorRequirement) -> Result<Value> {
    let LabelSelectorRequirement {
        key,
        operator,
        values,
    } = r;
    Ok(Obj::new()
        .put("key", key)
        .put("operator", operator)
        .put("values", values)
        .done())
}

/// An optional label selector.
pub(super) fn opt_selector(s: Option<LabelSelector>) -> Result<Option<Value>> {
    opt(s, label_selector)
}

/// An `IntOrString`: `type` 0 is the integer, 1 the string.
pub(super) fn int_or_string(v: IntOrString) -> Result<Value> {
    let IntOrString {
        r#type,
        int_val,
        str_val,
    } = v;
    Ok(match r#type.unwrap_or_default() {
        1 => Value::String(str_val.unwrap_or_default()),
        _ => Value::from(int_val.unwrap_or_default()),
    })
}

/// A map of quantities (`resources.limits`), as strings.
pub(super) fn quantities(m: BTreeMap<String, Quantity>) -> Option<Value> {
    (!m.is_empty()).then(|| {
        Value::Object(
            m.into_iter()
                .map(|(k, Quantity { string })| (k, Value::String(string.unwrap_or_default())))
                .collect(),
        )
    })
}
