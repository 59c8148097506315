//! Go's `omitempty` on built-in kinds: kube-apiserver never writes an empty optional map or list (`data: {}`
//! on a ConfigMap, `env: []` on a container), while a k8s-openapi round trip keeps them.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, OnceLock};

use serde_json::{Value, json};

#[derive(Debug, Clone)]
enum Seg {
    Key(String),
    Index(usize),
}

/// Removes every empty object member that Go would omit from `obj` (the output of `round_trip`, a round trip
/// through a k8s-openapi type): empty lists of optional fields, and empty maps of optional fields. Empty
/// structs stay (`status: {}`; Go never omits a struct), as do required fields (`containers: []`) and
/// anything inside free-form JSON (`fieldsV1`, a CRD schema's `default`). Which is which is found by probing
/// `round_trip`: free-form JSON keeps an unknown key as given, an optional field is dropped when absent, a
/// struct drops an unknown key, and a map keeps it (or rejects its value).
///
/// Whether a path is omitted when empty depends only on the type, so each answer is remembered per type and
/// path (list indices folded), and so is each object found to hold free-form JSON, whose keys vary (managed
/// fields name owners' uids): probing costs a few round trips of the whole object, once per path.
pub(super) fn omit_empty(obj: Value, round_trip: fn(Value) -> Result<Value, String>) -> Value {
    let mut empties = Vec::new();
    find_empty(&obj, &mut Vec::new(), &mut empties);
    if empties.is_empty() {
        return obj;
    }
    let mut out = obj;
    for path in empties {
        let Some((Seg::Key(_), parent)) = path.split_last() else {
            continue;
        };
        let tag = round_trip as usize;
        let key = (tag, path_key(&path));
        let remembered = {
            let memory = memory().lock().unwrap_or_else(|e| e.into_inner());
            if (0..=parent.len()).any(|n| memory.free_form.contains(&(tag, path_key(&parent[..n]))))
            {
                continue; // inside free-form JSON (managed fields, a schema's default): kept as given
            }
            memory.omit.get(&key).copied()
        };
        let omit = match remembered {
            Some(omit) => omit,
            None => {
                let answer = omitted_when_empty(&out, &path, round_trip);
                let mut memory = memory().lock().unwrap_or_else(|e| e.into_inner());
                match answer {
                    Answer::FreeForm => {
                        if memory.free_form.len() < MAX_REMEMBERED {
                            memory.free_form.insert((tag, path_key(parent)));
                        }
                        false
                    }
                    Answer::Omit(omit) => {
                        if memory.omit.len() < MAX_REMEMBERED {
                            memory.omit.insert(key, omit);
                        }
                        omit
                    }
                }
            }
        };
        if omit {
            remove_at(&mut out, &path);
        }
    }
    out
}

/// Bounds the memory of remembered answers.
const MAX_REMEMBERED: usize = 50_000;

/// Remembered answers, by round-trip function (one per type) and path.
#[derive(Default)]
struct Memory {
    /// Whether an empty value at the path is omitted.
    omit: HashMap<(usize, String), bool>,
    /// Objects whose members are free-form JSON (nothing below them is omitted).
    free_form: HashSet<(usize, String)>,
}

fn memory() -> &'static Mutex<Memory> {
    static MEMORY: OnceLock<Mutex<Memory>> = OnceLock::new();
    MEMORY.get_or_init(Mutex::default)
}

/// What probing found about one empty value.
enum Answer {
    /// Its parent holds free-form JSON.
    FreeForm,
    /// A typed field: omitted when empty, or not.
    Omit(bool),
}

/// The path with list indices folded: `/spec/template/spec/containers/*/env`.
fn path_key(path: &[Seg]) -> String {
    let mut key = String::new();
    for seg in path {
        key.push('/');
        match seg {
            Seg::Key(k) => key.push_str(&k.replace('~', "~0").replace('/', "~1")),
            Seg::Index(_) => key.push('*'),
        }
    }
    key
}

/// Whether Go would omit the empty value at `path` of `obj`, found by probing `round_trip`.
fn omitted_when_empty(
    obj: &Value,
    path: &[Seg],
    round_trip: fn(Value) -> Result<Value, String>,
) -> Answer {
    let Some((Seg::Key(_), parent)) = path.split_last() else {
        return Answer::Omit(false);
    };
    let probe = json!({ "omitempty-probe": { "omitempty-nested": [1] } });
    let mut sibling = parent.to_vec();
    sibling.push(Seg::Key("omitempty-probe".into()));
    let mut probed = obj.clone();
    set_at(&mut probed, &sibling, probe["omitempty-probe"].clone());
    if round_trip(probed).is_ok_and(|v| get_at(&v, &sibling) == Some(&probe["omitempty-probe"])) {
        return Answer::FreeForm;
    }
    let mut without = obj.clone();
    remove_at(&mut without, path);
    match round_trip(without) {
        Ok(v) if get_at(&v, path).is_none() => {}
        _ => return Answer::Omit(false), // required: Go writes it even when empty
    }
    let is_object = get_at(obj, path).is_some_and(Value::is_object);
    let odd = if is_object {
        probe.clone()
    } else {
        json!([probe])
    };
    let mut probed = obj.clone();
    set_at(&mut probed, path, odd.clone());
    if let Ok(v) = round_trip(probed)
        && let Some(kept) = get_at(&v, path)
        && (kept == &odd || is_object && kept == &json!({}))
    {
        return Answer::Omit(false); // free-form JSON (kept as given), or a struct (unknown key dropped)
    }
    Answer::Omit(true)
}

