//! Tests that odd schemas and values never panic.

use super::*;

#[test]
fn no_panic_on_odd_schemas_and_values() {
    let schemas = [
        json!({}),
        json!({"type": "object"}),
        json!({"type": "array"}),
        json!({"x-kubernetes-preserve-unknown-fields": true}),
        json!({"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}),
        json!({"type": "object", "additionalProperties": true}),
        json!({"type": "object", "additionalProperties": false, "minProperties": -1, "maxProperties": 0}),
        json!({"type": "string", "format": "date-time", "minLength": -5, "maxLength": 0, "enum": []}),
        json!({"type": "integer", "format": "int32", "multipleOf": 0.5, "minimum": -1e300, "maximum": 1e300}),
        json!({"type": "number", "multipleOf": 1e-300, "exclusiveMinimum": true}),
        json!({"type": "array", "x-kubernetes-list-type": "map", "items": {"type": "object"}}),
        json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["a", "b"], "minItems": 99, "uniqueItems": true}),
        json!({"type": "object", "required": ["a", "a"], "properties": {"a": {"type": "object", "default": {"b": null}, "nullable": true,
            "properties": {"b": {"type": "array", "default": [null], "items": {"type": "string", "default": "d"}}}}}}),
        json!({"allOf": [{}, {"not": {}}], "anyOf": [{"anyOf": [{"oneOf": [{}, {}]}]}], "oneOf": [{"enum": [null, {"a": [1.5]}]}]}),
        json!({"type": "object", "properties": {"spec": {"x-kubernetes-int-or-string": true, "pattern": "^(a|b)*$", "format": "ipv6"}},
            "additionalProperties": {"type": "array", "items": {"type": "array", "x-kubernetes-list-type": "set"}}}),
    ];
    let values = [
        json!(null),
        json!(0),
        json!(-0.0),
        json!(18446744073709551615u64),
        json!(-9223372036854775808i64),
        json!(1.7976931348623157e308),
        json!("é\u{0}\u{10FFFF}"),
        json!([]),
        json!([null, [null, [null]], {"": {}}]),
        json!({"spec": null, "apiVersion": 1, "kind": [], "metadata": "m", "a": {"b": [1, 1, {"a": 1}, {"a": 1}]}}),
        json!({"spec": {"a": 1}, "x": [[1, 1], [1, 1]], "y": [{"a": 1, "b": 2}, null, {"a": 1, "b": 2}, "s"]}),
        json!({"a": null, "b": {"c": [null, "x"]}}),
    ];
    for schema in &schemas {
        let s = Schema::new(schema).unwrap();
        for value in &values {
            let mut v = value.clone();
            let _ = s.prune(&mut v);
            s.apply_defaults(&mut v);
            for e in s.validate(&v).iter().chain(s.validate(value).iter()) {
                let _ = (e.to_string(), e.reason(), e.body());
            }
            let _ = invalid_message("K", "g", "n", &s.validate(value));
            for path in [&[][..], &["spec"][..], &["a", "b", "c"][..], &[""][..]] {
                let _ = (s.list_type(path), s.map_is_atomic(path));
            }
        }
    }
    for p in [
        "[",
        "a{",
        "\\Q",
        "[[:",
        "[]",
        "[^]]",
        "x{2,1}",
        "\\",
        "(?P<n>a)",
        "[a-\\d]",
        "\\pL{1,2}",
    ] {
        let _ = Schema::new(&json!({"type": "string", "pattern": p}));
    }
    for f in [
        "ipv6",
        "ipv4",
        "cidr",
        "mac",
        "uri",
        "email",
        "duration",
        "datetime",
        "date",
        "isbn",
        "creditcard",
        "hostname",
    ] {
        for s in [
            "",
            ":",
            "::",
            "%",
            "%%",
            "/",
            "[",
            "1.2.3.4/",
            "a@",
            "@",
            "<>",
            "\"",
            "\"\"@x",
            "9".repeat(40).as_str(),
            "é::1",
            "1:2:3:4:5:6:1.2.3.4",
        ] {
            let _ = validates_format(f, s);
        }
    }
}
