//! Tests of the `$patch`, `$setElementOrder` and `$retainKeys` directives, and of malformed ones.

use super::*;

#[test]
fn patch_delete_item_removes_every_match() {
    let original = deployment(json!([{"name": "a"}, {"name": "b"}, {"name": "a", "image": "dup"}]));
    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}}}});
    let out = smp("apps", "Deployment", original, patch);
    assert_eq!(containers_of(&out), &json!([{"name": "b"}]));
}

#[test]
fn patch_delete_item_for_a_missing_key_is_harmless() {
    let original = deployment(json!([{"name": "a"}]));
    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "zzz", "$patch": "delete"}]}}}});
    let out = smp("apps", "Deployment", original, patch);
    assert_eq!(containers_of(&out), &json!([{"name": "a"}]));
}

#[test]
fn patch_replace_item_replaces_the_list() {
    let original = deployment(json!([{"name": "a", "image": "a"}, {"name": "b"}]));
    let patch = json!({"spec": {"template": {"spec": {"containers": [
        {"name": "c", "image": "c", "env": null},
        {"$patch": "replace"}
    ]}}}});
    let out = smp("apps", "Deployment", original, patch);
    assert_eq!(containers_of(&out), &json!([{"name": "c", "image": "c"}]));
}

#[test]
fn patch_replace_alone_empties_the_list() {
    let original = json!({"metadata": {"ownerReferences": [{"uid": "1"}]}});
    let out = smp(
        "",
        "ConfigMap",
        original,
        json!({"metadata": {"ownerReferences": [{"$patch": "replace"}]}}),
    );
    assert_eq!(out["metadata"]["ownerReferences"], json!([]));
}

#[test]
fn patch_replace_in_a_map_replaces_it() {
    let original = json!({"metadata": {"labels": {"a": "1", "b": "2"}}});
    let patch = json!({"metadata": {"labels": {"$patch": "replace", "c": "3"}}});
    let out = smp("", "ConfigMap", original, patch);
    assert_eq!(out["metadata"]["labels"], json!({"c": "3"}));
}

#[test]
fn patch_replace_at_the_top_replaces_the_object() {
    let original = json!({"metadata": {"name": "a"}, "data": {"x": "1"}});
    let out = smp(
        "",
        "ConfigMap",
        original,
        json!({"$patch": "replace", "metadata": {"name": "b"}}),
    );
    assert_eq!(out, json!({"metadata": {"name": "b"}}));
}

#[test]
fn patch_delete_in_a_map_empties_it() {
    // apimachinery leaves an empty map where the deleted one was.
    let original = json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": "1"}}}]}}}});
    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "resources": {"$patch": "delete"}}]}}}});
    let out = smp("apps", "Deployment", original, patch);
    assert_eq!(containers_of(&out)[0]["resources"], json!({}));
}

#[test]
fn directive_maps_for_missing_keys_are_dropped() {
    let original = json!({"metadata": {"name": "a"}});
    let patch = json!({"metadata": {"labels": {"$patch": "delete"}, "annotations": {"$patch": "replace", "x": "1"}}});
    let out = smp("", "ConfigMap", original.clone(), patch);
    assert_eq!(out, original);
}

#[test]
fn set_element_order_reorders_keyed_lists() {
    let original = deployment(json!([{"name": "a"}, {"name": "b"}, {"name": "c"}]));
    let patch = json!({"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "c"}, {"name": "a"}, {"name": "d"}],
        "containers": [{"name": "d", "image": "d"}]
    }}}});
    let out = smp("apps", "Deployment", original, patch);
    // c, a and d come in the given order; b, which only the server had, goes before
    // the first listed item it preceded on the server (c), as apimachinery does.
    assert_eq!(names(containers_of(&out)), ["b", "c", "a", "d"]);
    assert_no_directives(&out);
}

#[test]
fn set_element_order_appends_new_items_as_kubectl_sends_them() {
    let original = deployment(json!([{"name": "a"}, {"name": "b"}]));
    let patch = json!({"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
        "containers": [{"name": "c"}]
    }}}});
    let out = smp("apps", "Deployment", original, patch);
    assert_eq!(names(containers_of(&out)), ["a", "b", "c"]);
}

#[test]
fn set_element_order_reorders_primitive_lists() {
    let original = json!({"metadata": {"finalizers": ["a", "b", "c"]}});
    let patch = json!({"metadata": {"$setElementOrder/finalizers": ["c", "b", "a"]}});
    let out = smp("", "ConfigMap", original, patch);
    assert_eq!(out, json!({"metadata": {"finalizers": ["c", "b", "a"]}}));
}

#[test]
fn set_element_order_with_a_deletion() {
    let original = json!({"metadata": {"finalizers": ["a", "b"]}});
    let patch = json!({"metadata": {
        "$setElementOrder/finalizers": ["a"],
        "$deleteFromPrimitiveList/finalizers": ["b"]
    }});
    let out = smp("", "ConfigMap", original, patch);
    assert_eq!(out, json!({"metadata": {"finalizers": ["a"]}}));
}

#[test]
fn set_element_order_for_a_new_list() {
    let original = json!({"metadata": {"name": "x"}});
    let patch =
        json!({"metadata": {"$setElementOrder/finalizers": ["b", "a"], "finalizers": ["b", "a"]}});
    let out = smp("", "ConfigMap", original, patch);
    assert_eq!(out["metadata"]["finalizers"], json!(["b", "a"]));
}

