//! How a live child is compared with its desired state: containment (quantities by value), merging, and the
//! hash of the desired state stamped on applied children.

use kube::Resource;
use serde::Serialize;
use serde_json::Value;

use crate::error::Result;
use crate::quantity;

/// The annotation recording a hash of the desired state last applied to a child. A field the desired
/// function stops setting leaves no trace in a containment check; the changed hash makes the runtime apply
/// again, and server-side apply then removes the fields the controller no longer sets.
pub const DESIRED_HASH: &str = "operator.dev/desired-hash";

/// The [`DESIRED_HASH`] of a desired child as its desired function returned it (FNV-1a over its JSON without
/// the annotation, stable across builds).
pub fn desired_hash<C: Resource + Serialize + Clone>(desired: &C) -> Result<String> {
    // Hashed as if without the annotation, and without an annotation map left empty: a copy is made only when
    // the object has either (a desired function's object usually has neither).
    let bytes = match &desired.meta().annotations {
        Some(a) if a.is_empty() || a.contains_key(DESIRED_HASH) => {
            let mut plain = desired.clone();
            let meta = plain.meta_mut();
            if let Some(a) = meta.annotations.as_mut() {
                a.remove(DESIRED_HASH);
                if a.is_empty() {
                    meta.annotations = None;
                }
            }
            serde_json::to_vec(&plain)?
        }
        _ => serde_json::to_vec(desired)?,
    };
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    Ok(format!("{hash:016x}"))
}

/// Stamps [`DESIRED_HASH`] on a desired child.
pub(crate) fn stamp_desired_hash<C: Resource + Serialize + Clone>(child: &mut C) -> Result<()> {
    let hash = desired_hash(child)?;
    child
        .meta_mut()
        .annotations
        .get_or_insert_with(Default::default)
        .insert(DESIRED_HASH.to_string(), hash);
    Ok(())
}

/// Whether every field set in `desired` has the same value in `live` (lists compared item by item, numbers and
/// quantities by value).
pub fn contains(live: &Value, desired: &Value) -> bool {
    match (live, desired) {
        (_, Value::Null) => true,
        (Value::Object(l), Value::Object(d)) => d.iter().all(|(k, dv)| match l.get(k) {
            Some(lv) => contains(lv, dv),
            None => {
                dv.is_null()
                    || dv.as_object().is_some_and(|o| o.is_empty())
                    || dv.as_array().is_some_and(|a| a.is_empty())
            }
        }),
        (Value::Array(l), Value::Array(d)) => {
            l.len() == d.len() && l.iter().zip(d).all(|(a, b)| contains(a, b))
        }
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        // The server stores quantities in canonical form (`1024Mi` as `1Gi`). A desired change from one form to
        // another still reaches the server: it changes the desired-state hash, compared as a plain string.
        (Value::String(l), Value::String(d)) => l == d || quantity::same_quantity(l, d),
        (a, b) => a == b,
    }
}

/// Merges the fields set in `desired` into `live` (maps recursively; lists and scalars replaced).
pub fn merge_into(live: &mut Value, desired: &Value) {
    match (live, desired) {
        (Value::Object(l), Value::Object(d)) => {
            for (k, dv) in d {
                if dv.is_null() {
                    continue;
                }
                match l.get_mut(k) {
                    Some(lv) if lv.is_object() && dv.is_object() => merge_into(lv, dv),
                    _ => {
                        l.insert(k.clone(), dv.clone());
                    }
                }
            }
        }
        (l, d) => *l = d.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The hash of an object is the hash of the object without the annotation, and without an annotation map
    /// left empty, whichever form it comes in; and the value is the one earlier builds stamped (children
    /// stamped before are not applied again after an upgrade).
    #[test]
    fn the_desired_hash_ignores_its_annotation_and_an_empty_map() {
        use k8s_openapi::api::core::v1::ConfigMap;
        let with = |annotations: Option<&[(&str, &str)]>| {
            let mut cm = ConfigMap::default();
            cm.metadata.name = Some("x".into());
            cm.metadata.annotations = annotations.map(|a| {
                a.iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect()
            });
            desired_hash(&cm).unwrap()
        };
        let plain = with(None);
        assert_eq!(plain, "39b194b252dd0d42");
        assert_eq!(with(Some(&[])), plain);
        assert_eq!(with(Some(&[(DESIRED_HASH, "old")])), plain);
        let annotated = with(Some(&[("a", "b")]));
        assert_ne!(annotated, plain);
        assert_eq!(with(Some(&[("a", "b"), (DESIRED_HASH, "old")])), annotated);
    }

    #[test]
    fn containment_ignores_server_defaults() {
        let live = json!({"spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "a", "image": "x", "imagePullPolicy": "Always"}]}}}, "status": {}});
        assert!(contains(
            &live,
            &json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "x"}]}}}})
        ));
        assert!(!contains(
            &live,
            &json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "y"}]}}}})
        ));
        assert!(!contains(
            &live,
            &json!({"spec": {"template": {"spec": {"containers": []}}}})
        ));
        assert!(contains(&json!({"a": 1.0}), &json!({"a": 1})));
        // As kube-apiserver stores a container's limits.
        assert!(contains(
            &json!({"limits": {"memory": "1Gi", "cpu": "500m"}}),
            &json!({"limits": {"memory": "1024Mi", "cpu": "0.5"}})
        ));
        assert!(!contains(
            &json!({"limits": {"memory": "1Gi"}}),
            &json!({"limits": {"memory": "1G"}})
        ));
    }

    #[test]
    fn merging_sets_only_desired_fields() {
        let mut live = json!({"metadata": {"name": "x", "resourceVersion": "3"}, "spec": {"a": 1, "b": {"c": 2, "d": 3}}});
        merge_into(&mut live, &json!({"spec": {"b": {"c": 5}}}));
        assert_eq!(
            live,
            json!({"metadata": {"name": "x", "resourceVersion": "3"}, "spec": {"a": 1, "b": {"c": 5, "d": 3}}})
        );
    }
}
