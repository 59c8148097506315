//! Alternative renderings asked for through `Accept`: `Table` (what kubectl prints) and `PartialObjectMetadata`.
//!
//! A Table has kube-apiserver's columns for the kind: a custom resource's printer columns (`custom.rs`,
//! evaluated with `jsonpath.rs`), the printers of the built-in kinds that have one (`builtin/`, with the
//! column definitions of `columns.json`), and Name and Created At for the others. Like kube-apiserver, every
//! row carries the `-o wide` cells too; kubectl hides the columns of priority 1.

mod builtin;
mod columns;
mod custom;
mod jsonpath;
mod row;
mod time;

use serde_json::{Map, Value, json};

use super::clock::Clock;
use super::convert::from_storage;
use super::registry::ResourceType;
use custom::CustomColumns;
use row::Row;
use time::Now;

/// How objects are rendered in a response.
#[derive(Debug, Clone)]
pub enum Render {
    /// The object itself.
    Object,
    /// `meta.k8s.io/v1` Table; the row's object per `includeObject`, ages counted on the server's clock.
    Table(Include, Clock),
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
    pub fn from_accept(accept: &str, include: Option<&str>, clock: Clock) -> Self {
        if accept.contains("as=Table") {
            let include = match include {
                Some("None") => Include::None,
                Some("Object") => Include::Object,
                _ => Include::Metadata,
            };
            Render::Table(include, clock)
        } else if accept.contains("as=PartialObjectMetadata") {
            Render::Metadata
        } else {
            Render::Object
        }
    }

    /// Renders one stored object in `rt`'s version. A Table's cells of a built-in kind are printed from the
    /// stored form, as kube-apiserver prints from its internal form (an `autoscaling/v1` HorizontalPodAutoscaler
    /// shows every metric); a custom resource's from the served version, whose printer columns they are.
    pub fn object(&self, rt: &ResourceType, stored: &Value) -> Value {
        let served = from_storage(rt, stored);
        match self {
            Render::Object => served,
            Render::Metadata => partial(&served),
            Render::Table(include, clock) => {
                let meta = json!({ "resourceVersion": served["metadata"]["resourceVersion"] });
                table(rt, vec![(stored, served)], *include, meta, clock.now_utc())
            }
        }
    }

    /// Renders one watch event's object: like [`Render::object`], but a Table after the first event has
    /// `columnDefinitions: null`, as kube-apiserver sends them once per watch.
    pub fn watch_object(&self, rt: &ResourceType, stored: &Value, first: bool) -> Value {
        let mut rendered = self.object(rt, stored);
        if matches!(self, Render::Table(..)) && !first {
            rendered["columnDefinitions"] = Value::Null;
        }
        rendered
    }

    /// Renders a list of stored objects in `rt`'s version, with its list metadata.
    pub fn list(&self, rt: &ResourceType, stored: &[&Value], list_meta: Value) -> Value {
        let items: Vec<Value> = stored.iter().map(|o| from_storage(rt, o)).collect();
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
            Render::Table(include, clock) => {
                let pairs = stored.iter().copied().zip(items).collect();
                table(rt, pairs, *include, list_meta, clock.now_utc())
            }
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

/// How the objects of one kind print.
enum Printer {
    /// A custom resource's printer columns.
    Custom(CustomColumns),
    /// A built-in kind's printer.
    Builtin(&'static [Value], builtin::PrintRow),
    /// kube-apiserver's default table convertor: Name and Created At (the timestamp itself).
    Default,
}

impl Printer {
    fn of(rt: &ResourceType) -> Self {
        if rt.custom {
            return Printer::Custom(CustomColumns::new(&rt.printer_columns));
        }
        // Printed from the stored form, so by the stored group (`events.k8s.io` Events are core Events).
        let group = &rt.storage.0;
        match (
            columns::of(group, &rt.kind),
            builtin::printer(group, &rt.kind),
        ) {
            (Some(columns), Some(print)) => Printer::Builtin(columns, print),
            _ => Printer::Default,
        }
    }

    fn definitions(&self) -> Vec<Value> {
        match self {
            Printer::Custom(custom) => custom.definitions(),
            Printer::Builtin(columns, _) => columns.to_vec(),
            Printer::Default => columns::default().to_vec(),
        }
    }

    fn row(&self, obj: &Value, now: Now) -> Row {
        match self {
            Printer::Custom(custom) => custom.cells(obj, now).into(),
            Printer::Builtin(_, print) => print(obj, now),
            Printer::Default => vec![
                obj["metadata"]["name"].clone(),
                obj["metadata"]["creationTimestamp"].clone(),
            ]
            .into(),
        }
    }
}

/// A Table of (stored, served) objects.
fn table(
    rt: &ResourceType,
    items: Vec<(&Value, Value)>,
    include: Include,
    mut list_meta: Value,
    now: Now,
) -> Value {
    // A Table's ListMeta leaves an empty continue token out.
    if let Some(meta) = list_meta.as_object_mut()
        && meta.get("continue").and_then(Value::as_str) == Some("")
    {
        meta.remove("continue");
    }
    let printer = Printer::of(rt);
    let rows: Vec<Value> = items
        .into_iter()
        .map(|(stored, obj)| {
            let printed = if rt.custom { &obj } else { stored };
            let Row { cells, conditions } = printer.row(printed, now);
            let mut row = Map::new();
            row.insert("cells".into(), Value::Array(cells));
            if let Some(conditions) = conditions {
                row.insert("conditions".into(), conditions);
            }
            let object = match include {
                Include::None => Value::Null,
                Include::Metadata => partial(&obj),
                Include::Object => obj,
            };
            row.insert("object".into(), object);
            Value::Object(row)
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "columnDefinitions": printer.definitions(),
        "rows": rows,
    })
}
