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

/// A duration the way kubectl prints ages (`45s`, `3m20s`, `5h`, `2d3h`).
fn human_duration(secs: i64) -> String {
    let s = secs.max(0);
    let (m, h, d) = (s / 60, s / 3600, s / 86400);
    if s < 120 {
        format!("{s}s")
    } else if m < 10 {
        let rest = s % 60;
        if rest == 0 {
            format!("{m}m")
        } else {
            format!("{m}m{rest}s")
        }
    } else if h < 3 {
        format!("{m}m")
    } else if h < 8 {
        let rest = m % 60;
        if rest == 0 {
            format!("{h}h")
        } else {
            format!("{h}h{rest}m")
        }
    } else if h < 48 {
        format!("{h}h")
    } else if d < 8 {
        let rest = h % 24;
        if rest == 0 {
            format!("{d}d")
        } else {
            format!("{d}d{rest}h")
        }
    } else if d < 365 * 2 {
        format!("{d}d")
    } else {
        format!("{}y", d / 365)
    }
}

fn age(timestamp: &Value) -> Value {
    let Some(t) = timestamp
        .as_str()
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
    else {
        return Value::String("<unknown>".into());
    };
    let secs = (chrono::Utc::now() - t.with_timezone(&chrono::Utc)).num_seconds();
    Value::String(human_duration(secs))
}

fn table(rt: &ResourceType, items: Vec<Value>, include: Include, list_meta: Value) -> Value {
    // Custom resources print like kube-apiserver's CRD table convertor (Name, printer columns, Age as a
    // duration); other kinds like its default convertor (Name, Created At).
    let custom = rt.custom;
    let mut columns = vec![json!({
        "name": "Name", "type": "string", "format": "name", "priority": 0,
        "description": "Name must be unique within a namespace."
    })];
    for (name, ty, _) in &rt.printer_columns {
        columns.push(
            json!({ "name": name, "type": ty, "format": "", "description": "", "priority": 0 }),
        );
    }
    if custom {
        if !rt.printer_columns.iter().any(|(n, _, _)| n == "Age") {
            columns.push(json!({ "name": "Age", "type": "date", "format": "", "priority": 0, "description": "" }));
        }
    } else {
        columns.push(json!({
            "name": "Created At", "type": "date", "format": "", "priority": 0,
            "description": "CreationTimestamp is a timestamp representing the server time when this object was created."
        }));
    }
    let rows: Vec<Value> = items
        .into_iter()
        .map(|obj| {
            let mut cells = vec![obj["metadata"]["name"].clone()];
            for (_, ty, path) in &rt.printer_columns {
                let v = lookup(&obj, path).cloned().unwrap_or(Value::Null);
                cells.push(if ty == "date" { age(&v) } else { v });
            }
            if custom {
                if !rt.printer_columns.iter().any(|(n, _, _)| n == "Age") {
                    cells.push(age(&obj["metadata"]["creationTimestamp"]));
                }
            } else {
                cells.push(obj["metadata"]["creationTimestamp"].clone());
            }
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

#[cfg(test)]
mod tests {
    use super::human_duration;

    #[test]
    fn ages_read_like_kubectl() {
        assert_eq!(human_duration(45), "45s");
        assert_eq!(human_duration(200), "3m20s");
        assert_eq!(human_duration(3 * 3600 + 60), "3h1m");
        assert_eq!(human_duration(20 * 3600), "20h");
        assert_eq!(human_duration(3 * 86400 + 7200), "3d2h");
        assert_eq!(human_duration(30 * 86400), "30d");
    }
}
