//! Tests of edge cases: nulls, owner references, odd inputs, type changes and omitted keys.

use super::*;

#[test]
fn nulls_in_applied_configuration() {
    // A null replacing somebody else's scalar is a conflicting change; forced, it removes it.
    let obj = apply_ok(
        None,
        &json!({"metadata": {"name": "a"}, "spec": {"a": 1}}),
        "alice",
        Scope::Whole,
        T0,
    );
    let null_a = json!({"spec": {"a": null}});
    let err = apply(
        Some(&obj),
        &null_a,
        "bob",
        "v1",
        Scope::Whole,
        false,
        &TestSchema,
        T1,
    )
    .unwrap_err();
    assert_eq!(
        conflict_message(&err),
        "Apply failed with 1 conflict: conflict with \"alice\": .spec.a"
    );
    let obj = apply(
        Some(&obj),
        &null_a,
        "bob",
        "v1",
        Scope::Whole,
        true,
        &TestSchema,
        T1,
    )
    .unwrap();
    assert_eq!(obj["spec"], json!({}));
    assert_eq!(managers(&obj), ["bob/Apply"]);
    // A null for an absent field is owned; a null over a map or list is ignored.
    let live = apply_ok(
        None,
        &json!({"metadata": {"name": "a"}, "spec": {"m": {"k": 1}}}),
        "alice",
        Scope::Whole,
        T0,
    );
    let obj = apply_ok(
        Some(&live),
        &json!({"spec": {"a": null, "m": null}}),
        "bob",
        Scope::Whole,
        T1,
    );
    assert_eq!(obj["spec"], json!({"m": {"k": 1}}));
    assert_eq!(fields(&obj, "bob", "Apply"), json!({"f:spec": {"f:a": {}}}));
    let err = apply(
        Some(&obj),
        &json!({"spec": {"a": 3}}),
        "carol",
        "v1",
        Scope::Whole,
        false,
        &TestSchema,
        T2,
    )
    .unwrap_err();
    assert_eq!(
        conflict_message(&err),
        "Apply failed with 1 conflict: conflict with \"bob\": .spec.a"
    );
    // Server-set metadata in the configuration is ignored, even as null.
    let obj = apply_ok(
        Some(&live),
        &json!({"metadata": {"name": "zzz", "creationTimestamp": null, "uid": "u"}}),
        "x",
        Scope::Whole,
        T1,
    );
    assert_eq!(obj["metadata"]["name"], "a");
    assert!(obj["metadata"].get("uid").is_none());
}

#[test]
fn owner_references_are_keyed_by_uid() {
    let obj = apply_ok(
        None,
        &json!({"metadata": {"name": "a", "ownerReferences": [
        {"apiVersion": "v1", "kind": "X", "name": "o", "uid": "u-1"}]}}),
        "alice",
        Scope::Whole,
        T0,
    );
    assert_eq!(
        fields(&obj, "alice", "Apply").to_string(),
        r#"{"f:metadata":{"f:ownerReferences":{"k:{\"uid\":\"u-1\"}":{".":{},"f:apiVersion":{},"f:kind":{},"f:name":{},"f:uid":{}}}}}"#
    );
}

