//! Tests of schema compilation errors.

use super::*;

#[test]
fn schema_errors() {
    let err = Schema::new(
        &json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "["}}}),
    )
    .unwrap_err();
    assert!(
        matches!(&err, SchemaError::InvalidPattern { path, pattern, .. } if path == "openAPIV3Schema.properties[a]" && pattern == "[")
    );
    assert!(
        err.to_string()
            .starts_with("openAPIV3Schema.properties[a].pattern: Invalid value: \"[\"")
    );
    assert_eq!(
        err.to_string(),
        "openAPIV3Schema.properties[a].pattern: Invalid value: \"[\": must be a valid regular expression, but isn't: error parsing regexp: unclosed character class: `[`"
    );
    let err = Schema::new(&json!({"type": "array", "items": [{"type": "string"}]})).unwrap_err();
    assert_eq!(
        err.to_string(),
        "openAPIV3Schema.items: Forbidden: items must be a schema object and not an array"
    );
    let err = Schema::new(&json!({"properties": {"a": {"$ref": "#/x"}}})).unwrap_err();
    assert_eq!(
        err.to_string(),
        "openAPIV3Schema.properties[a].$ref: Forbidden: $ref is not supported"
    );
    for bad in [
        json!("string"),
        json!({"type": "array", "items": [{"type": "string"}]}),
        json!({"$ref": "#/definitions/x"}),
        json!({"type": "foo"}),
        json!({"type": ["string"]}),
        json!({"type": "null"}),
        json!({"type": "object", "definitions": {"a": {}}}),
        json!({"type": "object", "properties": {"a": 1}}),
        json!({"type": "object", "patternProperties": {"a": {}}}),
        json!({"type": "array", "x-kubernetes-list-type": "bag"}),
        json!({"type": "integer", "minimum": "zero"}),
        json!({"type": "string", "maxLength": 1.5}),
    ] {
        assert!(Schema::new(&bad).is_err(), "{bad}");
    }
    assert!(Schema::new(&json!({})).is_ok());
}
