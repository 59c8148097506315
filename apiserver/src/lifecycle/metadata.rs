//! System metadata and the checks every write makes: finalizers, names, owner references, namespaces.

use serde_json::{Map, Value, json};

use super::options::{Part, WriteOpts};
use crate::error::{ApiError, ApiResult, Cause};
use crate::managed_fields::{self, Scope};
use crate::registry::ResourceType;
use crate::store::{ObjKey, State, StorageKey};
use crate::validation;

pub(super) fn meta(obj: &Value) -> &Value {
    &obj["metadata"]
}

pub(super) fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj["metadata"].is_object() {
        obj["metadata"] = json!({});
    }
    obj["metadata"]
        .as_object_mut()
        .expect("metadata was just made an object")
}

pub(super) fn finalizers(obj: &Value) -> Vec<String> {
    meta(obj)["finalizers"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

pub(super) fn set_finalizers_value(obj: &mut Value, list: &[String]) {
    let m = meta_mut(obj);
    if list.is_empty() {
        m.remove("finalizers");
    } else {
        m.insert("finalizers".into(), json!(list));
    }
}

pub(super) fn is_deleting(obj: &Value) -> bool {
    meta(obj)["deletionTimestamp"].is_string()
}

/// The content that `metadata.generation` tracks: everything but metadata (and status when it is a subresource),
/// and a Deployment's annotations.
pub(super) fn spec_content(rt: &ResourceType, obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Some(m) = v.as_object_mut() {
        // A Deployment's annotations are copied to its ReplicaSets, so kube-apiserver bumps its generation when
        // they change too (an empty map is no annotations).
        if rt.group == "apps" && rt.kind == "Deployment" {
            let annotations = m
                .get("metadata")
                .and_then(|meta| meta.get("annotations"))
                .filter(|a| a.as_object().is_some_and(|a| !a.is_empty()))
                .cloned();
            if let Some(annotations) = annotations {
                m.insert("metadata.annotations".into(), annotations);
            }
        }
        m.remove("metadata");
        m.remove("apiVersion");
        m.remove("kind");
        if rt.status_subresource || !rt.custom {
            m.remove("status");
        }
    }
    v
}

/// An object with what changes on every write (resourceVersion, managedFields times) removed, to detect no-ops.
pub(super) fn comparable(obj: &Value) -> Value {
    let mut v = obj.clone();
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("resourceVersion");
        if let Some(Value::Array(entries)) = m.get_mut("managedFields") {
            for e in entries.iter_mut() {
                if let Some(e) = e.as_object_mut() {
                    e.remove("time");
                }
            }
        }
    }
    v
}

/// The part of an object a write of `part` manages the fields of.
pub fn scope(rt: &ResourceType, part: Part) -> Scope {
    match part {
        Part::Status => Scope::Status,
        Part::Main if rt.status_subresource => Scope::Main,
        Part::Main => Scope::Whole,
        Part::Scale => Scope::Scale,
        Part::Finalize => Scope::Finalize,
    }
}

/// Schema information for field management.
pub fn field_schema(rt: &ResourceType) -> Box<dyn managed_fields::Schema + Send + Sync> {
    match (&rt.schema, rt.typed) {
        (Some(s), _) => Box::new(validation::CustomSchema(s.clone())),
        (None, Some(_)) => Box::new(validation::BuiltinSchema {
            group: rt.group.clone(),
            kind: rt.kind.clone(),
        }),
        (None, None) => Box::new(managed_fields::DeducedSchema),
    }
}

pub(super) fn name_causes(rt: &ResourceType, name: &str) -> Vec<Cause> {
    validation::name_messages(rt, name)
        .into_iter()
        .map(|msg| Cause {
            reason: "FieldValueInvalid".into(),
            message: format!("Invalid value: \"{name}\": {msg}"),
            field: "metadata.name".into(),
        })
        .collect()
}

pub(super) fn owner_reference_causes(obj: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let Some(refs) = meta(obj)["ownerReferences"].as_array() else {
        return causes;
    };
    let mut controllers = 0;
    for (i, r) in refs.iter().enumerate() {
        for field in ["apiVersion", "kind", "name", "uid"] {
            if r[field].as_str().is_none_or(str::is_empty) {
                causes.push(Cause {
                    reason: "FieldValueRequired".into(),
                    message: "Required value".into(),
                    field: format!("metadata.ownerReferences[{i}].{field}"),
                });
            }
        }
        if r["controller"].as_bool() == Some(true) {
            controllers += 1;
        }
    }
    if controllers > 1 {
        causes.push(Cause {
            reason: "FieldValueInvalid".into(),
            message: format!(
                "Invalid value: {}: Only one reference can have Controller set to true",
                Value::Array(refs.clone())
            ),
            field: "metadata.ownerReferences".into(),
        });
    }
    causes
}

/// Defaults, prunes and validates the content of a request-version object. Returns unknown-field warnings.
/// Drops empty `labels`, `annotations`, `finalizers` and `ownerReferences` from an object's metadata, as Go's
/// `omitempty` does when kube-apiserver decodes metadata (a merge patch that removes the last label leaves
/// `labels: {}`, which a real server neither stores nor records in managedFields).
pub(super) fn drop_empty_metadata(obj: &mut Value) {
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        m.retain(|k, v| {
            let empty = v.as_object().is_some_and(|o| o.is_empty())
                || v.as_array().is_some_and(|a| a.is_empty());
            !(empty
                && matches!(
                    k.as_str(),
                    "labels" | "annotations" | "finalizers" | "ownerReferences"
                ))
        });
    }
}

