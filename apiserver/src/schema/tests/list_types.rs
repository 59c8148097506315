//! Tests of list types (`set`, `map`) and of the list and map types by path.

use super::*;

fn list_schema() -> Schema {
    spec_schema(json!({
        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "properties": {
                "name": {"type": "string"}, "port": {"type": "integer"},
                "subs": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "integer"}}
            }}},
        "pairs": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "protocol"],
            "items": {"type": "object", "properties": {"name": {"type": "string"}, "protocol": {"type": "string"}}}},
        "plain": {"type": "array", "items": {"type": "string"}},
        "atomic": {"type": "array", "x-kubernetes-list-type": "atomic", "items": {"type": "string"}},
        "selector": {"type": "object", "x-kubernetes-map-type": "atomic", "additionalProperties": {"type": "string"}},
        "maps": {"type": "object", "additionalProperties": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}
    }))
}

#[test]
fn list_set_duplicates() {
    let s = list_schema();
    let errors =
        s.validate(&json!({"spec": {"tags": ["a", "b", "a", "a", "b"], "plain": ["a", "a"]}}));
    assert_eq!(
        strings(&errors),
        [
            r#"spec.tags[2]: Duplicate value: "a""#,
            r#"spec.tags[4]: Duplicate value: "b""#
        ]
    );
    assert_eq!(errors[0].reason(), "FieldValueDuplicate");
    assert_eq!(
        strings(&s.validate(&json!({"spec": {"maps": {"k": ["x", "x"]}}}))),
        [r#"spec.maps[k][1]: Duplicate value: "x""#]
    );
}

#[test]
fn list_map_duplicates() {
    let s = list_schema();
    assert!(
        s.validate(
            &json!({"spec": {"ports": [{"name": "a", "port": 1}, {"name": "b", "port": 1}]}})
        )
        .is_empty()
    );
    assert_eq!(
        strings(&s.validate(&json!({"spec": {"ports": [{"name": "a", "port": 1}, {"name": "a", "port": 2}, {"port": 3}, {}]}}))),
        [r#"spec.ports[1]: Duplicate value: {"name":"a"}"#, "spec.ports[3]: Duplicate value: {}"]
    );
    assert_eq!(
        strings(&s.validate(&json!({"spec": {"pairs": [
            {"name": "a", "protocol": "TCP"}, {"name": "a", "protocol": "UDP"}, {"protocol": "TCP", "name": "a"}
        ]}}))),
        [r#"spec.pairs[2]: Duplicate value: {"name":"a","protocol":"TCP"}"#]
    );
    assert_eq!(
        strings(&s.validate(&json!({"spec": {"ports": [{"name": "a", "subs": [1, 1]}]}}))),
        ["spec.ports[0].subs[1]: Duplicate value: 1"]
    );
    assert_eq!(
        strings(&s.validate(&json!({"spec": {"ports": [{"name": "a"}, "b"]}}))),
        [
            r#"spec.ports[1]: Invalid value: "string": spec.ports[1] in body must be of type object: "string""#,
            r#"spec.ports[1]: Invalid value: "b": must be an object for an array of list-type map"#,
        ]
    );
}

#[test]
fn list_and_map_types_by_path() {
    let s = list_schema();
    assert_eq!(s.list_type(&["spec", "tags"]), ListType::Set);
    assert_eq!(
        s.list_type(&["spec", "ports"]),
        ListType::Map(vec!["name".into()])
    );
    assert_eq!(
        s.list_type(&["spec", "pairs"]),
        ListType::Map(vec!["name".into(), "protocol".into()])
    );
    assert_eq!(s.list_type(&["spec", "ports", "subs"]), ListType::Set);
    assert_eq!(s.list_type(&["spec", "plain"]), ListType::Atomic);
    assert_eq!(s.list_type(&["spec", "atomic"]), ListType::Atomic);
    assert_eq!(s.list_type(&["spec", "maps", "anykey"]), ListType::Set);
    assert_eq!(s.list_type(&["spec", "nope", "deeper"]), ListType::Atomic);
    assert_eq!(s.list_type(&[]), ListType::Atomic);
    assert!(s.map_is_atomic(&["spec", "selector"]));
    assert!(!s.map_is_atomic(&["spec"]));
    assert!(!s.map_is_atomic(&["spec", "maps"]));
    assert!(!s.map_is_atomic(&["spec", "unknown"]));
}
