//! Tests of pruning and of embedded resources.

use super::*;

#[test]
fn prunes_unknown_fields_and_reports_paths() {
    let s = Schema::new(&json!({
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {
                "image": {"type": "string"},
                "items": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "nested": {"type": "object", "properties": {"kind": {"type": "string"}}}
            }},
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true,
                "properties": {"known": {"type": "object", "properties": {"a": {"type": "string"}}}}}
        }
    }))
    .unwrap();
    let mut obj = json!({
        "apiVersion": "example.dev/v1", "kind": "WebApp", "metadata": {"name": "x", "whatever": 1},
        "spec": {"image": "i", "foo": 1, "items": [{"name": "a", "extra": true}], "labels": {"any": "thing"},
            "nested": {"kind": "K", "apiVersion": "v1", "metadata": {}}},
        "status": {"free": {"form": [1, 2]}, "known": {"a": "x", "b": "y"}},
        "top": 1
    });
    let pruned = s.prune(&mut obj);
    assert_eq!(
        pruned,
        [
            "spec.foo",
            "spec.items[0].extra",
            "spec.nested.apiVersion",
            "spec.nested.metadata",
            "status.known.b",
            "top"
        ]
    );
    assert_eq!(
        obj,
        json!({
            "apiVersion": "example.dev/v1", "kind": "WebApp", "metadata": {"name": "x", "whatever": 1},
            "spec": {"image": "i", "items": [{"name": "a"}], "labels": {"any": "thing"}, "nested": {"kind": "K"}},
            "status": {"free": {"form": [1, 2]}, "known": {"a": "x"}}
        })
    );
    assert!(s.prune(&mut obj).is_empty());
}

#[test]
fn root_type_meta_survives_schemas_that_do_not_mention_it() {
    let s = Schema::new(&json!({"type": "object", "properties": {"spec": {"type": "object"}}}))
        .unwrap();
    let mut obj =
        json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "n"}, "spec": {"x": 1}});
    assert_eq!(s.prune(&mut obj), ["spec.x"]);
    assert_eq!(
        obj,
        json!({"apiVersion": "v1", "kind": "K", "metadata": {"name": "n"}, "spec": {}})
    );
}

#[test]
fn embedded_resources_keep_type_and_object_meta() {
    let s = spec_schema(json!({
        "template": {"type": "object", "x-kubernetes-embedded-resource": true,
            "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}}}}},
        "raw": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}
    }));
    let mut obj = json!({"spec": {
        "template": {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "labels": {"a": "b"}, "bogus": 1, "annotations": {}, "uid": null,
                "generation": 0, "deletionGracePeriodSeconds": 0},
            "spec": {"a": "x", "b": "y"}, "extra": 1},
        "raw": {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}, "metadata": null}
    }});
    let pruned = s.prune(&mut obj);
    assert_eq!(
        pruned,
        [
            "spec.template.extra",
            "spec.template.spec.b",
            "spec.template.metadata.bogus"
        ]
    );
    assert_eq!(
        obj,
        json!({"spec": {
            "template": {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "p", "labels": {"a": "b"}, "deletionGracePeriodSeconds": 0}, "spec": {"a": "x"}},
            "raw": {"apiVersion": "v1", "kind": "ConfigMap", "data": {"k": "v"}, "metadata": {}}
        }})
    );
    assert!(s.validate(&obj).is_empty());
}

#[test]
fn embedded_resource_validation() {
    let s = spec_schema(json!({
        "template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
        "list": {"type": "array", "items": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}
    }));
    assert_eq!(
        strings(&s.validate(&json!({"spec": {"template": {}}}))),
        [
            "spec.template.apiVersion: Required value",
            "spec.template.kind: Required value"
        ]
    );
    assert_eq!(
        strings(&s.validate(&json!({"spec": {"list": [{"apiVersion": "a/b/c", "kind": 5, "metadata": {"name": "a/b", "namespace": "Bad"}}]}}))),
        [
            r#"spec.list[0].apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c"#,
            "spec.list[0].kind: Invalid value: 5: must be a string",
            r#"spec.list[0].metadata.name: Invalid value: "a/b": may not contain '/'"#,
            r#"spec.list[0].metadata.namespace: Invalid value: "Bad": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"#,
        ]
    );
    assert_eq!(
        strings(&s.validate(&json!({"spec": {"template": {"apiVersion": "", "kind": "my_kind", "metadata": {"labels": "x"}}}}))),
        [
            r#"spec.template.apiVersion: Invalid value: "": must not be empty"#,
            r#"spec.template.kind: Invalid value: "my_kind": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"#,
            r#"spec.template.metadata: Invalid value: {"labels":"x"}: json: cannot unmarshal string into Go struct field ObjectMeta.labels of type map[string]string"#,
        ]
    );
    assert!(s.validate(&json!({"spec": {"template": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "ok"}}}})).is_empty());
}

#[test]
fn additional_properties_false_keeps_scalars_but_prunes_inside_objects() {
    // The server prunes values of `additionalProperties: false` against no schema at all.
    let s = spec_schema(json!({"o": {"type": "object", "additionalProperties": false}}));
    let mut obj = json!({"spec": {"o": {"x": 1, "y": {"z": 1}}}});
    assert_eq!(s.prune(&mut obj), ["spec.o.y.z"]);
    assert_eq!(obj, json!({"spec": {"o": {"x": 1, "y": {}}}}));
}
