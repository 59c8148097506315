//! Tests of CEL rules (`x-kubernetes-validations`): the texts are kube-apiserver 1.35's for the same
//! schema and objects (the differential suite's `cel_rules` compares them live).

use super::*;

fn gadget() -> Schema {
    Schema::new(&json!({
        "type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.metadata.name.startsWith('g')", "message": "name must start with g"}
        ],
        "properties": {
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "x-kubernetes-validations": [
                    {"rule": "self.replicas <= 50", "message": "replicas must be at most 50"},
                    {"rule": "self.minReplicas <= self.replicas"},
                    {"rule": "!has(self.mode) || self.mode != 'off' || self.replicas == 0",
                     "messageExpression": "'mode off needs 0 replicas'",
                     "reason": "FieldValueForbidden", "fieldPath": ".mode"},
                    {"rule": "self.replicas >= oldSelf.replicas", "message": "replicas may not shrink",
                     "reason": "FieldValueRequired"}
                ],
                "properties": {
                    "replicas": {"type": "integer", "maximum": 100},
                    "minReplicas": {"type": "integer", "x-kubernetes-validations": [
                        {"rule": "self < 10"},
                        {"rule": "self < 8", "reason": "FieldValueDuplicate"}
                    ]},
                    "mode": {"type": "string", "maxLength": 5},
                    "image": {"type": "string", "x-kubernetes-validations": [
                        {"rule": "self.contains(':') || self.contains('@')",
                         "message": "image must name a tag or digest"}
                    ]},
                    "ports": {
                        "type": "array", "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "items": {"type": "object", "required": ["name"],
                            "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                            "x-kubernetes-validations": [
                                {"rule": "self.port == oldSelf.port", "message": "port is immutable"}
                            ]}
                    },
                    "labels": {"type": "object", "maxProperties": 10, "additionalProperties": {
                        "type": "string", "maxLength": 20,
                        "x-kubernetes-validations": [{"rule": "size(self) < 5"}]
                    }},
                    "memory": {"x-kubernetes-int-or-string": true, "x-kubernetes-validations": [
                        {"rule": "quantity(string(self)).compareTo(quantity('1Gi')) <= 0",
                         "message": "at most 1Gi"}
                    ]}
                }
            }
        }
    }))
    .unwrap()
}

fn base() -> serde_json::Value {
    json!({
        "metadata": {"name": "gone"},
        "spec": {"replicas": 3, "minReplicas": 1, "image": "nginx:1",
                 "ports": [{"name": "a", "port": 1}], "labels": {"a": "b"}, "memory": "512Mi"}
    })
}

/// The errors of an update from `base()` to `base()` merged with `spec`.
fn update(spec: serde_json::Value) -> (Vec<String>, Vec<String>) {
    let s = gadget();
    let old = base();
    let mut new = old.clone();
    json_patch::merge(&mut new, &json!({ "spec": spec }));
    let earlier = s.validate(&new);
    let (errors, warnings) = s.validate_rules(&new, Some(&old), &earlier);
    let all = earlier
        .iter()
        .chain(&errors)
        .map(|e| e.to_string())
        .collect();
    (all, warnings)
}

#[test]
fn a_valid_object_passes() {
    let s = gadget();
    assert_eq!(s.validate_rules(&base(), None, &[]), (vec![], vec![]));
}