fn find_empty(v: &Value, at: &mut Vec<Seg>, out: &mut Vec<Vec<Seg>>) {
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                at.push(Seg::Key(k.clone()));
                let empty = match child {
                    Value::Object(c) => c.is_empty(),
                    Value::Array(c) => c.is_empty(),
                    _ => false,
                };
                if empty {
                    out.push(at.clone());
                } else {
                    find_empty(child, at, out);
                }
                at.pop();
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                at.push(Seg::Index(i));
                find_empty(child, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

fn get_at<'v>(v: &'v Value, path: &[Seg]) -> Option<&'v Value> {
    path.iter().try_fold(v, |v, seg| match seg {
        Seg::Key(k) => v.get(k),
        Seg::Index(i) => v.get(i),
    })
}

fn parent_mut<'v>(v: &'v mut Value, path: &[Seg]) -> Option<(&'v mut Value, String)> {
    let (last, parents) = path.split_last()?;
    let Seg::Key(key) = last else {
        return None;
    };
    let parent = parents.iter().try_fold(v, |v, seg| match seg {
        Seg::Key(k) => v.get_mut(k),
        Seg::Index(i) => v.get_mut(i),
    })?;
    Some((parent, key.clone()))
}

fn remove_at(v: &mut Value, path: &[Seg]) {
    if let Some((Value::Object(m), key)) = parent_mut(v, path) {
        m.remove(&key);
    }
}

fn set_at(v: &mut Value, path: &[Seg], value: Value) {
    if let Some((Value::Object(m), key)) = parent_mut(v, path) {
        m.insert(key, value);
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;

    fn config_map(v: Value) -> Result<Value, String> {
        let typed: ConfigMap = serde_json::from_value(v).map_err(|e| e.to_string())?;
        serde_json::to_value(typed).map_err(|e| e.to_string())
    }

    fn deployment(v: Value) -> Result<Value, String> {
        let typed: Deployment = serde_json::from_value(v).map_err(|e| e.to_string())?;
        serde_json::to_value(typed).map_err(|e| e.to_string())
    }

    #[test]
    fn empty_optional_maps_and_lists_go() {
        let cm = json!({ "metadata": { "name": "a", "labels": {}, "finalizers": [] }, "data": {} });
        assert_eq!(
            omit_empty(config_map(cm).unwrap(), config_map),
            json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "name": "a" } })
        );
    }

    #[test]
    fn remembered_answers_give_the_same_result() {
        let cm = || json!({ "metadata": { "name": "a", "labels": {}, "annotations": { "x": "" } }, "data": {} });
        let first = omit_empty(config_map(cm()).unwrap(), config_map);
        let second = omit_empty(config_map(cm()).unwrap(), config_map);
        assert_eq!(first, second);
        assert!(first["metadata"].get("labels").is_none());
        assert!(first.get("data").is_none());
        assert_eq!(
            path_key(&[Seg::Key("a/b".into()), Seg::Index(3)]),
            "/a~1b/*"
        );
    }

    #[test]
    fn empty_structs_and_required_lists_stay() {
        let d = json!({
            "metadata": { "name": "a" },
            "spec": {
                "selector": {},
                "template": { "metadata": {}, "spec": { "containers": [
                    { "name": "c", "env": [], "resources": {} }
                ] } }
            },
            "status": {}
        });
        let out = omit_empty(deployment(d).unwrap(), deployment);
        assert_eq!(out["status"], json!({}));
        assert_eq!(out["spec"]["selector"], json!({}));
        assert_eq!(out["spec"]["template"]["metadata"], json!({}));
        assert_eq!(
            out["spec"]["template"]["spec"]["containers"],
            json!([{ "name": "c", "resources": {} }])
        );
        let none = json!({ "metadata": { "name": "a" }, "spec": { "selector": {}, "template": {
            "spec": { "containers": [] } } } });
        let out = omit_empty(deployment(none).unwrap(), deployment);
        assert_eq!(out["spec"]["template"]["spec"]["containers"], json!([]));
    }

    fn crd(v: Value) -> Result<Value, String> {
        use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
        let typed: CustomResourceDefinition =
            serde_json::from_value(v).map_err(|e| e.to_string())?;
        serde_json::to_value(typed).map_err(|e| e.to_string())
    }

    #[test]
    fn free_form_json_stays() {
        let cm = json!({ "metadata": { "name": "a", "managedFields": [{
            "manager": "m", "operation": "Apply", "fieldsType": "FieldsV1",
            "fieldsV1": { "f:data": { "f:a": {} }, "f:x": [] }
        }] } });
        let out = omit_empty(config_map(cm.clone()).unwrap(), config_map);
        assert_eq!(
            out["metadata"]["managedFields"],
            cm["metadata"]["managedFields"]
        );

        let crd_json = json!({
            "metadata": { "name": "ws.example.dev" },
            "spec": { "group": "example.dev", "scope": "Namespaced",
                "names": { "plural": "ws", "kind": "W" },
                "versions": [{ "name": "v1", "served": true, "storage": true,
                    "subresources": { "status": {} },
                    "schema": { "openAPIV3Schema": { "type": "object", "properties": {
                        "list": { "type": "array", "default": [], "items": { "type": "string" } }
                    } } } }] }
        });
        let out = omit_empty(crd(crd_json).unwrap(), crd);
        let version = &out["spec"]["versions"][0];
        assert_eq!(version["subresources"]["status"], json!({}));
        assert_eq!(
            version["schema"]["openAPIV3Schema"]["properties"]["list"]["default"],
            json!([])
        );
    }
}
