//! A CustomResourceDefinition's defaults and status as kube-apiserver keeps them: the v1 defaults of every
//! write, the checks of a write to `/status`, what its naming and establishing controllers write (only when
//! the names are not yet accepted, so a status a client wrote stays), and the mark of a first delete.

use serde_json::{Map, Value, json};

use crate::error::Cause;
use crate::validation;

/// The finalizer the server puts on every CRD so that its objects are deleted before it.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// `SetDefaults_CustomResourceDefinition`: the singular name and list kind, the conversion strategy, the
/// stored versions; and the conditions as their Go type writes them back (`type` and `status` always, a
/// missing `lastTransitionTime` as `null`).
pub fn defaults(crd: &mut Value) {
    let spec = &mut crd["spec"];
    if spec.is_object() {
        let kind = spec["names"]["kind"].as_str().unwrap_or("").to_string();
        if let Some(names) = spec["names"].as_object_mut() {
            if names
                .get("singular")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                names.insert("singular".into(), json!(kind.to_lowercase()));
            }
            if !kind.is_empty()
                && names
                    .get("listKind")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
            {
                names.insert("listKind".into(), json!(format!("{kind}List")));
            }
        }
        if spec.get("conversion").is_none_or(Value::is_null) {
            spec["conversion"] = json!({"strategy": "None"});
        }
    }
    let stored_empty = crd["status"]["storedVersions"]
        .as_array()
        .is_none_or(Vec::is_empty);
    if stored_empty && let Some(version) = storage_version(crd) {
        crd["status"]["storedVersions"] = json!([version]);
    }
    if let Some(conditions) = crd["status"]["conditions"].as_array_mut() {
        for c in conditions.iter_mut().filter_map(Value::as_object_mut) {
            for required in ["type", "status"] {
                c.entry(required).or_insert_with(|| json!(""));
            }
            c.entry("lastTransitionTime").or_insert(Value::Null);
        }
    }
}

/// The name of the version marked for storage.
pub fn storage_version(crd: &Value) -> Option<String> {
    crd["spec"]["versions"]
        .as_array()?
        .iter()
        .find(|v| v["storage"].as_bool() == Some(true))
        .and_then(|v| v["name"].as_str())
        .map(str::to_string)
}

/// `PrepareForCreate` and `PrepareForUpdate` of the main resource: a new CRD's status is empty but for
/// the stored version; an update keeps the stored status and adds the storage version to
/// `storedVersions` when it is new.
pub fn prepare(crd: &mut Value, old: Option<&Value>) {
    let mut status = match old {
        Some(old) => old.get("status").cloned().unwrap_or_else(|| json!({})),
        None => json!({"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": []}),
    };
    if let Some(version) = storage_version(crd) {
        let stored = status["storedVersions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if !stored.iter().any(|v| v == version.as_str()) {
            let mut stored = stored;
            stored.push(json!(version));
            status["storedVersions"] = Value::Array(stored);
        }
    }
    crd["status"] = status;
}

/// `ValidateCustomResourceDefinitionStatus`: the accepted names as `ValidateCustomResourceDefinitionNames`
/// checks names, under `status.acceptedNames`.
pub fn causes(crd: &Value) -> Vec<Cause> {
    let names = &crd["status"]["acceptedNames"];
    let text = |k: &str| names[k].as_str().unwrap_or("").to_string();
    let invalid = |field: String, value: &str, message: String| Cause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: \"{value}\": {message}"),
        field,
    };
    let base = "status.acceptedNames";
    let mut out = Vec::new();
    for key in ["plural", "singular"] {
        let value = text(key);
        let errs = validation::dns1035_label_messages(&value);
        if !value.is_empty() && !errs.is_empty() {
            out.push(invalid(format!("{base}.{key}"), &value, errs.join(",")));
        }
    }
    for key in ["kind", "listKind"] {
        let value = text(key);
        let errs = validation::dns1035_label_messages(&value.to_lowercase());
        if !value.is_empty() && !errs.is_empty() {
            out.push(invalid(
                format!("{base}.{key}"),
                &value,
                format!(
                    "may have mixed case, but should otherwise match: {}",
                    errs.join(",")
                ),
            ));
        }
    }
    let list = |k: &str| -> Vec<String> {
        names[k]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    for (i, short) in list("shortNames").iter().enumerate() {
        let errs = validation::dns1035_label_messages(short);
        if !errs.is_empty() {
            out.push(invalid(
                format!("{base}.shortNames[{i}]"),
                short,
                errs.join(","),
            ));
        }
    }
    let (kind, list_kind) = (text("kind"), text("listKind"));
    if !kind.is_empty() && kind == list_kind {
        out.push(invalid(
            format!("{base}.listKind"),
            &list_kind,
            "kind and listKind may not be the same".into(),
        ));
    }
    for (i, category) in list("categories").iter().enumerate() {
        let errs = validation::dns1035_label_messages(category);
        if !errs.is_empty() {
            out.push(invalid(
                format!("{base}.categories[{i}]"),
                category,
                errs.join(","),
            ));
        }
    }
    out
}

