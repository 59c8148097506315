//! Alternative renderings asked for through `Accept`: `Table` (what kubectl prints) and `PartialObjectMetadata`.

use serde_json::{Map, Value, json};

use super::registry::ResourceType;

/// How objects are rendered in a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Render {
    /// The object itself.
    Object,
    /// `meta.k8s.io/v1` Table; the row's object per `includeObject`.
    Table(Include),
    /// `meta.k8s.io/v1` PartialObjectMetadata.
    Metadata,
}

/// `includeObject` of a Table request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Include {
    /// No object in rows.
    None,
    /// PartialObjectMetadata in rows (the default).
    Metadata,
    /// The full object in rows.
    Object,
}

impl Render {
    /// From the `Accept` header and the `includeObject` parameter.
    pub fn from_accept(accept: &str, include: Option<&str>) -> Self {
        if accept.contains("as=Table") {
            Render::Table(match include {
                Some("None") => Include::None,
                Some("Object") => Include::Object,
                _ => Include::Metadata,
            })
        } else if accept.contains("as=PartialObjectMetadata") {
            Render::Metadata
        } else {
            Render::Object
        }
    }

    /// Renders one object (in the request's version).
    pub fn object(&self, rt: &ResourceType, obj: Value) -> Value {
        match self {
            Render::Object => obj,
            Render::Metadata => partial(&obj),
            Render::Table(include) => table(rt, vec![obj], *include, json!({})),
        }
    }

    /// Renders a list (items in the request's version) with its list metadata.
    pub fn list(&self, rt: &ResourceType, items: Vec<Value>, list_meta: Value) -> Value {
        match self {
            Render::Object => {
                let items = if rt.custom {
                    items
                } else {
                    // Typed lists of built-in kinds carry no type information on their items.
                    items
                        .into_iter()
                        .map(|mut i| {
                            if let Some(m) = i.as_object_mut() {
                                m.remove("apiVersion");
                                m.remove("kind");
                            }
                            i
                        })
                        .collect()
                };
                json!({
                    "kind": format!("{}List", rt.kind),
                    "apiVersion": rt.api_version(),
                    "metadata": list_meta,
                    "items": items,
                })
            }
            Render::Metadata => json!({
                "kind": "PartialObjectMetadataList",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": list_meta,
                "items": items.iter().map(partial).collect::<Vec<_>>(),
            }),
            Render::Table(include) => table(rt, items, *include, list_meta),
        }
    }
}

fn partial(obj: &Value) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": obj["metadata"].clone(),
    })
}

fn lookup<'a>(obj: &'a Value, json_path: &str) -> Option<&'a Value> {
    let mut cur = obj;
    for part in json_path.trim_start_matches('.').split('.') {
        if part.is_empty() {
            continue;
        }
        cur = cur.get(part)?;
    }
    Some(cur)
}

fn table(rt: &ResourceType, items: Vec<Value>, include: Include, list_meta: Value) -> Value {
    let mut columns = vec![json!({
        "name": "Name", "type": "string", "format": "name", "priority": 0,
        "description": "Name must be unique within a namespace."
    })];
    for (name, ty, _) in &rt.printer_columns {
        columns.push(
            json!({ "name": name, "type": ty, "format": "", "description": "", "priority": 0 }),
        );
    }
    columns.push(json!({
        "name": "Created At", "type": "date", "format": "", "priority": 0,
        "description": "CreationTimestamp is a timestamp representing the server time when this object was created."
    }));
    let rows: Vec<Value> = items
        .into_iter()
        .map(|obj| {
            let mut cells = vec![obj["metadata"]["name"].clone()];
            for (_, _, path) in &rt.printer_columns {
                cells.push(lookup(&obj, path).cloned().unwrap_or(Value::Null));
            }
            cells.push(obj["metadata"]["creationTimestamp"].clone());
            let mut row = Map::new();
            row.insert("cells".into(), Value::Array(cells));
            match include {
                Include::None => {}
                Include::Metadata => {
                    row.insert("object".into(), partial(&obj));
                }
                Include::Object => {
                    row.insert("object".into(), obj);
                }
            }
            Value::Object(row)
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "columnDefinitions": columns,
        "rows": rows,
    })
}
