//! Tests of the ratcheting of OpenAPI schema errors on update (`ratcheting.rs`).

use super::*;

#[test]
fn unchanged_values_ratchet_changed_ones_do_not() {
    let schema = Schema::new(&json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "color": {"type": "string", "enum": ["red"]},
        "other": {"type": "string"},
        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "properties": {"name": {"type": "string"}, "protocol": {"type": "string", "enum": ["TCP"]}}}},
        "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string", "enum": ["a"]}}
    }}}}))
    .unwrap();
    let old = json!({"spec": {"color": "green", "other": "x", "ports": [{"name": "a", "protocol": "SCTP"}], "set": ["b"]}});
    let fields = |new: &Value| -> Vec<String> {
        schema
            .validate_update(new, Some(&old))
            .into_iter()
            .map(|e| e.field)
            .collect()
    };
    let mut new = old.clone();
    new["spec"]["other"] = json!("y");
    assert!(fields(&new).is_empty(), "{:?}", fields(&new));
    new["spec"]["ports"] =
        json!([{"name": "b", "protocol": "UDP"}, {"name": "a", "protocol": "SCTP"}]);
    assert_eq!(fields(&new), ["spec.ports[0].protocol"]);
    new["spec"]["set"] = json!(["b", "a"]);
    new["spec"]["color"] = json!("blue");
    assert_eq!(
        fields(&new),
        ["spec.color", "spec.ports[0].protocol", "spec.set[0]"]
    );
    assert_eq!(schema.validate(&new).len(), 4);
}
