//! A planned write as a diff: the live object and the object the server answered the write's dry run with,
//! each cleaned of what every write changes ([`clean`]) and printed as YAML, compared line by line.

use serde_json::Value;

use crate::reconcilers::DESIRED_HASH;

/// Fields of `metadata` that differ between the live object and any dry-run answer without saying anything
/// about what the write changes, so they are left out of both sides of a diff:
///
/// - `managedFields`: every write records its manager and time there;
/// - `resourceVersion`: every stored change takes a new one (a dry run answers with the next);
/// - `generation`: bumped by every change to the spec, which the diff shows itself;
/// - `uid` and `creationTimestamp`: never changed by a write to an existing object, and invented by the server
///   for the dry run of a create.
///
/// The runtime's own annotation [`DESIRED_HASH`] (a digest of a child's desired state, which changes with
/// whatever else the diff shows) is left out too.
pub const NOISE: [&str; 5] = [
    "managedFields",
    "resourceVersion",
    "generation",
    "uid",
    "creationTimestamp",
];

/// `object` without the [`NOISE`] fields of its metadata (an empty `metadata` is dropped too).
pub fn clean(mut object: Value) -> Value {
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in NOISE {
            meta.remove(field);
        }
        if let Some(annotations) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
            annotations.remove(DESIRED_HASH);
            if annotations.is_empty() {
                meta.remove("annotations");
            }
        }
        if meta.is_empty()
            && let Some(map) = object.as_object_mut()
        {
            map.remove("metadata");
        }
    }
    object
}

/// `object`, cleaned, as YAML (empty for none).
pub fn yaml(object: Option<&Value>) -> String {
    let Some(object) = object else {
        return String::new();
    };
    let cleaned = clean(object.clone());
    // A JSON value always renders; the fallback keeps the diff total.
    serde_saphyr::to_string(&cleaned).unwrap_or_else(|_| format!("{cleaned:#}\n"))
}

/// The unified diff (three lines of context) from `before` to `after`, both cleaned and printed as YAML, with
/// headers `live` and `planned`; empty when they are the same.
pub fn unified(before: Option<&Value>, after: Option<&Value>) -> String {
    let (a, b) = (yaml(before), yaml(after));
    if a == b {
        return String::new();
    }
    similar::TextDiff::from_lines(&a, &b)
        .unified_diff()
        .context_radius(3)
        .header("live", "planned")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn noise_alone_makes_no_diff() {
        let live = json!({
            "metadata": {"name": "web", "resourceVersion": "7", "generation": 2, "uid": "u",
                          "managedFields": [{"manager": "a"}], "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"replicas": 2},
        });
        let planned = json!({
            "metadata": {"name": "web", "resourceVersion": "8", "generation": 2, "uid": "u",
                          "managedFields": [{"manager": "a"}, {"manager": "b"}],
                          "annotations": {"operator.dev/desired-hash": "x"}},
            "spec": {"replicas": 2},
        });
        assert_eq!(unified(Some(&live), Some(&planned)), "");
    }

    #[test]
    fn a_changed_field_is_the_only_change_shown() {
        let live = json!({"metadata": {"name": "web", "generation": 1}, "spec": {"replicas": 2, "paused": false}});
        let planned = json!({"metadata": {"name": "web", "generation": 2}, "spec": {"replicas": 3, "paused": false}});
        let diff = unified(Some(&live), Some(&planned));
        let changed: Vec<&str> = diff
            .lines()
            .filter(|l| {
                (l.starts_with('-') || l.starts_with('+'))
                    && !l.starts_with("---")
                    && !l.starts_with("+++")
            })
            .collect();
        assert_eq!(changed, ["-  replicas: 2", "+  replicas: 3"], "{diff}");
        assert!(diff.starts_with("--- live\n+++ planned\n"), "{diff}");
    }

    #[test]
    fn a_create_shows_the_whole_object_and_a_delete_removes_it() {
        let object = json!({"metadata": {"name": "web"}, "data": {"k": "v"}});
        let created = unified(None, Some(&object));
        assert!(created.contains("+data:"), "{created}");
        let deleted = unified(Some(&object), None);
        assert!(deleted.contains("-data:"), "{deleted}");
    }
}
