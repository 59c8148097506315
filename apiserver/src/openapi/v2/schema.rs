//! The `definitions` of `/openapi/v2`, in swagger 2.0 form.
//!
//! Built-in kinds: the OpenAPI v3 component schemas of `builtin.rs` (enums included), rewritten as
//! kube-apiserver writes them in v2: references point into `#/definitions/`, a reference with a description
//! beside it is `{$ref, description}` rather than `allOf: [{$ref}]`, the keywords swagger 2.0 lacks (`oneOf`,
//! `anyOf`, `not`, `nullable`) and every `default` (kube-apiserver prunes them from v2) are dropped, and `IntOrString` and `Quantity` are the strings kube-apiserver's
//! v2 document declares (`format: int-or-string`; plain `string`).
//!
//! Custom resources: the CRD's `openAPIV3Schema` converted as kube-apiserver converts a structural schema to
//! v2 (`apiextensions-apiserver`'s `controller/openapi/v2.ToStructuralOpenAPIV2` and
//! `builder.buildKubeNative`): only the keywords a structural schema keeps; no `allOf`, `oneOf`, `anyOf` or
//! `not`; no `default` (pruned, as kube-apiserver prunes them from v2); a `nullable` field loses its type, properties and items (and leaves its parent's `required`); a
//! field preserving unknown fields loses its properties and items, and its type when that was `object`; an
//! array without `items` loses its type; a root preserving unknown fields is `{type: object}`; then
//! `apiVersion`, `kind` and `metadata` are set beside the properties, and on every embedded resource.

use serde_json::{Map, Value, json};

use crate::registry::ResourceType;

/// Where a v2 reference points.
pub(super) const DEFINITIONS: &str = "#/definitions/";
/// Where a v3 reference points.
const COMPONENTS: &str = "#/components/schemas/";
/// The name of `ObjectMeta`'s definition.
pub(super) const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// The keywords a structural schema keeps (`apiextensions-apiserver`'s `Structural`), before the v2
/// conversion drops `allOf`, `oneOf`, `anyOf` and `not`, less `default`: kube-apiserver prunes every default
/// from the v2 definitions it serves (kube-openapi's `handler.PruneDefaults`).
const STRUCTURAL: &[&str] = &[
    "description",
    "type",
    "title",
    "nullable",
    "format",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "enum",
    "maxProperties",
    "minProperties",
    "required",
    "properties",
    "items",
    "additionalProperties",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
];

/// The boolean extensions of a structural schema, written only when true.
const FLAGS: &[&str] = &[
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
];

/// The built-in component schemas `v3`, in v2 form.
pub(super) fn builtin(v3: Map<String, Value>) -> Map<String, Value> {
    v3.into_iter()
        .map(|(name, mut schema)| {
            match name.as_str() {
                "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => {
                    string_schema(&mut schema, Some("int-or-string"));
                }
                "io.k8s.apimachinery.pkg.api.resource.Quantity" => string_schema(&mut schema, None),
                _ => rewrite(&mut schema),
            }
            (name, schema)
        })
        .collect()
}

/// Replaces `schema` by a string schema with its description (kube-apiserver's v2 form of the types that
/// hold a number or a string).
fn string_schema(schema: &mut Value, format: Option<&str>) {
    let mut out = json!({ "description": schema.get("description"), "type": "string" });
    if let Some(format) = format {
        out["format"] = json!(format);
    }
    *schema = out;
}

/// Rewrites the references of a v3 schema (and of every schema inside it) into v2 form.
fn rewrite(schema: &mut Value) {
    let Value::Object(map) = schema else { return };
    if let Some(Value::Array(all)) = map.get("allOf")
        && all.len() == 1
        && let Some(reference) = all[0].get("$ref").cloned()
        && all[0].as_object().is_some_and(|o| o.len() == 1)
    {
        map.remove("allOf");
        map.insert("$ref".into(), reference);
    }
    // Swagger 2.0 has none of these (k8s-openapi writes `oneOf` for the `JSONSchemaPropsOr...` types, which
    // kube-apiserver's v2 document leaves untyped); kube-apiserver prunes every `default` from v2.
    for key in ["oneOf", "anyOf", "not", "nullable", "default"] {
        map.remove(key);
    }
    if let Some(Value::String(reference)) = map.get_mut("$ref")
        && let Some(name) = reference.strip_prefix(COMPONENTS)
    {
        *reference = format!("{DEFINITIONS}{name}");
    }
    for_each_subschema(map, rewrite);
}

