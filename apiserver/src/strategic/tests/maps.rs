//! Tests of maps, nulls and scalars.

use super::*;

#[test]
fn maps_merge_recursively_and_scalars_replace() {
    let original =
        json!({"metadata": {"name": "a", "labels": {"x": "1", "y": "2"}}, "data": {"k": "v"}});
    let patch = json!({"metadata": {"labels": {"y": "3", "z": "4"}}, "data": {"k2": "v2"}});
    let out = smp("", "ConfigMap", original, patch);
    assert_eq!(
        out,
        json!({"metadata": {"name": "a", "labels": {"x": "1", "y": "3", "z": "4"}}, "data": {"k": "v", "k2": "v2"}})
    );
}

#[test]
fn null_deletes_keys() {
    let original =
        json!({"metadata": {"name": "a", "labels": {"x": "1", "y": "2"}}, "data": {"k": "v"}});
    let patch = json!({"metadata": {"labels": {"x": null}}, "data": null});
    let out = smp("", "ConfigMap", original, patch);
    assert_eq!(
        out,
        json!({"metadata": {"name": "a", "labels": {"y": "2"}}})
    );
}

#[test]
fn null_for_a_missing_key_is_ignored() {
    let original = json!({"metadata": {"name": "a"}});
    let out = smp(
        "",
        "ConfigMap",
        original.clone(),
        json!({"data": null, "metadata": {"labels": null}}),
    );
    assert_eq!(out, original);
}

#[test]
fn nested_nulls_in_new_values_are_discarded() {
    let original = json!({"metadata": {"name": "a"}});
    let patch = json!({"metadata": {"annotations": {"keep": "1", "drop": null}}, "data": {"x": {"y": null}}});
    let out = smp("", "ConfigMap", original, patch);
    assert_eq!(
        out,
        json!({"metadata": {"name": "a", "annotations": {"keep": "1"}}, "data": {"x": {}}})
    );
}

#[test]
fn nulls_inside_scalar_lists_of_new_values_are_kept() {
    let out = smp(
        "",
        "ConfigMap",
        json!({}),
        json!({"extra": ["a", null, "b"]}),
    );
    assert_eq!(out, json!({"extra": ["a", null, "b"]}));
}

#[test]
fn value_of_another_type_replaces() {
    let original = json!({"spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}}}});
    let out = smp(
        "apps",
        "Deployment",
        original,
        json!({"spec": {"replicas": "two", "selector": "x"}}),
    );
    assert_eq!(out, json!({"spec": {"replicas": "two", "selector": "x"}}));
}

#[test]
fn null_patch_changes_nothing() {
    let original = json!({"metadata": {"name": "a"}});
    assert_eq!(
        smp("", "ConfigMap", original.clone(), Value::Null),
        original
    );
}

#[test]
fn non_object_patches_are_bad_requests() {
    for patch in [json!([1, 2]), json!("x"), json!(3), json!(true)] {
        let err = smp_err("", "ConfigMap", json!({}), patch);
        assert!(matches!(err, PatchError::NotAnObject { .. }), "{err:?}");
        assert_eq!(err.status_code(), 400);
    }
    let err = smp_err("", "ConfigMap", json!({}), json!([]));
    assert_eq!(
        err.to_string(),
        "json: cannot unmarshal array into Go value of type map[string]interface {}"
    );
}
