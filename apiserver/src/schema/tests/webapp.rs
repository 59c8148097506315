//! Tests of the WebApp schema: defaulting, then validation, of a typical custom resource.

use super::*;

#[test]
fn webapp_defaults_then_validates() {
    let s = webapp();
    let mut obj = webapp_obj(json!({"image": "nginx"}));
    assert!(s.prune(&mut obj).is_empty());
    s.apply_defaults(&mut obj);
    assert_eq!(
        obj["spec"],
        json!({"image": "nginx", "replicas": 1, "port": 8080})
    );
    assert_eq!(obj["metadata"], json!({"name": "x"}));
    assert!(s.validate(&obj).is_empty());
}

#[test]
fn webapp_keeps_given_values() {
    let s = webapp();
    let mut obj =
        webapp_obj(json!({"image": "nginx", "replicas": 0, "port": 80, "configMap": "cm"}));
    s.apply_defaults(&mut obj);
    assert_eq!(
        obj["spec"],
        json!({"image": "nginx", "replicas": 0, "port": 80, "configMap": "cm"})
    );
    assert!(s.validate(&obj).is_empty());
}

#[test]
fn required_value() {
    let s = webapp();
    let mut obj = webapp_obj(json!({}));
    s.apply_defaults(&mut obj);
    let errors = s.validate(&obj);
    assert_eq!(strings(&errors), ["spec.image: Required value"]);
    assert_eq!(errors[0].reason(), "FieldValueRequired");
    assert_eq!(errors[0].kind, FieldErrorKind::Required);
    assert_eq!(errors[0].field, "spec.image");
    assert_eq!(errors[0].body(), "Required value");
    assert_eq!(errors[0].value, None);
}

#[test]
fn type_error_message() {
    let s = webapp();
    let errors = s.validate(&webapp_obj(json!({"image": "nginx", "replicas": "three"})));
    assert_eq!(
        strings(&errors),
        [
            r#"spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#
        ]
    );
    assert_eq!(errors[0].reason(), "FieldValueTypeInvalid");
    assert_eq!(errors[0].value, Some(json!("string")));
    let errors = s.validate(&webapp_obj(json!({"image": 5})));
    assert_eq!(
        strings(&errors),
        [
            r#"spec.image: Invalid value: "integer": spec.image in body must be of type string: "integer""#
        ]
    );
    let errors = s.validate(&webapp_obj(json!("nope")));
    assert_eq!(
        strings(&errors),
        [r#"spec: Invalid value: "string": spec in body must be of type object: "string""#]
    );
    for (v, t) in [
        (json!(true), "boolean"),
        (json!([]), "array"),
        (json!({}), "object"),
        (json!(1.5), "number"),
    ] {
        let errors = s.validate(&webapp_obj(json!({"image": v})));
        assert_eq!(
            strings(&errors),
            [format!(
                r#"spec.image: Invalid value: "{t}": spec.image in body must be of type string: "{t}""#
            )]
        );
    }
}

#[test]
fn minimum_message() {
    let s = webapp();
    let errors = s.validate(&webapp_obj(json!({"image": "nginx", "replicas": -1})));
    assert_eq!(
        strings(&errors),
        [
            "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"
        ]
    );
    assert_eq!(errors[0].reason(), "FieldValueInvalid");
    assert_eq!(errors[0].value, Some(json!(-1)));
}

#[test]
fn integer_accepts_integral_floats_only() {
    let s = webapp();
    assert!(
        s.validate(&webapp_obj(json!({"image": "nginx", "replicas": 3.0})))
            .is_empty()
    );
    assert_eq!(
        strings(&s.validate(&webapp_obj(json!({"image": "nginx", "replicas": 1.5})))),
        [
            r#"spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number""#
        ]
    );
    assert_eq!(
        strings(&s.validate(&webapp_obj(json!({"image": "nginx", "replicas": -1.5})))),
        [
            r#"spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number""#,
            "spec.replicas: Invalid value: -1.5: spec.replicas in body should be greater than or equal to 0",
        ]
    );
    // Numbers are accepted where a number is expected.
    assert!(check(json!({"n": {"type": "number"}}), json!({"n": 3})).is_empty());
}

#[test]
fn several_errors_at_once_and_invalid_message() {
    let s = webapp();
    let mut obj = webapp_obj(json!({"replicas": -1, "port": "http"}));
    s.apply_defaults(&mut obj);
    let errors = s.validate(&obj);
    assert_eq!(
        strings(&errors),
        [
            r#"spec.port: Invalid value: "string": spec.port in body must be of type integer: "string""#,
            "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0",
            "spec.image: Required value",
        ]
    );
    assert_eq!(
        invalid_message("WebApp", "example.dev", "x", &errors[2..]),
        r#"WebApp.example.dev "x" is invalid: spec.image: Required value"#
    );
    assert_eq!(
        invalid_message("WebApp", "example.dev", "x", &errors[1..]),
        r#"WebApp.example.dev "x" is invalid: [spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0, spec.image: Required value]"#
    );
    let twice = [errors[2].clone(), errors[2].clone()];
    assert_eq!(
        invalid_message("WebApp", "", "x", &twice),
        r#"WebApp "x" is invalid: spec.image: Required value"#
    );
    assert_eq!(
        invalid_message("WebApp", "example.dev", "x", &[]),
        r#"WebApp.example.dev "x" is invalid"#
    );
}
