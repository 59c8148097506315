//! The v2 document as gnostic's protobuf `openapi.v2.Document`, as kube-openapi's handler makes it from the
//! JSON (`ToProtoBinary`: gnostic's `ParseDocument`, then `proto.Marshal`): maps become lists of named
//! entries in key order, `x-` keys become vendor extensions, and free values (`default`, `enum`, `example`,
//! extension values) become `Any` messages holding their YAML.
//!
//! Only what a Kubernetes document uses is carried: a keyword of swagger 2.0 that kube-apiserver never writes
//! (`xml`, `externalDocs`, `discriminator`, OAuth2 security, file schemas, form parameters' items) is left out.

use prost::Message;
use serde_json::{Map, Value};

use super::error::V2Error;
use super::gnostic::openapi::v2 as pb;

/// The protobuf encoding of the v2 document `doc`.
pub(super) fn encode(doc: &Value) -> Result<Vec<u8>, V2Error> {
    Ok(document(doc)?.encode_to_vec())
}

fn object<'a>(v: &'a Value, at: &str) -> Result<&'a Map<String, Value>, V2Error> {
    v.as_object().ok_or_else(|| V2Error::Shape {
        at: at.to_string(),
        expected: "an object",
    })
}

fn string(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn strings(v: &Value, key: &str) -> Vec<String> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn boolean(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn float(v: &Value, key: &str) -> f64 {
    v.get(key).and_then(Value::as_f64).unwrap_or(0.0)
}

fn integer(v: &Value, key: &str) -> i64 {
    v.get(key).and_then(Value::as_i64).unwrap_or(0)
}

/// A free value, as gnostic keeps it: its YAML.
fn any(v: &Value) -> pb::Any {
    pb::Any {
        value: None,
        yaml: super::yaml::yaml(v),
    }
}

fn optional_any(v: &Value, key: &str) -> Option<pb::Any> {
    v.get(key).map(any)
}

fn anys(v: &Value, key: &str) -> Vec<pb::Any> {
    v.get(key)
        .and_then(Value::as_array)
        .map(|a| a.iter().map(any).collect())
        .unwrap_or_default()
}

/// The `x-` keys of an object, in key order.
fn extensions(v: &Value) -> Vec<pb::NamedAny> {
    let mut out: Vec<pb::NamedAny> = v
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| k.starts_with("x-"))
        .map(|(k, v)| pb::NamedAny {
            name: k.clone(),
            value: Some(any(v)),
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The entries of an object in key order (Go's encoder sorts map keys, and gnostic keeps the JSON's order).
fn sorted(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    entries
}

fn document(doc: &Value) -> Result<pb::Document, V2Error> {
    object(doc, "")?;
    let mut paths = Vec::new();
    if let Some(map) = doc.get("paths").and_then(Value::as_object) {
        for (name, item) in sorted(map) {
            paths.push(pb::NamedPathItem {
                name: name.clone(),
                value: Some(path_item(item, name)?),
            });
        }
    }
    let mut definitions = Vec::new();
    if let Some(map) = doc.get("definitions").and_then(Value::as_object) {
        for (name, s) in sorted(map) {
            definitions.push(pb::NamedSchema {
                name: name.clone(),
                value: Some(schema(s)),
            });
        }
    }
    let mut shared = Vec::new();
    if let Some(map) = doc.get("parameters").and_then(Value::as_object) {
        for (name, p) in sorted(map) {
            shared.push(pb::NamedParameter {
                name: name.clone(),
                value: Some(parameter(p)),
            });
        }
    }
    let mut security_definitions = Vec::new();
    if let Some(map) = doc.get("securityDefinitions").and_then(Value::as_object) {
        for (name, d) in sorted(map) {
            let key = pb::ApiKeySecurity {
                r#type: string(d, "type"),
                name: string(d, "name"),
                r#in: string(d, "in"),
                description: string(d, "description"),
                vendor_extension: extensions(d),
            };
            security_definitions.push(pb::NamedSecurityDefinitionsItem {
                name: name.clone(),
                value: Some(pb::SecurityDefinitionsItem {
                    oneof: Some(pb::security_definitions_item::Oneof::ApiKeySecurity(key)),
                }),
            });
        }
    }
    let info = doc.get("info").map(|i| pb::Info {
        title: string(i, "title"),
        version: string(i, "version"),
        description: string(i, "description"),
        vendor_extension: extensions(i),
        ..Default::default()
    });
    Ok(pb::Document {
        swagger: string(doc, "swagger"),
        info,
        host: string(doc, "host"),
        base_path: string(doc, "basePath"),
        schemes: strings(doc, "schemes"),
        consumes: strings(doc, "consumes"),
        produces: strings(doc, "produces"),
        paths: Some(pb::Paths {
            vendor_extension: Vec::new(),
            path: paths,
        }),
        definitions: Some(pb::Definitions {
            additional_properties: definitions,
        }),
        parameters: (!shared.is_empty()).then_some(pb::ParameterDefinitions {
            additional_properties: shared,
        }),
        security: security(doc),
        security_definitions: (!security_definitions.is_empty()).then_some(
            pb::SecurityDefinitions {
                additional_properties: security_definitions,
            },
        ),
        vendor_extension: extensions(doc),
        ..Default::default()
    })
}

fn security(v: &Value) -> Vec<pb::SecurityRequirement> {
    v.get("security")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_object)
        .map(|requirement| pb::SecurityRequirement {
            additional_properties: sorted(requirement)
                .into_iter()
                .map(|(name, scopes)| pb::NamedStringArray {
                    name: name.clone(),
                    value: Some(pb::StringArray {
                        value: scopes
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect(),
                    }),
                })
                .collect(),
        })
        .collect()
}

fn path_item(item: &Value, at: &str) -> Result<pb::PathItem, V2Error> {
    object(item, at)?;
    let op = |method: &str| item.get(method).map(operation).transpose();
    Ok(pb::PathItem {
        r#ref: string(item, "$ref"),
        get: op("get")?,
        put: op("put")?,
        post: op("post")?,
        delete: op("delete")?,
        options: op("options")?,
        head: op("head")?,
        patch: op("patch")?,
        parameters: parameters(item),
        vendor_extension: extensions(item),
    })
}

fn operation(op: &Value) -> Result<pb::Operation, V2Error> {
    let mut codes = Vec::new();
    if let Some(map) = op.get("responses").and_then(Value::as_object) {
        for (code, r) in sorted(map)
            .into_iter()
            .filter(|(k, _)| !k.starts_with("x-"))
        {
            let value = if let Some(reference) = r.get("$ref").and_then(Value::as_str) {
                pb::response_value::Oneof::JsonReference(pb::JsonReference {
                    r#ref: reference.to_string(),
                    description: string(r, "description"),
                })
            } else {
                pb::response_value::Oneof::Response(pb::Response {
                    description: string(r, "description"),
                    schema: r.get("schema").map(|s| pb::SchemaItem {
                        oneof: Some(pb::schema_item::Oneof::Schema(schema(s))),
                    }),
                    vendor_extension: extensions(r),
                    ..Default::default()
                })
            };
            codes.push(pb::NamedResponseValue {
                name: code.clone(),
                value: Some(pb::ResponseValue { oneof: Some(value) }),
            });
        }
    }
    Ok(pb::Operation {
        tags: strings(op, "tags"),
        summary: string(op, "summary"),
        description: string(op, "description"),
        operation_id: string(op, "operationId"),
        produces: strings(op, "produces"),
        consumes: strings(op, "consumes"),
        parameters: parameters(op),
        responses: Some(pb::Responses {
            response_code: codes,
            vendor_extension: op.get("responses").map(extensions).unwrap_or_default(),
        }),
        schemes: strings(op, "schemes"),
        deprecated: boolean(op, "deprecated"),
        security: security(op),
        vendor_extension: extensions(op),
        ..Default::default()
    })
}

fn parameters(v: &Value) -> Vec<pb::ParametersItem> {
    v.get("parameters")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|p| {
            let oneof = if let Some(reference) = p.get("$ref").and_then(Value::as_str) {
                pb::parameters_item::Oneof::JsonReference(pb::JsonReference {
                    r#ref: reference.to_string(),
                    description: string(p, "description"),
                })
            } else {
                pb::parameters_item::Oneof::Parameter(parameter(p))
            };
            pb::ParametersItem { oneof: Some(oneof) }
        })
        .collect()
}

fn parameter(p: &Value) -> pb::Parameter {
    use pb::non_body_parameter::Oneof as NonBody;
    let oneof = match p.get("in").and_then(Value::as_str).unwrap_or_default() {
        "body" => pb::parameter::Oneof::BodyParameter(pb::BodyParameter {
            description: string(p, "description"),
            name: string(p, "name"),
            r#in: string(p, "in"),
            required: boolean(p, "required"),
            schema: p.get("schema").map(schema),
            vendor_extension: extensions(p),
        }),
        "path" => non_body(NonBody::PathParameterSubSchema(
            pb::PathParameterSubSchema {
                required: boolean(p, "required"),
                r#in: string(p, "in"),
                description: string(p, "description"),
                name: string(p, "name"),
                r#type: string(p, "type"),
                format: string(p, "format"),
                default: optional_any(p, "default"),
                unique_items: boolean(p, "uniqueItems"),
                r#enum: anys(p, "enum"),
                vendor_extension: extensions(p),
                ..Default::default()
            },
        )),
        "header" => non_body(NonBody::HeaderParameterSubSchema(
            pb::HeaderParameterSubSchema {
                required: boolean(p, "required"),
                r#in: string(p, "in"),
                description: string(p, "description"),
                name: string(p, "name"),
                r#type: string(p, "type"),
                format: string(p, "format"),
                default: optional_any(p, "default"),
                unique_items: boolean(p, "uniqueItems"),
                r#enum: anys(p, "enum"),
                vendor_extension: extensions(p),
                ..Default::default()
            },
        )),
        _ => non_body(NonBody::QueryParameterSubSchema(
            pb::QueryParameterSubSchema {
                required: boolean(p, "required"),
                r#in: string(p, "in"),
                description: string(p, "description"),
                name: string(p, "name"),
                allow_empty_value: boolean(p, "allowEmptyValue"),
                r#type: string(p, "type"),
                format: string(p, "format"),
                collection_format: string(p, "collectionFormat"),
                default: optional_any(p, "default"),
                unique_items: boolean(p, "uniqueItems"),
                r#enum: anys(p, "enum"),
                vendor_extension: extensions(p),
                ..Default::default()
            },
        )),
    };
    pb::Parameter { oneof: Some(oneof) }
}

fn non_body(oneof: pb::non_body_parameter::Oneof) -> pb::parameter::Oneof {
    pb::parameter::Oneof::NonBodyParameter(pb::NonBodyParameter { oneof: Some(oneof) })
}

fn schema(s: &Value) -> pb::Schema {
    let ty = match s.get("type") {
        Some(Value::String(t)) => Some(pb::TypeItem {
            value: vec![t.clone()],
        }),
        Some(Value::Array(ts)) => Some(pb::TypeItem {
            value: ts
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
        }),
        _ => None,
    };
    let items = match s.get("items") {
        Some(Value::Array(items)) => Some(pb::ItemsItem {
            schema: items.iter().map(schema).collect(),
        }),
        Some(item @ Value::Object(_)) => Some(pb::ItemsItem {
            schema: vec![schema(item)],
        }),
        _ => None,
    };
    let additional_properties = match s.get("additionalProperties") {
        Some(Value::Bool(b)) => Some(pb::additional_properties_item::Oneof::Boolean(*b)),
        Some(v @ Value::Object(_)) => Some(pb::additional_properties_item::Oneof::Schema(
            Box::new(schema(v)),
        )),
        _ => None,
    }
    .map(|oneof| Box::new(pb::AdditionalPropertiesItem { oneof: Some(oneof) }));
    let properties = s
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| pb::Properties {
            additional_properties: sorted(p)
                .into_iter()
                .map(|(name, v)| pb::NamedSchema {
                    name: name.clone(),
                    value: Some(schema(v)),
                })
                .collect(),
        });
    pb::Schema {
        r#ref: string(s, "$ref"),
        format: string(s, "format"),
        title: string(s, "title"),
        description: string(s, "description"),
        default: optional_any(s, "default"),
        multiple_of: float(s, "multipleOf"),
        maximum: float(s, "maximum"),
        exclusive_maximum: boolean(s, "exclusiveMaximum"),
        minimum: float(s, "minimum"),
        exclusive_minimum: boolean(s, "exclusiveMinimum"),
        max_length: integer(s, "maxLength"),
        min_length: integer(s, "minLength"),
        pattern: string(s, "pattern"),
        max_items: integer(s, "maxItems"),
        min_items: integer(s, "minItems"),
        unique_items: boolean(s, "uniqueItems"),
        max_properties: integer(s, "maxProperties"),
        min_properties: integer(s, "minProperties"),
        required: strings(s, "required"),
        r#enum: anys(s, "enum"),
        additional_properties,
        r#type: ty,
        items,
        all_of: s
            .get("allOf")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(schema).collect())
            .unwrap_or_default(),
        properties,
        read_only: boolean(s, "readOnly"),
        example: optional_any(s, "example"),
        vendor_extension: extensions(s),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_document_round_trips_through_protobuf() {
        let doc = json!({
            "swagger": "2.0",
            "info": { "title": "Kubernetes", "version": "1.35" },
            "paths": { "/api/v1/namespaces/{namespace}/configmaps/{name}": {
                "patch": {
                    "parameters": [{ "uniqueItems": true, "type": "string", "name": "fieldValidation", "in": "query" }],
                    "responses": { "200": { "description": "OK", "schema": { "$ref": "#/definitions/C" } } },
                    "x-kubernetes-group-version-kind": { "group": "", "kind": "ConfigMap", "version": "v1" },
                },
            }},
            "definitions": { "C": {
                "type": "object",
                "required": ["data"],
                "properties": { "data": { "type": "object", "additionalProperties": { "type": "string" } } },
                "x-kubernetes-group-version-kind": [{ "group": "", "kind": "ConfigMap", "version": "v1" }],
            }},
        });
        let bytes = encode(&doc).expect("encoded");
        let back = pb::Document::decode(bytes.as_slice()).expect("decoded");
        assert_eq!(back.swagger, "2.0");
        let defs = back.definitions.expect("definitions").additional_properties;
        let c = defs[0].value.as_ref().expect("a schema");
        assert_eq!(
            c.r#type.as_ref().map(|t| t.value.clone()),
            Some(vec!["object".to_string()])
        );
        assert_eq!(c.required, vec!["data"]);
        assert_eq!(
            c.vendor_extension[0]
                .value
                .as_ref()
                .map(|a| a.yaml.as_str()),
            Some("- group: \"\"\n  kind: ConfigMap\n  version: v1\n")
        );
        let path = &back.paths.expect("paths").path[0];
        let patch = path
            .value
            .as_ref()
            .and_then(|p| p.patch.as_ref())
            .expect("a patch");
        assert_eq!(
            patch.vendor_extension[0]
                .value
                .as_ref()
                .map(|a| a.yaml.as_str()),
            Some("group: \"\"\nkind: ConfigMap\nversion: v1\n")
        );
    }
}
