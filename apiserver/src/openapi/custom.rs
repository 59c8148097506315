//! The component schemas of custom resources, from each served version's `openAPIV3Schema` as kube-apiserver
//! publishes them: named after the reversed group (`dev.example.v1.WebApp`), with `apiVersion`, `kind` and
//! `metadata` (a reference to `ObjectMeta`) set beside the CRD's own properties, and marked with
//! `x-kubernetes-group-version-kind`. `ObjectMeta` and the types it refers to come from k8s-openapi, with the
//! defaults and extensions of `fields.rs`; so do the types the paths refer to (`DeleteOptions`, `Patch`,
//! `Status`, `ListMeta`, `Scale`), and each kind's List is written as apiextensions-apiserver writes it.

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{self as meta, ObjectMeta};
use serde_json::{Map, Value, json};

use super::builtin::{generator, ref_name};
use super::kind::gvk_extension;
use crate::registry::{OpenApiSource, ResourceType};

/// The name kube-apiserver gives the schema of a custom resource: the group's labels reversed, the version,
/// the kind (`WebApp` of `example.dev/v1` is `dev.example.v1.WebApp`).
pub(super) fn schema_name(t: &ResourceType) -> String {
    let group: Vec<&str> = t.group.split('.').rev().collect();
    format!("{}.{}.{}", group.join("."), t.version, t.kind)
}

/// The schemas of every kind's `apiVersion` and `kind` (TypeMeta's), and the description of `metadata`,
/// taken from one kind.
pub(super) fn common_fields() -> (Value, Value, Value) {
    let common = k8s_openapi::schemars::schema_for!(ConfigMap).to_value();
    let description = |field: &str| common["properties"][field]["description"].clone();
    (
        json!({ "description": description("apiVersion"), "type": "string" }),
        json!({ "description": description("kind"), "type": "string" }),
        description("metadata"),
    )
}

/// The schemas of the custom resources `kinds`, with `ObjectMeta` and the types it refers to.
pub(super) fn components(kinds: &[&ResourceType]) -> Map<String, Value> {
    let mut generator = generator();
    let meta_ref = generator.subschema_for::<ObjectMeta>().to_value();
    let meta_name = ref_name(&meta_ref).unwrap_or_default();
    // What the operations of the paths refer to.
    generator.subschema_for::<meta::DeleteOptions>();
    generator.subschema_for::<meta::Patch>();
    generator.subschema_for::<meta::Status>();
    generator.subschema_for::<meta::ListMeta>();
    if kinds.iter().any(|t| t.scale.is_some()) {
        generator.subschema_for::<k8s_openapi::api::autoscaling::v1::Scale>();
    }
    let (api_version, kind, metadata) = common_fields();
    let mut defs = generator.take_definitions(true);
    // kube-apiserver's ObjectMeta here is the built-in documents': with kube-openapi's defaults and
    // extensions.
    for (name, schema) in defs.iter_mut() {
        super::fields::add(name, schema);
    }
    super::meta::mark_custom(&mut defs);
    for t in kinds {
        defs.insert(
            format!("{}List", schema_name(t)),
            list_schema(t, &api_version, &kind),
        );
    }
    for t in kinds {
        let Some(OpenApiSource::Custom(schema)) = &t.openapi else {
            continue;
        };
        let mut schema = (**schema).clone();
        integral_numbers(&mut schema);
        let Some(object) = schema.as_object_mut() else {
            continue;
        };
        let properties = object
            .entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(properties) = properties.as_object_mut() {
            properties.insert("apiVersion".into(), api_version.clone());
            properties.insert("kind".into(), kind.clone());
            properties.insert(
                "metadata".into(),
                json!({
                    "description": metadata,
                    "allOf": [{ "$ref": format!("#/components/schemas/{meta_name}") }],
                }),
            );
        }
        object.insert("x-kubernetes-group-version-kind".into(), gvk_extension(t));
        defs.insert(schema_name(t), schema);
    }
    defs
}

/// The schema of a custom resource's List kind, as apiextensions-apiserver writes it.
fn list_schema(t: &ResourceType, api_version: &Value, kind: &Value) -> Value {
    const CONVENTIONS: &str =
        "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md";
    json!({
        "description": format!("{}List is a list of {}", t.kind, t.kind),
        "properties": {
            "apiVersion": api_version,
            "items": {
                "description": format!("List of {}. More info: {CONVENTIONS}", t.plural),
                "items": { "$ref": format!("#/components/schemas/{}", schema_name(t)) },
                "type": "array",
            },
            "kind": kind,
            "metadata": {
                "allOf": [{ "$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta" }],
                "description": format!("Standard list metadata. More info: {CONVENTIONS}#types-kinds"),
            },
        },
        "required": ["items"],
        "type": "object",
        "x-kubernetes-group-version-kind": [{ "group": t.group, "kind": format!("{}List", t.kind), "version": t.version }],
    })
}

/// Writes numbers with no fraction as integers (`minimum: 0.0` as `0`), as kube-apiserver's Go encoder writes
/// the float64 fields of a schema.
pub(super) fn integral_numbers(v: &mut Value) {
    match v {
        Value::Number(n) => {
            if let Some(f) = n
                .as_f64()
                .filter(|f| n.is_f64() && f.fract() == 0.0 && f.abs() < 1e15)
            {
                *v = Value::from(f as i64);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_numbers),
        Value::Object(map) => map.values_mut().for_each(integral_numbers),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    #[test]
    fn a_custom_resource_gets_the_common_fields_and_its_kube_apiserver_name() {
        let mut t = ResourceType::new("parity.example.dev", "v1", "Gadget", "gadgets", true);
        t.openapi = Some(OpenApiSource::Custom(Arc::new(json!({
            "type": "object",
            "properties": { "spec": { "type": "object" }, "size": { "minimum": 0.0, "maximum": 2.5 } },
        }))));
        let defs = components(&[&t]);
        let gadget = &defs["dev.example.parity.v1.Gadget"];
        assert_eq!(gadget["properties"]["spec"], json!({ "type": "object" }));
        assert_eq!(
            gadget["properties"]["size"],
            json!({ "minimum": 0, "maximum": 2.5 })
        );
        assert_eq!(gadget["properties"]["kind"]["type"], "string");
        assert_eq!(
            gadget["properties"]["metadata"]["allOf"][0]["$ref"],
            "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
        );
        assert_eq!(
            gadget["x-kubernetes-group-version-kind"],
            json!([{ "group": "parity.example.dev", "kind": "Gadget", "version": "v1" }])
        );
        assert!(defs.contains_key("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"));
    }
}