pub(super) fn check_content(
    rt: &ResourceType,
    obj: &mut Value,
    old: Option<&Value>,
    opts: &WriteOpts,
    name: &str,
) -> ApiResult<Vec<String>> {
    drop_empty_metadata(obj);
    let validation::Checked { unknown, warnings } =
        validation::check(rt, obj, old, name, opts.validate, opts.part == Part::Status)?;
    if let Some(findings) = &opts.patch {
        let errors = findings.errors(&unknown);
        if opts.strict && !errors.is_empty() {
            return Err(crate::strict::invalid_patch(&findings.shown, &errors));
        }
        return Ok(errors.into_iter().chain(warnings).collect());
    }
    let errors: Vec<String> = crate::strict::json::in_document_order(
        opts.body_errors
            .iter()
            .cloned()
            .chain(unknown.iter().map(|f| format!("unknown field \"{f}\"")))
            .collect(),
        &opts.body_keys,
    );
    if opts.strict && !errors.is_empty() {
        let msg = errors.join(", ");
        // kube-apiserver's decoder reports the strict errors of a create or an update as it reports any
        // decoding error (its `transformDecodeError`).
        return Err(ApiError::bad_request(format!(
            "{kind} in version \"{version}\" cannot be handled as a {kind}: strict decoding error: {msg}",
            kind = rt.kind,
            version = rt.version,
        )));
    }
    let errors = errors.into_iter().filter(|_| opts.warn_unknown);
    Ok(errors.chain(warnings).collect())
}

pub(super) fn namespace_check(state: &State, namespace: &str) -> ApiResult<()> {
    let ns_storage: StorageKey = (String::new(), "namespaces".into());
    match state.get(&ns_storage, &ObjKey::new("", namespace)) {
        None => Err(ApiError::not_found(
            crate::error::Target {
                group: "",
                resource: "namespaces",
            },
            namespace,
        )),
        Some(ns) if is_deleting(&ns) => {
            let mut e = ApiError::new(
                403,
                "Forbidden",
                format!(
                    "unable to create new content in namespace {namespace} because it is being terminated"
                ),
            );
            e.details = Some(json!({
                "name": namespace, "kind": "namespaces",
                "causes": [{ "reason": "NamespaceTerminating",
                             "message": format!("namespace {namespace} is being terminated"),
                             "field": "metadata.namespace" }]
            }));
            Err(e)
        }
        Some(_) => Ok(()),
    }
}