#[test]
fn odd_inputs_do_not_panic() {
    let live = apply_ok(
        None,
        &json!({"metadata": {"name": "a"}, "spec": {"containers": [{"name": "a"}]}}),
        "alice",
        Scope::Whole,
        T0,
    );
    // Non-object configuration: no-op.
    for cfg in [json!(null), json!([1, 2]), json!("x"), json!(3)] {
        assert_eq!(
            apply(
                Some(&live),
                &cfg,
                "m",
                "v1",
                Scope::Whole,
                false,
                &TestSchema,
                T1
            )
            .unwrap(),
            live
        );
        assert_eq!(
            apply(None, &cfg, "m", "v1", Scope::Main, false, &TestSchema, T1).unwrap(),
            json!({})
        );
    }
    // Lists where maps are expected and the other way round, items without keys,
    // duplicates, scalars in associative lists.
    let weird = json!({"metadata": {"name": "a", "labels": ["x"], "finalizers": {"a": 1}},
        "spec": {"containers": [{"image": "no-name"}, "scalar", {"name": "a"}, {"name": "a", "image": "dup"}, null, [1]],
                 "selector": [1], "x": {"ports": 3}}});
    let obj = apply(
        Some(&live),
        &weird,
        "bob",
        "v1",
        Scope::Whole,
        true,
        &TestSchema,
        T1,
    )
    .unwrap();
    assert_eq!(
        obj["spec"]["containers"][2],
        json!({"name": "a", "image": "dup"})
    );
    let _ = apply(
        Some(&obj),
        &live,
        "bob",
        "v1",
        Scope::Whole,
        false,
        &TestSchema,
        T2,
    );
    let _ = apply(
        Some(&obj),
        &json!({"metadata": "str", "spec": 1}),
        "bob",
        "v1",
        Scope::Whole,
        true,
        &TestSchema,
        T2,
    );
    let _ = apply(
        Some(&json!([1])),
        &weird,
        "bob",
        "v1",
        Scope::Whole,
        true,
        &TestSchema,
        T2,
    );
    // Garbage managedFields.
    for mf in [
        json!("x"),
        json!([1]),
        json!([{"fieldsV1": 3, "operation": 5}]),
        json!([{"fieldsV1": {"f:spec": 1, "k:{bad": {}}}]),
    ] {
        let mut o = obj.clone();
        o["metadata"]["managedFields"] = mf;
        let _ = apply(
            Some(&o),
            &weird,
            "bob",
            "v1",
            Scope::Whole,
            false,
            &TestSchema,
            T2,
        );
        let mut n = o.clone();
        n["spec"] = json!([1, {"a": null}]);
        update(Some(&o), &mut n, "w", "v1", Scope::Whole, &TestSchema, T2);
        update(None, &mut n, "w", "v1", Scope::Main, &TestSchema, T2);
    }
    let mut scalar = json!(5);
    update(
        Some(&live),
        &mut scalar,
        "w",
        "v1",
        Scope::Whole,
        &TestSchema,
        T2,
    );
    assert_eq!(scalar, json!(5));
    let mut meta_str = json!({"metadata": "x", "spec": {"a": 1}});
    update(
        None,
        &mut meta_str,
        "w",
        "v1",
        Scope::Whole,
        &DeducedSchema,
        T2,
    );
    assert_eq!(meta_str["metadata"], "x");
    assert_eq!(conflict_message(&[]), "Apply failed with 0 conflicts: ");
}

#[test]
fn type_changes_are_modifications() {
    let obj = apply_ok(
        None,
        &json!({"metadata": {"name": "a"}, "spec": {"v": {"x": 1}}}),
        "alice",
        Scope::Whole,
        T0,
    );
    // The map's fields are removed (not modified), like structured-merge-diff: no conflict,
    // alice just loses them.
    let obj = apply_ok(
        Some(&obj),
        &json!({"spec": {"v": 3}}),
        "bob",
        Scope::Whole,
        T1,
    );
    assert_eq!(obj["spec"]["v"], 3);
    assert!(entry(&obj, "alice", "Apply").is_none());
    assert_eq!(fields(&obj, "bob", "Apply"), json!({"f:spec": {"f:v": {}}}));
    // The other way round, the scalar's owner conflicts.
    let err = apply(
        Some(&obj),
        &json!({"spec": {"v": {"x": 1}}}),
        "alice",
        "v1",
        Scope::Whole,
        false,
        &TestSchema,
        T2,
    )
    .unwrap_err();
    assert_eq!(
        conflict_message(&err),
        "Apply failed with 1 conflict: conflict with \"bob\": .spec.v"
    );
}

/// Like the real server, an applied item that omits a defaulted key field (`protocol`) is the
/// live item that has the default, not a new one.
#[test]
fn omitted_key_fields_take_their_schema_default() {
    struct Defaulted;
    impl Schema for Defaulted {
        fn list_type(&self, path: &[&str]) -> ListType {
            TestSchema.list_type(path)
        }
        fn list_key_default(&self, _path: &[&str], key: &str) -> Option<Value> {
            (key == "protocol").then(|| json!("TCP"))
        }
    }
    let cfg = |image: &str| {
        json!({"spec": {"template": {"spec": {"containers": [
            {"name": "app", "image": image, "ports": [{"containerPort": 80, "name": "http"}]}
        ]}}}})
    };
    let mut live = apply(
        None,
        &cfg("a"),
        "ctl",
        "apps/v1",
        Scope::Main,
        false,
        &Defaulted,
        T0,
    )
    .unwrap();
    // The server defaults the protocol after the merge.
    live["spec"]["template"]["spec"]["containers"][0]["ports"][0]["protocol"] = json!("TCP");
    let obj = apply(
        Some(&live),
        &cfg("b"),
        "ctl",
        "apps/v1",
        Scope::Main,
        false,
        &Defaulted,
        T1,
    )
    .unwrap();
    let c = &obj["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["image"], "b");
    assert_eq!(
        c["ports"],
        json!([{"containerPort": 80, "name": "http", "protocol": "TCP"}])
    );
    let ports = &fields(&obj, "ctl", "Apply")["f:spec"]["f:template"]["f:spec"]["f:containers"][r#"k:{"name":"app"}"#]
        ["f:ports"];
    assert!(
        ports[r#"k:{"containerPort":80,"protocol":"TCP"}"#].is_object(),
        "{ports}"
    );
}
