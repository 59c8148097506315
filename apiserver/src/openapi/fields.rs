//! What kube-openapi's generated definitions of the built-in schemas say that k8s-openapi's schemas do not:
//!
//! - the `enum` lists of enum fields (Service `spec.type`, a container port's `protocol`, ...) and the
//!   "Possible enum values" paragraph kube-openapi appends to their descriptions (`kubectl explain` shows
//!   both; k8s-openapi's descriptions stop before the paragraph, so there is nothing in them to derive the
//!   lists from);
//! - each schema's `required` fields, in Go field order (k8s-openapi sorts them, requires `name` of a
//!   `LocalObjectReference` and of the config map and secret sources, and not `eventTime` of an
//!   events.k8s.io Event);
//! - the `x-kubernetes-*` extensions of schemas and fields: list and map types, patch strategies and merge
//!   keys, unions;
//! - the `default` of fields (`""`, `0`, `false`, `{}` beside a reference, which then becomes `allOf:
//!   [{$ref}]`, a port's `protocol: TCP`);
//! - the whole schemas of the List kinds (`DeploymentList`), which k8s-openapi does not have ([`whole`]).
//!
//! They come from `fields.json`, a table read from kube-openapi's generated Go definitions of the Kubernetes
//! release served (`cargo xtask openapi-fields`), keyed by schema name and the JSON pointer of the field
//! inside the schema (`""`, `/properties/type`, `/properties/ipFamilies/items`).

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::{Map, Value};

/// One schema or field of the table.
#[derive(Debug, Deserialize)]
struct Field {
    /// The enum values, in kube-apiserver's order.
    #[serde(default, rename = "enum")]
    values: Option<Vec<String>>,
    /// What kube-openapi appends to the field's (trimmed) description: the blank line and the paragraph, or
    /// the paragraph alone when there is no description (absent for the items of a list, which have none).
    #[serde(default, rename = "values")]
    paragraph: Option<String>,
    /// The required fields, in Go field order (empty: none).
    #[serde(default)]
    required: Option<Vec<String>>,
    /// The `x-kubernetes-*` extensions.
    #[serde(default)]
    extensions: Map<String, Value>,
    /// The default kube-openapi publishes (`""`, `0`, `false`, `{}` for a struct, `"TCP"`).
    #[serde(default)]
    default: Option<Value>,
    /// Of a List kind's schema, which k8s-openapi does not have: the node's own keywords (`description`,
    /// `type`, `format`, `$ref` as the name referred to).
    #[serde(default)]
    schema: Option<Map<String, Value>>,
}

/// The table: schema name, JSON pointer, field.
type Table = HashMap<String, HashMap<String, Field>>;

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| match serde_json::from_str(include_str!("fields.json")) {
        Ok(table) => table,
        Err(error) => {
            tracing::error!(%error, "the table of kube-openapi's fields does not parse; none is added");
            Table::new()
        }
    })
}

/// Adds to the schema `name` the enum lists and paragraphs, required fields and extensions of the table.
pub(super) fn add(name: &str, schema: &mut Value) {
    let Some(fields) = table().get(name) else {
        return;
    };
    for (pointer, field) in fields {
        let Some(Value::Object(target)) = schema.pointer_mut(pointer) else {
            continue;
        };
        if let Some(values) = &field.values {
            target.insert(
                "enum".into(),
                Value::Array(values.iter().cloned().map(Value::String).collect()),
            );
        }
        if let Some(paragraph) = &field.paragraph {
            append_paragraph(target, paragraph);
        }
        if let Some(required) = &field.required {
            if required.is_empty() {
                target.remove("required");
            } else {
                target.insert(
                    "required".into(),
                    Value::Array(required.iter().cloned().map(Value::String).collect()),
                );
            }
        }
        for (key, value) in &field.extensions {
            target.insert(key.clone(), value.clone());
        }
        if let Some(default) = &field.default {
            // Nothing may stand beside a reference in OpenAPI 3.0: kube-openapi writes `allOf: [{$ref}]`.
            if let Some(reference) = target.remove("$ref") {
                target.insert(
                    "allOf".into(),
                    Value::Array(vec![Value::Object(Map::from_iter([(
                        "$ref".to_string(),
                        reference,
                    )]))]),
                );
            }
            target.insert("default".into(), default.clone());
        }
    }
}

