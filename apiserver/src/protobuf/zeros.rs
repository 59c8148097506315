//! Go's `omitempty` on the scalar fields of built-in kinds: kube-apiserver writes a built-in object from its
//! Go struct, so an `int32`, `bool` or `string` field tagged `omitempty` and held by value is left out when
//! zero (`status.active: 0` of a Job, `spec.paused: false` of a Deployment), while a k8s-openapi round trip
//! keeps what the request sent. Pointers (`status.ready` of a Job) keep their zero. The protobuf schema
//! knows each field's tag and whether Go holds it by value.

use serde_json::{Map, Value};

use super::schema::{self, Form, Label, Message};

/// Removes from `obj` (a built-in object of `apiVersion`/`kind` as it names them) the zero scalars Go's
/// `omitempty` leaves out; an object whose kind the schema does not know is left as it is.
pub fn omit_zero_scalars(obj: &mut Value) {
    let (Some(api_version), Some(kind)) = (obj["apiVersion"].as_str(), obj["kind"].as_str()) else {
        return;
    };
    let Some(name) = schema::message_of(api_version, kind) else {
        return;
    };
    if let (Some(message), Some(map)) = (schema::message(&name), obj.as_object_mut()) {
        walk(map, message);
    }
}

fn is_scalar(ty: &str) -> bool {
    !ty.contains('.')
}

fn is_zero_scalar(v: &Value) -> bool {
    match v {
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

fn walk(map: &mut Map<String, Value>, message: &Message) {
    if message.form != Form::Struct {
        return;
    }
    for f in &message.fields {
        if f.json.is_empty() {
            // A struct embedded inline: its fields are this object's.
            if let Some(inline) = schema::message(&f.ty) {
                walk(map, inline);
            }
            continue;
        }
        if is_scalar(&f.ty) {
            if f.label == Label::Optional
                && f.value
                && f.omitempty
                && map.get(&f.json).is_some_and(is_zero_scalar)
            {
                map.remove(&f.json);
            }
            continue;
        }
        let (Some(nested), Some(value)) = (schema::message(&f.ty), map.get_mut(&f.json)) else {
            continue;
        };
        match (f.label, value) {
            (Label::Optional, Value::Object(m)) => walk(m, nested),
            (Label::Repeated, Value::Array(items)) => {
                for item in items.iter_mut().filter_map(Value::as_object_mut) {
                    walk(item, nested);
                }
            }
            (Label::Map, Value::Object(m)) => {
                for item in m.values_mut().filter_map(Value::as_object_mut) {
                    walk(item, nested);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn zero_counts_and_flags_held_by_value_are_left_out() {
        let mut job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j", "generation": 0},
            "spec": {"suspend": false, "template": {"spec": {"containers": [{"name": "c", "stdin": false,
                "ports": [{"containerPort": 80, "hostPort": 0}]}]}}},
            "status": {"active": 0, "succeeded": 1, "ready": 0, "terminating": 0, "completedIndexes": ""}});
        omit_zero_scalars(&mut job);
        assert_eq!(
            job["status"],
            json!({"succeeded": 1, "ready": 0, "terminating": 0})
        );
        // `suspend` is a pointer; `stdin` and `hostPort` are held by value.
        assert_eq!(job["spec"]["suspend"], false);
        assert!(
            job["spec"]["template"]["spec"]["containers"][0]
                .get("stdin")
                .is_none()
        );
        assert_eq!(
            job["spec"]["template"]["spec"]["containers"][0]["ports"][0],
            json!({"containerPort": 80})
        );
        assert!(job["metadata"].get("generation").is_none());
    }
}
