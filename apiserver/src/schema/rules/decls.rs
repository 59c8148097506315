//! The CEL declaration of a schema node, as apiserver's `SchemaDeclType` builds it for
//! `x-kubernetes-validations`: its CEL type, and the sizes the cost estimator works with (the most
//! elements a value may have, from `maxLength`, `maxItems` and `maxProperties` or else from the largest
//! request, 3 MiB, and the smallest size a value has once serialized).

use std::collections::BTreeMap;
use std::rc::Rc;

use serde_json::Value;

use super::super::node::{Additional, Node};
use super::types::{Decl, DeclKind, Type, scalar, zero_if_negative};
use super::values::escape;

/// The largest request the server accepts, in bytes (`MaxRequestSizeBytes`).
pub(super) const MAX_REQUEST_SIZE: i64 = 3 * 1024 * 1024;

const MIN_STRING_SIZE: i64 = 2;
const MIN_BOOL_SIZE: i64 = 4;
const MIN_NUMBER_SIZE: i64 = 1;
const MIN_DURATION_SIZE: i64 = 3;
const MAX_DURATION_SIZE: i64 = 32;
const JSON_DATE_SIZE: i64 = 12;
const MIN_DATETIME_SIZE: i64 = 21;
const MAX_DATETIME_SIZE: i64 = 32;

/// The declaration of the schema node `n` (`resource` for the root or an embedded resource, which get
/// `apiVersion`, `kind` and a `metadata` of `name` and `generateName`); `None` for nodes CEL does not see.
pub(super) fn decl_of(n: &Node, resource: bool, name: &str) -> Option<Rc<Decl>> {
    decl(n, resource, name).map(Rc::new)
}

fn decl(n: &Node, resource: bool, name: &str) -> Option<Decl> {
    let unbounded_string = MAX_REQUEST_SIZE - 2;
    if n.types.len() == 2 {
        // x-kubernetes-int-or-string
        let max = match n.max_length {
            Some(l) => l.max(0) * 4,
            None => unbounded_string,
        };
        return Some(scalar(Type::Dyn, 1, max));
    }
    let ty = n.types.first().map(String::as_str).unwrap_or("");
    let ty = if resource && ty.is_empty() {
        "object"
    } else {
        ty
    };
    match ty {
        "array" => {
            let items = n.items.as_deref()?;
            let item = decl(items, items.embedded_resource, &format!("{name}.@idx"))?;
            let max = match n.max_items {
                Some(m) => zero_if_negative(m),
                None => zero_if_negative(unbounded_string / (item.min_size + 1)),
            };
            Some(Decl {
                kind: DeclKind::List(Rc::new(item)),
                max_elements: max,
                min_size: 2,
                name: String::new(),
            })
        }
        "object" => {
            if let Some(Additional::Schema(values)) = &n.additional_properties {
                let value = decl(values, values.embedded_resource, &format!("{name}.@elem"))?;
                let max = match n.max_properties {
                    Some(m) => zero_if_negative(m),
                    None => zero_if_negative(unbounded_string / (value.min_size + 6)),
                };
                return Some(Decl {
                    kind: DeclKind::Map(Rc::new(value)),
                    max_elements: max,
                    min_size: 2,
                    name: String::new(),
                });
            }
            let mut fields = BTreeMap::new();
            let mut min_size = 2;
            let mut add = |field: &str, d: Decl, required: bool, defaulted: bool| {
                if required && !defaulted {
                    min_size += field.len() as i64 + d.min_size + 4;
                }
                if let Some(escaped) = escape(field) {
                    fields.insert(escaped, Rc::new(d));
                }
            };
            let meta = resource && !has_type_and_object_meta(n);
            for (field, p) in &n.properties {
                if meta && matches!(field.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                if let Some(d) = decl(p, p.embedded_resource, &format!("{name}.{field}")) {
                    add(field, d, n.required.contains(field), p.default.is_some());
                }
            }
            if meta {
                let string = || scalar(Type::String, MIN_STRING_SIZE, unbounded_string);
                let mut meta_fields = BTreeMap::new();
                meta_fields.insert("name".to_string(), Rc::new(string()));
                meta_fields.insert("generateName".to_string(), Rc::new(string()));
                for field in ["apiVersion", "kind"] {
                    let required = n.required.iter().any(|r| r == field);
                    add(field, string(), required, false);
                }
                let metadata = Decl {
                    kind: DeclKind::Object(meta_fields),
                    max_elements: 0,
                    min_size: 2,
                    name: format!("{name}.metadata"),
                };
                let required = n.required.iter().any(|r| r == "metadata");
                add("metadata", metadata, required, false);
            }
            Some(Decl {
                kind: DeclKind::Object(fields),
                max_elements: 0,
                min_size,
                name: name.to_string(),
            })
        }
        "string" => Some(match n.format.as_str() {
            "byte" => scalar(
                Type::Bytes,
                MIN_STRING_SIZE,
                n.max_length.unwrap_or(unbounded_string),
            ),
            "duration" => scalar(Type::Duration, MIN_DURATION_SIZE, MAX_DURATION_SIZE),
            "date" => scalar(Type::Timestamp, JSON_DATE_SIZE, JSON_DATE_SIZE),
            "date-time" => scalar(Type::Timestamp, MIN_DATETIME_SIZE, MAX_DATETIME_SIZE),
            _ => {
                let max = match n.max_length {
                    Some(l) => l.max(0) * 4,
                    None if !n.enumeration.is_empty() => n
                        .enumeration
                        .iter()
                        .filter_map(Value::as_str)
                        .map(|s| s.len() as i64)
                        .max()
                        .unwrap_or(0),
                    None => unbounded_string,
                };
                scalar(Type::String, MIN_STRING_SIZE, max)
            }
        }),
        "boolean" => Some(scalar(Type::Bool, MIN_BOOL_SIZE, 0)),
        "number" => Some(scalar(Type::Double, MIN_NUMBER_SIZE, 0)),
        "integer" => Some(scalar(Type::Int, MIN_NUMBER_SIZE, 0)),
        _ => None,
    }
}

/// Whether a resource's schema already declares `kind`, `apiVersion` and `metadata` (with `name` and
/// `generateName`) as apiserver's `WithTypeAndObjectMeta` requires to leave it alone.
fn has_type_and_object_meta(n: &Node) -> bool {
    let is = |p: Option<&Node>, t: &str| p.is_some_and(|p| p.types.iter().any(|x| x == t));
    let meta = n.properties.get("metadata");
    is(n.properties.get("kind"), "string")
        && is(n.properties.get("apiVersion"), "string")
        && is(meta, "object")
        && meta.is_some_and(|m| {
            is(m.properties.get("name"), "string") && is(m.properties.get("generateName"), "string")
        })
}