/// Calls `f` on every schema directly inside `map`: properties, items, additional properties, and the
/// members of `allOf`, `anyOf` and `oneOf` and `not`.
fn for_each_subschema(map: &mut Map<String, Value>, mut f: impl FnMut(&mut Value)) {
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        properties.values_mut().for_each(&mut f);
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(sub @ Value::Object(_)) = map.get_mut(key) {
            f(sub);
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(subs)) = map.get_mut(key) {
            subs.iter_mut().for_each(&mut f);
        }
    }
}

/// The common descriptions and schemas a custom resource's definition takes from the built-in ones.
pub(super) struct Common {
    /// `apiVersion` of every kind (TypeMeta's).
    pub api_version: Value,
    /// `kind` of every kind (TypeMeta's).
    pub kind: Value,
    /// The description of `metadata`.
    pub metadata: Value,
}

/// The v2 definition of the custom resource `t` whose CRD schema is `schema`.
pub(super) fn custom(t: &ResourceType, schema: &Value, common: &Common) -> Value {
    let mut out = if schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true))
    {
        json!({ "type": "object" })
    } else {
        let mut out = structural(schema);
        if let Value::Object(map) = &mut out {
            let properties = map
                .entry("properties")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(properties) = properties {
                properties.insert(
                    "metadata".into(),
                    json!({ "description": common.metadata, "$ref": format!("{DEFINITIONS}{OBJECT_META}") }),
                );
                properties.insert("apiVersion".into(), common.api_version.clone());
                properties.insert("kind".into(), common.kind.clone());
            }
        }
        embedded(&mut out, common);
        out
    };
    super::super::custom::integral_numbers(&mut out);
    out["x-kubernetes-group-version-kind"] = super::super::kind::gvk_extension(t);
    out
}

/// One schema of a CRD as a structural schema converted to v2 (see the module documentation).
fn structural(schema: &Value) -> Value {
    let Value::Object(input) = schema else {
        return json!({});
    };
    let mut out = Map::new();
    for key in STRUCTURAL {
        if let Some(v) = input.get(*key) {
            out.insert((*key).to_string(), v.clone());
        }
    }
    for flag in FLAGS {
        if input.get(*flag) == Some(&Value::Bool(true)) {
            out.insert((*flag).to_string(), Value::Bool(true));
        }
    }
    let preserve = out.contains_key("x-kubernetes-preserve-unknown-fields");
    if out.remove("nullable") == Some(Value::Bool(true)) {
        for key in ["type", "items", "properties"] {
            out.remove(key);
        }
    }
    if preserve {
        out.remove("items");
        out.remove("properties");
    }
    if !out.contains_key("items") && out.get("type") == Some(&json!("array")) {
        out.remove("type");
    }
    if preserve && out.get("type") == Some(&json!("object")) {
        out.remove("type");
    }
    let nullable = |s: &Value| s.get("nullable") == Some(&Value::Bool(true));
    let nullable_fields: Vec<String> = input
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .filter(|(_, s)| nullable(s))
                .map(|(k, _)| k.clone())
                .collect()
        })
        .unwrap_or_default();
    if let Some(Value::Array(required)) = out.get_mut("required") {
        required.retain(|r| {
            r.as_str()
                .is_none_or(|r| !nullable_fields.iter().any(|f| f == r))
        });
    }
    if input.get("additionalProperties").is_some_and(nullable) {
        out.remove("required");
    }
    for key in [
        "required",
        "enum",
        "x-kubernetes-list-map-keys",
        "x-kubernetes-validations",
    ] {
        if out
            .get(key)
            .and_then(Value::as_array)
            .is_some_and(Vec::is_empty)
        {
            out.remove(key);
        }
    }
    if let Some(Value::Object(properties)) = out.get_mut("properties") {
        for v in properties.values_mut() {
            *v = structural(v);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(v @ Value::Object(_)) = out.get_mut(key) {
            *v = structural(v);
        }
    }
    Value::Object(out)
}