/// `SetCRDCondition`: replaces the condition of the same type (its time moves only when its status
/// changes) or appends it.
fn set_condition(status: &mut Value, condition: Value, now: &str) {
    if !status["conditions"].is_array() {
        status["conditions"] = json!([]);
    }
    let Some(conditions) = status["conditions"].as_array_mut() else {
        return;
    };
    let mut condition = condition;
    condition["lastTransitionTime"] = json!(now);
    match conditions
        .iter_mut()
        .find(|c| c["type"] == condition["type"])
    {
        None => conditions.push(condition),
        Some(existing) => {
            let moved = existing["status"] != condition["status"]
                || existing["lastTransitionTime"].is_null();
            if moved {
                existing["lastTransitionTime"] = json!(now);
            }
            for key in ["status", "reason", "message"] {
                match condition.get(key) {
                    Some(v) => existing[key] = v.clone(),
                    None => {
                        if let Some(m) = existing.as_object_mut() {
                            m.remove(key);
                        }
                    }
                }
            }
        }
    }
}

fn condition_true(status: &Value, kind: &str) -> bool {
    status["conditions"]
        .as_array()
        .is_some_and(|c| c.iter().any(|c| c["type"] == kind && c["status"] == "True"))
}

/// What kube-apiserver's naming controller (names not yet accepted: accept them) and then its establishing
/// controller (names accepted, not yet established: establish) write to a stored CRD's status; `None` when
/// neither acts. Names are accepted without looking for conflicts with other CRDs.
pub fn controllers(crd: &Value, now: &str) -> Option<Value> {
    let mut status = crd.get("status").cloned().unwrap_or_else(|| json!({}));
    let mut changed = false;
    let names = without_empty(&crd["spec"]["names"]);
    if without_empty(&status["acceptedNames"]) != names {
        status["acceptedNames"] = names;
        let established = status["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == "Established").cloned())
            .filter(|c| c["status"] == "True")
            .unwrap_or_else(|| {
                json!({"type": "Established", "status": "False", "reason": "Installing",
                       "message": "the initial names have been accepted"})
            });
        set_condition(
            &mut status,
            json!({"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
                   "message": "no conflicts found"}),
            now,
        );
        set_condition(&mut status, established, now);
        changed = true;
    }
    if condition_true(&status, "NamesAccepted") && !condition_true(&status, "Established") {
        set_condition(
            &mut status,
            json!({"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                   "message": "the initial names have been accepted"}),
            now,
        );
        changed = true;
    }
    changed.then_some(status)
}

/// Names with their empty fields left out, as Go's `omitempty` compares them.
fn without_empty(names: &Value) -> Value {
    let map: Map<String, Value> = names
        .as_object()
        .map(|m| {
            m.iter()
                .filter(|(_, v)| {
                    !(v.is_null()
                        || v.as_str() == Some("")
                        || v.as_array().is_some_and(Vec::is_empty))
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default();
    Value::Object(map)
}

/// What the first delete of a CRD writes (its `REST.Delete`): the deletion time, the cleanup finalizer and
/// the `Terminating` condition; no grace period and no new generation, unlike other kinds.
pub fn mark_terminating(crd: &mut Value, now: &str) {
    let Some(meta) = crd["metadata"].as_object_mut() else {
        return;
    };
    meta.entry("deletionTimestamp")
        .or_insert_with(|| json!(now));
    let finalizers = meta.entry("finalizers").or_insert_with(|| json!([]));
    if let Some(f) = finalizers.as_array_mut()
        && !f.iter().any(|f| f == CLEANUP_FINALIZER)
    {
        f.push(json!(CLEANUP_FINALIZER));
    }
    if !crd["status"].is_object() {
        crd["status"] = json!({});
    }
    set_condition(
        &mut crd["status"],
        json!({"type": "Terminating", "status": "True", "reason": "InstanceDeletionPending",
               "message": "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"}),
        now,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd() -> Value {
        json!({"spec": {"names": {"kind": "A", "plural": "as"},
                        "versions": [{"name": "v1", "storage": true}]}})
    }

    #[test]
    fn new_names_are_accepted_and_established_once() {
        let mut c = crd();
        defaults(&mut c);
        prepare(&mut c, None);
        let status = controllers(&c, "t").expect("the controllers write");
        let types: Vec<&str> = status["conditions"]
            .as_array()
            .expect("conditions")
            .iter()
            .filter_map(|c| c["type"].as_str())
            .collect();
        assert_eq!(types, ["NamesAccepted", "Established"]);
        assert_eq!(status["acceptedNames"]["listKind"], "AList");
        c["status"] = status;
        assert_eq!(controllers(&c, "t2"), None);
    }

    #[test]
    fn a_written_status_stays() {
        let mut c = crd();
        defaults(&mut c);
        c["status"] = controllers(&c, "t").expect("a status");
        c["status"]["conditions"] = json!([{"message": "patched"}]);
        defaults(&mut c);
        assert_eq!(controllers(&c, "t2"), None);
        assert_eq!(
            c["status"]["conditions"],
            json!([{"message": "patched", "type": "", "status": "", "lastTransitionTime": null}])
        );
    }

    #[test]
    fn accepted_names_are_checked() {
        let c =
            json!({"status": {"acceptedNames": {"plural": "Bad", "kind": "K", "listKind": "K"}}});
        let fields: Vec<String> = causes(&c).into_iter().map(|c| c.field).collect();
        assert_eq!(
            fields,
            [
                "status.acceptedNames.plural",
                "status.acceptedNames.listKind"
            ]
        );
    }
}