#[test]
fn set_element_order_must_agree_with_the_patch_list() {
    let original = json!({"metadata": {"finalizers": ["a", "b", "c"]}});
    let patch = json!({"metadata": {"$setElementOrder/finalizers": ["a", "b", "c"], "finalizers": ["c", "a"]}});
    let err = smp_err("", "ConfigMap", original, patch);
    assert!(
        matches!(err, PatchError::SetElementOrderMismatch { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("doesn't match"));
}

#[test]
fn retain_keys_switches_deployment_strategy() {
    let original = deployment(json!([{"name": "a"}]));
    let patch = json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}});
    let out = smp("apps", "Deployment", original, patch);
    assert_eq!(out["spec"]["strategy"], json!({"type": "Recreate"}));
    assert_no_directives(&out);
}

#[test]
fn retain_keys_switches_volume_source() {
    let original = json!({"spec": {"volumes": [{"name": "v", "emptyDir": {}}]}});
    let patch = json!({"spec": {"volumes": [{"name": "v", "$retainKeys": ["name", "configMap"], "configMap": {"name": "cm"}}]}});
    let out = smp("", "Pod", original, patch);
    assert_eq!(
        out["spec"]["volumes"],
        json!([{"name": "v", "configMap": {"name": "cm"}}])
    );
}

#[test]
fn retain_keys_must_cover_the_patch() {
    let original = deployment(json!([]));
    let patch = json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
    let err = smp_err("apps", "Deployment", original.clone(), patch);
    assert_eq!(err, PatchError::BadPatchFormatForRetainKeys);
    assert_eq!(err.status_code(), 400);

    let patch = json!({"spec": {"strategy": {"$retainKeys": "type"}}});
    let err = smp_err("apps", "Deployment", original, patch);
    assert_eq!(err, PatchError::BadPatchFormatForRetainKeys);
}

#[test]
fn unknown_patch_type_in_a_map_is_an_error() {
    let original = json!({"metadata": {"labels": {"a": "1"}}});
    let err = smp_err(
        "",
        "ConfigMap",
        original,
        json!({"metadata": {"labels": {"$patch": "foo"}}}),
    );
    assert_eq!(
        err.to_string(),
        "unknown patch type: foo in map: map[$patch:foo]"
    );
    assert_eq!(err.status_code(), 500);

    let err = smp_err("", "ConfigMap", json!({}), json!({"$patch": 1}));
    assert!(matches!(err, PatchError::UnknownPatchType { .. }));
    let err = smp_err("", "ConfigMap", json!({}), json!({"$patch": "merge"}));
    assert!(matches!(err, PatchError::UnknownPatchType { .. }));
}

#[test]
fn unknown_patch_type_in_a_list_is_an_error() {
    let original = deployment(json!([{"name": "a"}]));
    let patch =
        json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "$patch": "foo"}]}}}});
    let err = smp_err("apps", "Deployment", original.clone(), patch);
    assert!(
        matches!(err, PatchError::UnknownPatchType { .. }),
        "{err:?}"
    );

    let patch = json!({"spec": {"template": {"spec": {"containers": [{"$patch": "merge"}]}}}});
    let err = smp_err("apps", "Deployment", original, patch);
    assert_eq!(err, PatchError::MergingListsNotSupported);
}

#[test]
fn keyed_items_need_their_key() {
    let original = deployment(json!([{"name": "a"}]));
    let patch = json!({"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}});
    let err = smp_err("apps", "Deployment", original.clone(), patch);
    assert_eq!(
        err.to_string(),
        "map: map[image:x] does not contain declared merge key: name"
    );

    let patch = json!({"spec": {"template": {"spec": {"containers": [{"$patch": "delete"}]}}}});
    let err = smp_err("apps", "Deployment", original, patch);
    assert!(matches!(err, PatchError::NoMergeKey { .. }), "{err:?}");
}

#[test]
fn malformed_parallel_list_keys_are_errors() {
    let original = json!({"metadata": {"finalizers": ["a"]}});
    let err = smp_err(
        "",
        "ConfigMap",
        original.clone(),
        json!({"metadata": {"$deleteFromPrimitiveListfinalizers": ["a"]}}),
    );
    assert_eq!(err, PatchError::BadPatchFormatForPrimitiveList);
    let err = smp_err(
        "",
        "ConfigMap",
        original.clone(),
        json!({"metadata": {"$setElementOrderfinalizers": ["a"]}}),
    );
    assert_eq!(err, PatchError::BadPatchFormatForSetElementOrderList);
    let err = smp_err(
        "",
        "ConfigMap",
        original,
        json!({"metadata": {"$setElementOrder/finalizers": "a"}}),
    );
    assert!(matches!(err, PatchError::BadArgType { .. }), "{err:?}");
}

#[test]
fn mixed_and_nested_list_items_are_errors() {
    let original = json!({"metadata": {"finalizers": ["a"]}});
    let err = smp_err(
        "",
        "ConfigMap",
        original.clone(),
        json!({"metadata": {"finalizers": [1]}}),
    );
    assert!(
        err.to_string()
            .starts_with("list element types are not identical"),
        "{err}"
    );
    let err = smp_err(
        "",
        "ConfigMap",
        json!({"metadata": {"finalizers": []}}),
        json!({"metadata": {"finalizers": [["a"]]}}),
    );
    assert_eq!(err, PatchError::NoListOfLists);
    assert_eq!(err.status_code(), 422);
    let err = smp_err(
        "",
        "ConfigMap",
        original,
        json!({"metadata": {"finalizers": [{"a": 1}]}}),
    );
    assert!(matches!(err, PatchError::Other(_)), "{err:?}");
}
