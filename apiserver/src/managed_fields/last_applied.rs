//! kubectl's `last-applied-configuration` annotation kept up to date by server-side apply, as kube-apiserver's
//! `lastAppliedUpdater` does: when the field manager is `kubectl` and the result of an apply carries the
//! annotation, it is set to the applied configuration (without the annotation itself), so that a later
//! client-side `kubectl apply` diffs against what was applied last.

use serde_json::{Map, Value};

/// The annotation client-side `kubectl apply` keeps.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Updates the annotation in `merged` (the result of an apply) from `applied` (the configuration as sent).
pub fn update_last_applied(merged: &mut Value, applied: &Value, manager: &str) {
    if manager != "kubectl" {
        return;
    }
    let Some(annotations) = merged
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    if !annotations.contains_key(LAST_APPLIED) {
        return;
    }
    let mut config = applied.clone();
    if let Some(a) = config
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
        .and_then(Value::as_object_mut)
    {
        a.remove(LAST_APPLIED);
    }
    annotations.insert(LAST_APPLIED.into(), Value::String(go_json(&config)));
}

/// JSON as Go's `json.Encoder` writes an unstructured object: keys sorted, `<`, `>` and `&` escaped, a final
/// newline.
fn go_json(v: &Value) -> String {
    let text = sorted(v).to_string();
    let mut out = String::with_capacity(text.len() + 1);
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out.push('\n');
    out
}

fn sorted(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                out.insert(k.clone(), sorted(&m[k.as_str()]));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn kubectl_applies_refresh_an_existing_annotation() {
        let applied = json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "a"}, "data": {"k": "<&>"}});
        let mut merged = json!({"metadata": {"name": "a", "annotations": {LAST_APPLIED: "old"}}});
        update_last_applied(&mut merged, &applied, "kubectl");
        assert_eq!(
            merged["metadata"]["annotations"][LAST_APPLIED],
            "{\"apiVersion\":\"v1\",\"data\":{\"k\":\"\\u003c\\u0026\\u003e\"},\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"a\"}}\n"
        );
    }

    #[test]
    fn other_managers_and_objects_without_the_annotation_are_left_alone() {
        let applied = json!({"metadata": {"name": "a"}});
        let mut merged = json!({"metadata": {"annotations": {LAST_APPLIED: "old"}}});
        update_last_applied(&mut merged, &applied, "helm");
        assert_eq!(merged["metadata"]["annotations"][LAST_APPLIED], "old");
        let mut bare = json!({"metadata": {"name": "a"}});
        update_last_applied(&mut bare, &applied, "kubectl");
        assert_eq!(bare, json!({"metadata": {"name": "a"}}));
    }
}