/// The whole schema `name` when the table has it (the List kinds), in OpenAPI 3.0 form: references into
/// `#/components/schemas/`, with the required fields, defaults and extensions of [`add`], and a reference
/// with anything beside it written `allOf: [{$ref}]`.
pub(super) fn whole(name: &str) -> Option<Value> {
    let fields = table().get(name)?;
    fields.get("")?.schema.as_ref()?;
    let mut pointers: Vec<(&String, &Map<String, Value>)> = fields
        .iter()
        .filter_map(|(p, f)| f.schema.as_ref().map(|s| (p, s)))
        .collect();
    // Parents before their children.
    pointers.sort_by_key(|(p, _)| p.matches('/').count());
    let mut schema = Value::Object(Map::new());
    for (pointer, keywords) in pointers {
        let mut node = &mut schema;
        for segment in pointer.split('/').skip(1) {
            let Value::Object(map) = node else { break };
            node = map
                .entry(segment.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
        }
        let Value::Object(node) = node else { continue };
        for (key, value) in keywords {
            let value = match (key.as_str(), value) {
                ("$ref", Value::String(to)) => Value::String(format!("#/components/schemas/{to}")),
                _ => value.clone(),
            };
            node.insert(key.clone(), value);
        }
    }
    add(name, &mut schema);
    references_in_all_of(&mut schema);
    Some(schema)
}

/// The type and description of the field `field` of the options `options` (`ListOptions`, `DeleteOptions`,
/// ...), the query parameter of that name as kube-apiserver documents it.
pub(super) fn option(options: &str, field: &str) -> Option<(String, String)> {
    let schema = table()
        .get(&format!("io.k8s.apimachinery.pkg.apis.meta.v1.{options}"))?
        .get(&format!("/properties/{field}"))?
        .schema
        .as_ref()?;
    Some((
        schema.get("type")?.as_str()?.to_string(),
        schema.get("description")?.as_str()?.to_string(),
    ))
}

/// Writes every reference that has a keyword beside it as `allOf: [{$ref}]`, as kube-openapi's v3 does.
fn references_in_all_of(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if map.len() > 1
                && let Some(reference) = map.remove("$ref")
            {
                map.insert(
                    "allOf".into(),
                    Value::Array(vec![Value::Object(Map::from_iter([(
                        "$ref".to_string(),
                        reference,
                    )]))]),
                );
            }
            map.values_mut().for_each(references_in_all_of);
        }
        Value::Array(items) => items.iter_mut().for_each(references_in_all_of),
        _ => {}
    }
}

/// Appends `paragraph` to the description of `target`, as kube-openapi does.
fn append_paragraph(target: &mut Map<String, Value>, paragraph: &str) {
    let description = match target.get("description").and_then(Value::as_str) {
        Some(d) => format!("{d}{paragraph}"),
        None => paragraph.trim_start().to_string(),
    };
    target.insert("description".into(), Value::String(description));
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{LocalObjectReference, ServicePort, ServiceSpec};
    use k8s_openapi::schemars::{JsonSchema, SchemaGenerator};
    use serde_json::json;

    use super::*;

    fn schema<T: JsonSchema>() -> Value {
        T::json_schema(&mut SchemaGenerator::default()).to_value()
    }

    #[test]
    fn the_table_parses() {
        assert!(table().len() > 90, "{}", table().len());
    }

    #[test]
    fn a_service_type_gets_its_values_and_their_descriptions() {
        let mut spec = schema::<ServiceSpec>();
        add("io.k8s.api.core.v1.ServiceSpec", &mut spec);
        let ty = &spec["properties"]["type"];
        assert_eq!(
            ty["enum"],
            json!(["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"])
        );
        let description = ty["description"].as_str().expect("a description");
        assert!(description.starts_with("type determines how the Service is exposed."));
        assert!(description.contains(
            "service-types\n\nPossible enum values:\n - `\"ClusterIP\"` means a service will only be accessible"
        ));
        assert_eq!(
            spec["properties"]["ipFamilies"]["items"]["enum"],
            json!(["", "IPv4", "IPv6"])
        );
        assert!(
            spec["properties"]["ipFamilies"]["items"]
                .get("description")
                .is_none()
        );
    }

    #[test]
    fn required_fields_and_extensions_are_kube_apiservers() {
        let mut spec = schema::<ServiceSpec>();
        add("io.k8s.api.core.v1.ServiceSpec", &mut spec);
        assert_eq!(spec["properties"]["ports"]["x-kubernetes-list-type"], "map");
        assert_eq!(
            spec["properties"]["ports"]["x-kubernetes-list-map-keys"],
            json!(["port", "protocol"])
        );
        assert_eq!(
            spec["properties"]["ports"]["x-kubernetes-patch-merge-key"],
            "port"
        );
        let mut reference = schema::<LocalObjectReference>();
        assert_eq!(reference["required"], json!(["name"]));
        add("io.k8s.api.core.v1.LocalObjectReference", &mut reference);
        assert!(reference.get("required").is_none());
        assert_eq!(reference["x-kubernetes-map-type"], "atomic");
    }

    #[test]
    fn k8s_openapi_descriptions_stop_before_the_paragraph() {
        let mut port = schema::<ServicePort>();
        let before = port["properties"]["protocol"]["description"].clone();
        assert!(
            !before
                .as_str()
                .unwrap_or("")
                .contains("Possible enum values")
        );
        add("io.k8s.api.core.v1.ServicePort", &mut port);
        assert_eq!(
            port["properties"]["protocol"]["enum"],
            json!(["SCTP", "TCP", "UDP"])
        );
    }

    #[test]
    fn defaults_are_kube_openapis_and_a_default_beside_a_reference_takes_all_of() {
        let mut port = schema::<ServicePort>();
        add("io.k8s.api.core.v1.ServicePort", &mut port);
        assert_eq!(port["properties"]["protocol"]["default"], "TCP");
        assert_eq!(port["properties"]["port"]["default"], 0);
        let mut spec = schema::<ServiceSpec>();
        add("io.k8s.api.core.v1.ServiceSpec", &mut spec);
        let item = &spec["properties"]["ports"]["items"];
        assert_eq!(item["default"], json!({}));
        assert!(item.get("$ref").is_none());
        assert!(item["allOf"][0]["$ref"].is_string(), "{item}");
    }
}