/// Sets `apiVersion`, `kind` and `metadata` on every embedded resource inside `schema` (and requires the
/// first two), as kube-apiserver's `addEmbeddedProperties` does; one that preserves unknown fields is left
/// as it is in v2.
fn embedded(schema: &mut Value, common: &Common) {
    let Value::Object(map) = schema else { return };
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        properties.values_mut().for_each(|v| embedded(v, common));
    }
    for key in ["items", "additionalProperties"] {
        if let Some(v @ Value::Object(_)) = map.get_mut(key) {
            embedded(v, common);
        }
    }
    if map.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true))
        || map.get("x-kubernetes-embedded-resource") != Some(&Value::Bool(true))
    {
        return;
    }
    let properties = map
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(properties) = properties {
        properties.insert(
            "apiVersion".into(),
            json!({
                "description": "apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources",
                "type": "string",
            }),
        );
        properties.insert(
            "kind".into(),
            json!({
                "description": "kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
                "type": "string",
            }),
        );
        properties.insert(
            "metadata".into(),
            json!({ "description": common.metadata, "$ref": format!("{DEFINITIONS}{OBJECT_META}") }),
        );
    }
    let required = map
        .entry("required")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(required) = required {
        for field in ["kind", "apiVersion"] {
            if !required.iter().any(|r| r == field) {
                required.push(json!(field));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn common() -> Common {
        Common {
            api_version: json!({ "type": "string", "description": "A" }),
            kind: json!({ "type": "string", "description": "K" }),
            metadata: json!("M"),
        }
    }

    #[test]
    fn built_in_references_point_into_definitions() {
        let mut v3 = Map::new();
        v3.insert(
            "io.k8s.api.core.v1.ConfigMap".into(),
            json!({ "properties": {
                "metadata": { "description": "d", "allOf": [{ "$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" }] },
                "items": { "type": "array", "items": { "$ref": "#/components/schemas/X" } },
            }}),
        );
        v3.insert(
            "io.k8s.apimachinery.pkg.util.intstr.IntOrString".into(),
            json!({ "description": "i", "x-kubernetes-int-or-string": true }),
        );
        let v2 = builtin(v3);
        assert_eq!(
            v2["io.k8s.api.core.v1.ConfigMap"]["properties"]["metadata"],
            json!({ "description": "d", "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta" })
        );
        assert_eq!(
            v2["io.k8s.api.core.v1.ConfigMap"]["properties"]["items"]["items"]["$ref"],
            "#/definitions/X"
        );
        assert_eq!(
            v2["io.k8s.apimachinery.pkg.util.intstr.IntOrString"],
            json!({ "description": "i", "type": "string", "format": "int-or-string" })
        );
    }

    #[test]
    fn a_crd_schema_loses_what_v2_cannot_say() {
        let t = ResourceType::new("example.dev", "v1", "WebApp", "webapps", true);
        let schema = json!({
            "type": "object",
            "required": ["spec", "gone"],
            "properties": {
                "spec": {
                    "type": "object",
                    "example": { "a": 1 },
                    "properties": {
                        "port": { "x-kubernetes-int-or-string": true, "anyOf": [{ "type": "integer" }, { "type": "string" }] },
                        "free": { "type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": { "a": { "type": "string" } } },
                        "tags": { "type": "array" },
                        "size": { "type": "integer", "minimum": 0.0, "default": 1, "x-kubernetes-preserve-unknown-fields": false },
                        "inner": { "type": "object", "x-kubernetes-embedded-resource": true, "properties": { "spec": { "type": "object" } } },
                    },
                },
                "gone": { "type": "string", "nullable": true },
            },
        });
        let out = custom(&t, &schema, &common());
        assert_eq!(out["required"], json!(["spec"]));
        assert_eq!(out["properties"]["gone"], json!({}));
        let spec = &out["properties"]["spec"];
        assert!(spec.get("example").is_none());
        assert_eq!(
            spec["properties"]["port"],
            json!({ "x-kubernetes-int-or-string": true })
        );
        assert_eq!(
            spec["properties"]["free"],
            json!({ "x-kubernetes-preserve-unknown-fields": true })
        );
        assert_eq!(spec["properties"]["tags"], json!({}));
        assert_eq!(
            spec["properties"]["size"],
            json!({ "type": "integer", "minimum": 0 })
        );
        assert_eq!(
            spec["properties"]["inner"]["required"],
            json!(["kind", "apiVersion"])
        );
        assert_eq!(
            spec["properties"]["inner"]["properties"]["metadata"]["$ref"],
            "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
        );
        assert_eq!(out["properties"]["kind"]["description"], "K");
        assert_eq!(
            out["x-kubernetes-group-version-kind"],
            json!([{ "group": "example.dev", "kind": "WebApp", "version": "v1" }])
        );
    }

    #[test]
    fn a_root_preserving_unknown_fields_is_an_object() {
        let t = ResourceType::new("example.dev", "v1", "Free", "frees", true);
        let out = custom(
            &t,
            &json!({ "type": "object", "x-kubernetes-preserve-unknown-fields": true, "properties": { "a": {} } }),
            &common(),
        );
        assert_eq!(
            out,
            json!({ "type": "object", "x-kubernetes-group-version-kind": [{ "group": "example.dev", "kind": "Free", "version": "v1" }] })
        );
    }
}
