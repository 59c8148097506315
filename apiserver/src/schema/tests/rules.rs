//! Tests of the individual validation rules and their messages.

use super::*;

#[test]
fn enum_messages() {
    let props = json!({"x": {"type": "string", "enum": ["a", "b"]}, "n": {"type": "number", "enum": [1, 2.5, "z"]}});
    assert!(check(props.clone(), json!({"x": "a", "n": 2.5})).is_empty());
    let errors = spec_schema(props.clone()).validate(&json!({"spec": {"x": "foo"}}));
    assert_eq!(
        strings(&errors),
        [r#"spec.x: Unsupported value: "foo": supported values: "a", "b""#]
    );
    assert_eq!(errors[0].reason(), "FieldValueNotSupported");
    assert_eq!(
        check(props.clone(), json!({"n": 3})),
        [r#"spec.n: Unsupported value: 3: supported values: "1", "2.5", "z""#]
    );
    assert_eq!(
        check(props, json!({"x": true})),
        [
            r#"spec.x: Invalid value: "boolean": spec.x in body must be of type string: "boolean""#,
            r#"spec.x: Unsupported value: true: supported values: "a", "b""#,
        ]
    );
}

#[test]
fn enum_uses_go_conversions() {
    // The server converts the value to the enum value's Go type before comparing.
    let props =
        json!({"n": {"type": "number", "enum": [1]}, "f": {"type": "integer", "enum": [2.0]}});
    assert!(check(props.clone(), json!({"n": 1.0})).is_empty());
    assert!(check(props.clone(), json!({"n": 1.7})).is_empty());
    assert!(check(props, json!({"f": 2})).is_empty());
    let nullable = json!({"x": {"type": "string", "nullable": true, "enum": ["a"]}});
    assert_eq!(
        check(nullable, json!({"x": null})),
        [r#"spec.x: Unsupported value: null: supported values: "a""#]
    );
}

#[test]
fn bounds_messages() {
    let props = json!({
        "max": {"type": "integer", "maximum": 10},
        "xmax": {"type": "integer", "maximum": 10, "exclusiveMaximum": true},
        "xmin": {"type": "integer", "minimum": 0, "exclusiveMinimum": true},
        "f": {"type": "number", "maximum": 1000000, "minimum": 0.5}
    });
    assert!(
        check(
            props.clone(),
            json!({"max": 10, "xmax": 9, "xmin": 1, "f": 0.5})
        )
        .is_empty()
    );
    assert_eq!(
        check(props.clone(), json!({"max": 11, "xmax": 10, "xmin": 0})),
        [
            "spec.max: Invalid value: 11: spec.max in body should be less than or equal to 10",
            "spec.xmax: Invalid value: 10: spec.xmax in body should be less than 10",
            "spec.xmin: Invalid value: 0: spec.xmin in body should be greater than 0",
        ]
    );
    assert_eq!(
        check(props.clone(), json!({"f": 2000000.5})),
        [
            "spec.f: Invalid value: 2.0000005e+06: spec.f in body should be less than or equal to 1e+06"
        ]
    );
    assert_eq!(
        check(props, json!({"f": 0.25})),
        ["spec.f: Invalid value: 0.25: spec.f in body should be greater than or equal to 0.5"]
    );
}

#[test]
fn integer_bounds_are_truncated_like_the_server() {
    // For integer values the server compares against int64(bound).
    let props = json!({"n": {"type": "integer", "minimum": 0.5, "maximum": 10.9}});
    assert!(check(props.clone(), json!({"n": 0})).is_empty());
    assert_eq!(
        check(props, json!({"n": 11})),
        ["spec.n: Invalid value: 11: spec.n in body should be less than or equal to 10"]
    );
}

#[test]
fn multiple_of_messages() {
    let props = json!({"i": {"type": "integer", "multipleOf": 2}, "f": {"type": "number", "multipleOf": 0.1}});
    assert!(check(props.clone(), json!({"i": -4, "f": 0.3})).is_empty());
    assert_eq!(
        check(props, json!({"i": 5, "f": 0.35})),
        [
            "spec.f: Invalid value: 0.35: spec.f in body should be a multiple of 0.1",
            "spec.i: Invalid value: 5: spec.i in body should be a multiple of 2",
        ]
    );
}

#[test]
fn string_messages() {
    let props = json!({
        "max": {"type": "string", "maxLength": 3, "pattern": "^[a-z]+$"},
        "one": {"type": "string", "maxLength": 1},
        "min": {"type": "string", "minLength": 2},
        "pat": {"type": "string", "pattern": "^[a-z]+$"}
    });
    assert!(
        check(
            props.clone(),
            json!({"max": "abc", "min": "ab", "pat": "xyz"})
        )
        .is_empty()
    );
    assert!(
        check(
            json!({"u": {"type": "string", "maxLength": 3}}),
            json!({"u": "ééé"})
        )
        .is_empty()
    );
    let errors = spec_schema(props.clone()).validate(&json!({"spec": {"max": "ABCD"}}));
    // Only the first failing string check is reported.
    assert_eq!(
        strings(&errors),
        ["spec.max: Too long: may not be more than 3 bytes"]
    );
    assert_eq!(errors[0].reason(), "FieldValueTooLong");
    assert_eq!(errors[0].body(), "Too long: may not be more than 3 bytes");
    assert_eq!(
        check(props.clone(), json!({"one": "ab"})),
        ["spec.one: Too long: may not be more than 1 byte"]
    );
    assert_eq!(
        check(props.clone(), json!({"min": "a"})),
        [r#"spec.min: Invalid value: "a": spec.min in body should be at least 2 chars long"#]
    );
    assert_eq!(
        check(props, json!({"pat": "A1"})),
        [r#"spec.pat: Invalid value: "A1": spec.pat in body should match '^[a-z]+$'"#]
    );
}

#[test]
fn patterns_have_go_semantics() {
    let props = json!({
        "d": {"type": "string", "pattern": "^\\d+$"},
        "w": {"type": "string", "pattern": "^[\\w-]+$"},
        "b": {"type": "string", "pattern": "\\bfoo\\b"},
        "brace": {"type": "string", "pattern": "^a{$"},
        "posix": {"type": "string", "pattern": "^[[:alpha:]]+$"},
        "quote": {"type": "string", "pattern": "^\\Q1+1\\E$"},
        "bracket": {"type": "string", "pattern": "^[a[]+$"}
    });
    assert!(check(
        props.clone(),
        json!({"d": "123", "w": "a-b_c", "b": "a foo b", "brace": "a{", "posix": "abc", "quote": "1+1", "bracket": "a[a"})
    )
    .is_empty());
    assert_eq!(check(props.clone(), json!({"d": "١٢٣"})).len(), 1);
    assert_eq!(check(props.clone(), json!({"w": "é"})).len(), 1);
    assert_eq!(check(props, json!({"b": "éfoo"})).len(), 0);
}

#[test]
fn format_messages() {
    let props = json!({
        "t": {"type": "string", "format": "date-time"},
        "b": {"type": "string", "format": "byte"},
        "u": {"type": "string", "format": "uuid"},
        "d": {"type": "string", "format": "date"},
        "i32": {"type": "integer", "format": "int32"},
        "i64": {"type": "integer", "format": "int64"},
        "odd": {"type": "string", "format": "no-such-format"},
        "ip": {"type": "string", "format": "ipv4"},
        "short": {"type": "string", "format": "k8s-short-name"}
    });
    assert!(check(
        props.clone(),
        json!({
            "t": "2024-01-31T23:59:59.123+01:00", "b": "aGVsbG8=", "u": "123e4567-e89b-12d3-a456-426614174000",
            "d": "2024-02-29", "i32": 3000000000i64, "i64": 1, "odd": "anything", "ip": "010.1.1.1", "short": "a-b"
        })
    )
    .is_empty());
    let errors = spec_schema(props.clone()).validate(&json!({"spec": {"t": "yesterday"}}));
    assert_eq!(
        strings(&errors),
        [
            r#"spec.t: Invalid value: "yesterday": spec.t in body must be of type date-time: "yesterday""#
        ]
    );
    assert_eq!(errors[0].reason(), "FieldValueTypeInvalid");
    assert_eq!(
        check(
            props.clone(),
            json!({"b": "not base64!", "u": "nope", "d": "2023-02-29", "ip": "1.2.3", "short": "A"})
        ),
        [
            r#"spec.b: Invalid value: "not base64!": spec.b in body must be of type byte: "not base64!""#,
            r#"spec.d: Invalid value: "2023-02-29": spec.d in body must be of type date: "2023-02-29""#,
            r#"spec.ip: Invalid value: "1.2.3": spec.ip in body must be of type ipv4: "1.2.3""#,
            r#"spec.short: Invalid value: "A": spec.short in body must be of type k8s-short-name: "A""#,
            r#"spec.u: Invalid value: "nope": spec.u in body must be of type uuid: "nope""#,
        ]
    );
    // A non-string value for a string with a format is rejected with the format's name.
    assert_eq!(
        check(props.clone(), json!({"t": 5})),
        [r#"spec.t: Invalid value: "int64": spec.t in body must be of type date-time: "int64""#]
    );
    // ... while an array slips through the server's type check.
    assert!(check(props, json!({"t": ["x"]})).is_empty());
}

#[test]
fn array_messages() {
    let props = json!({
        "min": {"type": "array", "minItems": 1, "items": {"type": "string"}},
        "max": {"type": "array", "maxItems": 2},
        "one": {"type": "array", "maxItems": 1},
        "uniq": {"type": "array", "uniqueItems": true}
    });
    assert!(
        check(
            props.clone(),
            json!({"min": ["a"], "max": [1, 2], "uniq": [1, 1.0, "1"]})
        )
        .is_empty()
    );
    let errors = spec_schema(props.clone()).validate(&json!({"spec": {"max": ["a", "b", "c"]}}));
    assert_eq!(
        strings(&errors),
        ["spec.max: Too many: 3: must have at most 2 items"]
    );
    assert_eq!(errors[0].reason(), "FieldValueTooMany");
    assert_eq!(errors[0].value, Some(json!(3)));
    assert_eq!(
        check(props.clone(), json!({"one": [1, 2]})),
        ["spec.one: Too many: 2: must have at most 1 item"]
    );
    assert_eq!(
        check(props.clone(), json!({"min": []})),
        ["spec.min: Invalid value: 0: spec.min in body should have at least 1 items"]
    );
    assert_eq!(
        check(props, json!({"uniq": [{"a": 1}, {"a": 1}]})),
        [r#"spec.uniq: Invalid value: "": spec.uniq in body shouldn't contain duplicates"#]
    );
}

#[test]
fn item_paths() {
    let props = json!({"items": {"type": "array", "items": {
        "type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}
    }}});
    assert_eq!(
        check(props, json!({"items": [{"name": 1}, {}, {"name": "ok"}]})),
        [
            r#"spec.items[0].name: Invalid value: "integer": spec.items[0].name in body must be of type string: "integer""#,
            "spec.items[1].name: Required value",
        ]
    );
}

#[test]
fn object_messages() {
    let props = json!({
        "max": {"type": "object", "maxProperties": 1, "additionalProperties": {"type": "string"}},
        "min": {"type": "object", "minProperties": 2, "additionalProperties": {"type": "string"}},
        "labels": {"type": "object", "additionalProperties": {"type": "integer"}},
        "closed": {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": false}
    });
    assert!(check(props.clone(), json!({"max": {"a": "1"}, "min": {"a": "1", "b": "2"}, "labels": {"x": 1}, "closed": {"a": "x"}})).is_empty());
    assert_eq!(
        check(props.clone(), json!({"max": {"a": "1", "b": "2"}})),
        ["spec.max: Too many: 2: must have at most 1 item"]
    );
    assert_eq!(
        check(props.clone(), json!({"min": {"a": "1"}})),
        ["spec.min: Invalid value: 1: spec.min in body should have at least 2 properties"]
    );
    assert_eq!(
        check(props.clone(), json!({"labels": {"x": "y"}})),
        [
            r#"spec.labels.x: Invalid value: "string": spec.labels.x in body must be of type integer: "string""#
        ]
    );
    assert_eq!(
        check(props, json!({"closed": {"a": "x", "b": 1}})),
        [r#"spec.closed: Invalid value: "b": spec.closed.b in body is a forbidden property"#]
    );
}

#[test]
fn nullable_and_null() {
    let props = json!({"n": {"type": "string", "nullable": true}, "s": {"type": "string"}});
    assert!(check(props.clone(), json!({"n": null})).is_empty());
    assert_eq!(
        check(props.clone(), json!({"s": null})),
        [r#"spec.s: Invalid value: "null": spec.s in body must be of type string: "null""#]
    );
    // Pruning drops the null of a non-nullable field without default, as the server does.
    let s = spec_schema(props);
    let mut obj = json!({"spec": {"n": null, "s": null}});
    assert!(s.prune(&mut obj).is_empty());
    assert_eq!(obj, json!({"spec": {"n": null}}));
    assert!(s.validate(&obj).is_empty());
    // Null list items stay and fail.
    let list = json!({"l": {"type": "array", "items": {"type": "string"}}});
    let s = spec_schema(list);
    let mut obj = json!({"spec": {"l": ["a", null]}});
    s.prune(&mut obj);
    assert_eq!(
        strings(&s.validate(&obj)),
        [r#"spec.l[1]: Invalid value: "null": spec.l[1] in body must be of type string: "null""#]
    );
}

#[test]
fn int_or_string() {
    let props = json!({"port": {"x-kubernetes-int-or-string": true}, "np": {"x-kubernetes-int-or-string": true, "nullable": true}});
    assert!(check(props.clone(), json!({"port": 80, "np": null})).is_empty());
    assert!(check(props.clone(), json!({"port": "http"})).is_empty());
    assert_eq!(
        check(props.clone(), json!({"port": true})),
        [
            r#"spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean""#
        ]
    );
    assert_eq!(
        check(props, json!({"port": null})),
        [
            r#"spec.port: Invalid value: "null": spec.port in body must be of type integer,string: "null""#
        ]
    );
}

#[test]
fn int_or_string_with_any_of_matches_the_server() {
    // The same cases as the server's own tests.
    let s = Schema::new(&json!({"type": "object", "properties": {"field": {
        "nullable": true, "x-kubernetes-int-or-string": true,
        "anyOf": [{"type": "integer"}, {"type": "string"}]
    }}}))
    .unwrap();
    for ok in [
        json!({}),
        json!({"field": null}),
        json!({"field": 42}),
        json!({"field": "foo"}),
    ] {
        assert!(s.validate(&ok).is_empty(), "{ok}");
    }
    assert_eq!(
        sorted(strings(&s.validate(&json!({"field": true})))),
        [
            r#"<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)"#,
            r#"field: Invalid value: "boolean": field in body must be of type integer,string: "boolean""#,
            r#"field: Invalid value: "boolean": field in body must be of type integer: "boolean""#,
        ]
    );
    let s = Schema::new(&json!({"type": "object", "properties": {"field": {
        "nullable": true, "x-kubernetes-int-or-string": true,
        "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}]
    }}}))
    .unwrap();
    let errors = s.validate(&json!({"field": 1.2}));
    assert_eq!(
        sorted(strings(&errors)),
        [
            r#"<nil>: Invalid value: "": "field" must validate all the schemas (allOf). None validated"#,
            r#"<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)"#,
            r#"field: Invalid value: "number": field in body must be of type integer,string: "number""#,
            r#"field: Invalid value: "number": field in body must be of type integer: "number""#,
        ]
    );
    assert!(
        errors
            .iter()
            .any(|e| e.field == "<nil>" && e.reason() == "FieldValueInvalid")
    );
}

#[test]
fn composition_messages() {
    let props = json!({
        "any": {"type": "integer", "anyOf": [{"minimum": 5}, {"maximum": 1}]},
        "one": {"type": "integer", "oneOf": [{"minimum": 0}, {"maximum": 10}]},
        "all": {"type": "integer", "allOf": [{"minimum": 0}, {"maximum": 10}]},
        "not": {"type": "integer", "not": {"minimum": 100}}
    });
    assert!(
        check(
            props.clone(),
            json!({"any": 0, "one": 20, "all": 5, "not": 5})
        )
        .is_empty()
    );
    assert_eq!(
        check(props.clone(), json!({"any": 3})),
        [
            r#"<nil>: Invalid value: "": "spec.any" must validate at least one schema (anyOf)"#,
            "spec.any: Invalid value: 3: spec.any in body should be greater than or equal to 5",
        ]
    );
    assert_eq!(
        check(props.clone(), json!({"one": 5})),
        [
            r#"<nil>: Invalid value: "": "spec.one" must validate one and only one schema (oneOf). Found 2 valid alternatives"#
        ]
    );
    assert_eq!(
        check(props.clone(), json!({"all": 11})),
        [
            "spec.all: Invalid value: 11: spec.all in body should be less than or equal to 10",
            r#"<nil>: Invalid value: "": "spec.all" must validate all the schemas (allOf)"#,
        ]
    );
    assert_eq!(
        check(props.clone(), json!({"not": 200})),
        [r#"<nil>: Invalid value: "": "spec.not" must not validate the schema (not)"#]
    );
    let none = json!({"one": {"type": "integer", "oneOf": [{"minimum": 10}, {"maximum": -10}]}});
    assert_eq!(
        check(none, json!({"one": 0})),
        [
            r#"<nil>: Invalid value: "": "spec.one" must validate one and only one schema (oneOf). Found none valid"#,
            "spec.one: Invalid value: 0: spec.one in body should be greater than or equal to 10",
        ]
    );
    // Composition also applies to nested value validations.
    let nested = json!({"o": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}});
    assert!(check(nested.clone(), json!({"o": {"a": "x"}})).is_empty());
    assert_eq!(
        check(nested, json!({"o": {}})),
        [
            r#"<nil>: Invalid value: "": "spec.o" must validate one and only one schema (oneOf). Found none valid"#,
            "spec.o.a: Required value",
        ]
    );
}

#[test]
fn cel_rules_wait_for_validate_rules() {
    // `validate` is the OpenAPI part only; CEL rules run in `validate_rules` (see `cel.rs`).
    let props = json!({"a": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 10", "message": "too small"}]}});
    assert!(check(props.clone(), json!({"a": 1})).is_empty());
    let s = spec_schema(props);
    let (errors, _) = s.validate_rules(&json!({"spec": {"a": 1}}), None, &[]);
    assert_eq!(strings(&errors), ["spec.a: Invalid value: 1: too small"]);
}
