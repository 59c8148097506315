//! Tests of the structural schema: shared helpers; one file per concept.

mod cel;
mod compile;
mod defaulting;
mod formats;
mod list_types;
mod pruning;
mod ratcheting;
mod robustness;
mod rules;
mod webapp;

use serde_json::json;

use super::errors::{FieldError, FieldErrorKind, ListType, SchemaError, invalid_message};
use super::formats::{is_hostname, validates_format};
use super::go_format::{go_bad_value, go_float_json, go_float_v, go_json, go_quote};
use super::*;

fn webapp() -> Schema {
    Schema::new(&json!({
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "required": ["image"],
                "properties": {
                    "image": {"type": "string"},
                    "replicas": {"type": "integer", "minimum": 0, "default": 1},
                    "port": {"type": "integer", "default": 8080},
                    "configMap": {"type": "string"}
                }
            },
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
        }
    }))
    .unwrap()
}

fn webapp_obj(spec: Value) -> Value {
    json!({"apiVersion": "example.dev/v1", "kind": "WebApp", "metadata": {"name": "x"}, "spec": spec})
}

/// A root schema whose `spec` has the given properties.
fn spec_schema(props: Value) -> Schema {
    Schema::new(&json!({
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": props}}
    }))
    .unwrap()
}

fn strings(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

/// Validates `{"spec": spec}` against `spec_schema(props)` without pruning or defaulting.
fn check(props: Value, spec: Value) -> Vec<String> {
    strings(&spec_schema(props).validate(&json!({"spec": spec})))
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}