#[test]
fn failures_read_as_the_server_writes_them() {
    let cases: &[(serde_json::Value, &[&str])] = &[
        (
            json!({"replicas": 60}),
            &["spec: Invalid value: replicas must be at most 50"],
        ),
        (
            json!({"minReplicas": 9}),
            &[
                "spec: Invalid value: failed rule: self.minReplicas <= self.replicas",
                "spec.minReplicas: Duplicate value: 9",
            ],
        ),
        (
            json!({"mode": "off"}),
            &["spec.mode: Forbidden: mode off needs 0 replicas"],
        ),
        (
            json!({"replicas": 2}),
            &["spec: Required value: replicas may not shrink"],
        ),
        (
            json!({"image": "nginx"}),
            &[r#"spec.image: Invalid value: "nginx": image must name a tag or digest"#],
        ),
        (
            json!({"ports": [{"name": "a", "port": 2}]}),
            &["spec.ports[0]: Invalid value: port is immutable"],
        ),
        (
            json!({"labels": {"x": "toolong"}}),
            &[r#"spec.labels[x]: Invalid value: "toolong": failed rule: size(self) < 5"#],
        ),
        (
            json!({"memory": "2Gi"}),
            &[r#"spec.memory: Invalid value: "2Gi": at most 1Gi"#],
        ),
        (
            json!({"replicas": "x"}),
            &[
                r#"spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#,
                "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
            ],
        ),
        (
            json!({"mode": "toolong"}),
            &[
                "spec.mode: Too long: may not be more than 5 bytes",
                "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
            ],
        ),
        (
            json!({"replicas": 200}),
            &[
                "spec.replicas: Invalid value: 200: spec.replicas in body should be less than or equal to 100",
                "spec: Invalid value: replicas must be at most 50",
            ],
        ),
    ];
    for (spec, want) in cases {
        assert_eq!(update(spec.clone()).0, *want, "{spec}");
    }
}

#[test]
fn a_root_rule_names_no_field() {
    let s = gadget();
    let mut obj = base();
    obj["metadata"]["name"] = json!("xone");
    let (errors, _) = s.validate_rules(&obj, None, &[]);
    assert_eq!(
        strings(&errors),
        ["<nil>: Invalid value: name must start with g"]
    );
}

#[test]
fn transition_rules_need_an_old_value() {
    // On create there is no oldSelf: `replicas may not shrink` and `port is immutable` do not run.
    let s = gadget();
    let mut obj = base();
    obj["spec"]["replicas"] = json!(0);
    obj["spec"]["minReplicas"] = json!(0);
    assert_eq!(s.validate_rules(&obj, None, &[]), (vec![], vec![]));
    // A new item of a map list has no old item either.
    let (errors, _) =
        update(json!({"ports": [{"name": "a", "port": 1}, {"name": "b", "port": 9}]}));
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn unchanged_values_ratchet_into_warnings() {
    // The stored object predates a rule it breaks: an update that leaves that value alone is accepted
    // with the server's warning; one that changes it is refused.
    let s = gadget();
    let mut old = base();
    old["spec"]["image"] = json!("nginx");
    let mut new = old.clone();
    new["spec"]["labels"]["b"] = json!("c");
    let (errors, warnings) = s.validate_rules(&new, Some(&old), &[]);
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        warnings,
        [r#"spec.image: Invalid value: "nginx": image must name a tag or digest"#]
    );
    new["spec"]["image"] = json!("redis");
    let (errors, _) = s.validate_rules(&new, Some(&old), &[]);
    assert_eq!(
        strings(&errors),
        [r#"spec.image: Invalid value: "redis": image must name a tag or digest"#]
    );
}

#[test]
fn runtime_errors_name_the_rule() {
    let s = Schema::new(&json!({"type": "object", "properties": {"spec": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.a > 0"}, {"rule": "self.b / self.a > 1", "message": "ratio"}]
    }}})).unwrap();
    let (errors, _) = s.validate_rules(&json!({"spec": {"b": 1}}), None, &[]);
    assert_eq!(
        strings(&errors),
        [
            "spec: Invalid value: no such key: a evaluating rule: self.a > 0",
            "spec: Invalid value: no such key: a evaluating rule: ratio",
        ]
    );
    let (errors, _) = s.validate_rules(&json!({"spec": {"a": 0, "b": 1}}), None, &[]);
    assert_eq!(
        strings(&errors),
        [
            "spec: Invalid value: failed rule: self.a > 0",
            "spec: Invalid value: division by zero evaluating rule: ratio",
        ]
    );
}

#[test]
fn property_names_are_escaped_and_typed_by_the_schema() {
    let s = Schema::new(&json!({"type": "object", "properties": {"spec": {
        "type": "object",
        "properties": {
            "max-size": {"type": "number"},
            "namespace": {"type": "string"},
            "timeout": {"type": "string", "format": "duration"},
            "since": {"type": "string", "format": "date-time"},
            "data": {"type": "string", "format": "byte"}
        },
        "x-kubernetes-validations": [
            {"rule": "self.max__dash__size == 2.0"},
            {"rule": "self.__namespace__ == 'n'"},
            {"rule": "self.timeout > duration('1m')"},
            {"rule": "self.since < timestamp('2030-01-01T00:00:00Z')"},
            {"rule": "size(self.data) == 3"}
        ]
    }}}))
    .unwrap();
    let ok = json!({"spec": {"max-size": 2, "namespace": "n", "timeout": "1h",
                             "since": "2026-01-01T00:00:00Z", "data": "YWJj"}});
    assert_eq!(s.validate_rules(&ok, None, &[]), (vec![], vec![]));
}

#[test]
fn rules_that_do_not_compile_make_the_crd_invalid() {
    for (rule, want) in [
        (
            json!({"rule": "self.replicas <="}),
            "openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule",
        ),
        (
            json!({"rule": ""}),
            "openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule",
        ),
        (
            json!({"rule": "true", "reason": "Nope"}),
            "openAPIV3Schema.properties[spec].x-kubernetes-validations[0].reason",
        ),
        (
            json!({"rule": "true", "messageExpression": "'a' +"}),
            "openAPIV3Schema.properties[spec].x-kubernetes-validations[0].messageExpression",
        ),
    ] {
        let e = Schema::new(&json!({"type": "object", "properties": {"spec": {
            "type": "object", "x-kubernetes-validations": [rule]
        }}}))
        .unwrap_err();
        assert!(e.to_string().starts_with(want), "{e}");
    }
}

#[test]
fn undefined_fields_are_refused_as_cel_go_does() {
    let spec = |rule: &str| {
        json!({"type": "object", "properties": {"spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer"},
                "ports": {"type": "array", "items": {"type": "object", "properties": {"port": {"type": "integer"}}}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
            },
            "x-kubernetes-validations": [{"rule": rule}]
        }}})
    };
    let error = |rule: &str| match Schema::new(&spec(rule)) {
        Ok(_) => None,
        Err(e) => Some(e.to_string()),
    };
    // The texts are kube-apiserver 1.35's (after the rule's JSON).
    let cases = [
        (
            "self.nope == 1",
            Some("ERROR: <input>:1:5: undefined field 'nope'\n | self.nope == 1\n | ....^"),
        ),
        (
            "has(self.nope)",
            Some("ERROR: <input>:1:4: undefined field 'nope'\n | has(self.nope)\n | ...^"),
        ),
        (
            "self.ports.all(p, p.nme == 'a')",
            Some(
                "ERROR: <input>:1:20: undefined field 'nme'\n | self.ports.all(p, p.nme == 'a')\n | ...................^",
            ),
        ),
        (
            "self.nope == 1 && self.nada == 2",
            Some(
                "ERROR: <input>:1:5: undefined field 'nope'\n | self.nope == 1 && self.nada == 2\n | ....^\nERROR: <input>:1:23: undefined field 'nada'\n | self.nope == 1 && self.nada == 2\n | ......................^",
            ),
        ),
        (
            "self.ports[0].nme == 1",
            Some(
                "ERROR: <input>:1:14: undefined field 'nme'\n | self.ports[0].nme == 1\n | .............^",
            ),
        ),
        (
            "self.ports.exists(p, p.port == self.nope)",
            Some(
                "ERROR: <input>:1:36: undefined field 'nope'\n | self.ports.exists(p, p.port == self.nope)\n | ...................................^",
            ),
        ),
        (
            "self.replicas == 'a'",
            Some(
                "ERROR: <input>:1:15: found no matching overload for '_==_' applied to '(int, string)'\n | self.replicas == 'a'\n | ..............^",
            ),
        ),
        (
            "self.replicas == 1.5",
            Some(
                "ERROR: <input>:1:15: found no matching overload for '_==_' applied to '(int, double)'\n | self.replicas == 1.5\n | ..............^",
            ),
        ),
        (
            "'a' == self.replicas",
            Some(
                "ERROR: <input>:1:5: found no matching overload for '_==_' applied to '(string, int)'\n | 'a' == self.replicas\n | ....^",
            ),
        ),
        (
            "size(self.labels) == 'x'",
            Some(
                "ERROR: <input>:1:19: found no matching overload for '_==_' applied to '(int, string)'\n | size(self.labels) == 'x'\n | ..................^",
            ),
        ),
        ("self.replicas < 1.5", None),
        ("self.replicas == 1 && self.labels.foo == 'x'", None),
        ("self.labels.foo == 'x'", None),
        // Objects that keep unknown fields declare none to CEL.
        (
            "self.free.anything.goes",
            Some(
                "ERROR: <input>:1:10: undefined field 'anything'\n | self.free.anything.goes\n | .........^",
            ),
        ),
        ("self.ports.all(p, p.port > 0) && self.replicas >= 0", None),
    ];
    for (rule, want) in cases {
        match (error(rule), want) {
            (None, None) => {}
            (Some(got), Some(want)) => assert!(
                got.ends_with(&format!("compilation failed: {want}")),
                "{rule}: {got}"
            ),
            (got, want) => panic!("{rule}: got {got:?}, want {want:?}"),
        }
    }
    let root = Schema::new(
        &json!({"type": "object", "properties": {"spec": {"type": "object"}},
        "x-kubernetes-validations": [{"rule": "self.metadata.labels.size() > 0"}]}),
    )
    .unwrap_err()
    .to_string();
    assert!(
        root.ends_with("ERROR: <input>:1:14: undefined field 'labels'\n | self.metadata.labels.size() > 0\n | .............^"),
        "{root}"
    );
}

#[test]
fn a_rule_over_the_per_call_cost_limit_stops_every_further_rule() {
    let schema = spec_schema(json!({
        "large": {"type": "array", "maxItems": 725, "items": {"type": "integer"},
                  "x-kubernetes-validations": [{"rule": "self.all(x, self.all(y, y == x))"}]},
        "x": {"type": "integer", "x-kubernetes-validations": [{"rule": "self < 10"}]}
    }));
    let rules = |large: usize| {
        let obj = json!({"spec": {"large": vec![20; large], "x": 20}});
        strings(&schema.validate_rules(&obj, None, &[]).0)
    };
    assert_eq!(
        rules(2),
        ["spec.x: Invalid value: 20: failed rule: self < 10"]
    );
    assert_eq!(
        rules(725),
        [
            "spec.large: Invalid value: \"array\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.all(x, self.all(y, y == x))"
        ]
    );
}
