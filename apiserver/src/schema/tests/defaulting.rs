//! Tests of defaulting.

use super::*;

#[test]
fn defaults_nested_in_defaults_lists_and_maps() {
    let s = spec_schema(json!({
        "template": {
            "type": "object",
            "default": {},
            "properties": {
                "size": {"type": "integer", "default": 3},
                "inner": {"type": "object", "default": {"x": 1}, "properties": {"y": {"type": "string", "default": "why"}}}
            }
        },
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "default": {"name": "dflt"},
                "properties": {"name": {"type": "string"}, "weight": {"type": "integer", "default": 10}}
            }
        },
        "byName": {
            "type": "object",
            "additionalProperties": {"type": "object", "properties": {"on": {"type": "boolean", "default": true}}}
        }
    }));
    let mut obj = json!({"spec": {"items": [{"name": "a"}, {"name": "b", "weight": 2}, null], "byName": {"k": {}}}});
    s.apply_defaults(&mut obj);
    assert_eq!(
        obj,
        json!({"spec": {
            "template": {"size": 3, "inner": {"x": 1, "y": "why"}},
            "items": [{"name": "a", "weight": 10}, {"name": "b", "weight": 2}, {"name": "dflt", "weight": 10}],
            "byName": {"k": {"on": true}}
        }})
    );
}

#[test]
fn defaults_replace_non_nullable_nulls_only() {
    let s = spec_schema(json!({
        "a": {"type": "string", "default": "A"},
        "b": {"type": "string", "nullable": true, "default": "B"}
    }));
    let mut obj = json!({"spec": {"a": null, "b": null}});
    s.apply_defaults(&mut obj);
    assert_eq!(obj, json!({"spec": {"a": "A", "b": null}}));
}

#[test]
fn defaults_never_touch_root_metadata() {
    let s = Schema::new(&json!({
        "type": "object",
        "properties": {
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "default": "dflt"}}},
            "kind": {"type": "string", "default": "Other"},
            "spec": {"type": "object", "default": {}}
        }
    }))
    .unwrap();
    let mut obj = json!({"metadata": {}, "kind": "WebApp"});
    s.apply_defaults(&mut obj);
    assert_eq!(obj, json!({"metadata": {}, "kind": "WebApp", "spec": {}}));
}
