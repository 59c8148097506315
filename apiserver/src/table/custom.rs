//! The table of a custom resource, as kube-apiserver's CRD table convertor builds it: Name, then the
//! version's `additionalPrinterColumns` up to the first whose JSONPath does not parse (or, without any, Age),
//! each cell the first value its JSONPath finds, typed by the column.

use serde_json::{Value, json};

use super::jsonpath::{JsonPath, print};
use super::time::Now;
use super::{columns, time};
use crate::registry::PrinterColumn;

/// kube-apiserver's Age column of a CRD without printer columns.
fn default_columns() -> Vec<PrinterColumn> {
    vec![PrinterColumn {
        name: "Age".into(),
        type_: "date".into(),
        format: String::new(),
        description: columns::creation_timestamp_description()
            .as_str()
            .unwrap_or("")
            .to_string(),
        priority: 0,
        json_path: ".metadata.creationTimestamp".into(),
    }]
}

/// The printer columns of one CRD version, parsed once per table.
pub(super) struct CustomColumns {
    columns: Vec<(PrinterColumn, JsonPath)>,
}

impl CustomColumns {
    /// The columns of `printer_columns`, or the default Age column when there are none.
    pub(super) fn new(printer_columns: &[PrinterColumn]) -> Self {
        let columns = if printer_columns.is_empty() {
            default_columns()
        } else {
            printer_columns.to_vec()
        };
        // Like kube-apiserver's table convertor, the columns end before the first path that does not parse.
        let columns = columns
            .into_iter()
            .map_while(|c| JsonPath::column(&c.json_path).ok().map(|path| (c, path)))
            .collect();
        CustomColumns { columns }
    }

    /// The column definitions: Name, then each column (described by its JSONPath when it has no
    /// description).
    pub(super) fn definitions(&self) -> Vec<Value> {
        let mut out = vec![json!({
            "name": "Name", "type": "string", "format": "name",
            "description": columns::name_description(), "priority": 0,
        })];
        for (c, _) in &self.columns {
            let description = if c.description.is_empty() {
                format!(
                    "Custom resource definition column (in JSONPath format): {}",
                    c.json_path
                )
            } else {
                c.description.clone()
            };
            out.push(json!({
                "name": c.name, "type": c.type_, "format": c.format,
                "description": description, "priority": c.priority,
            }));
        }
        out
    }

    /// One object's cells.
    pub(super) fn cells(&self, obj: &Value, now: Now) -> Vec<Value> {
        let mut cells = vec![obj["metadata"]["name"].clone()];
        for (c, path) in &self.columns {
            let found = path.first(obj).ok().flatten();
            cells.push(match found {
                None => Value::Null,
                Some(v) if c.type_ == "string" => Value::String(print(&v)),
                Some(v) => typed_cell(&c.type_, &v, now),
            });
        }
        cells
    }
}

/// A cell of a typed column (`cellForJSONValue`): the value when it has the column's type (integers and
/// floats converted into each other), an age for dates, null otherwise.
fn typed_cell(type_: &str, value: &Value, now: Now) -> Value {
    match (type_, value) {
        ("integer", Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => json!(i),
            (None, Some(f)) => json!(f.trunc() as i64),
            _ => Value::Null,
        },
        // Go writes a whole float64 without a fraction: `3`, not `3.0`.
        ("number", Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => json!(i),
            (None, Some(f)) if f.fract() == 0.0 && f.abs() < 9.2e18 => json!(f as i64),
            (None, Some(f)) => json!(f),
            _ => Value::Null,
        },
        ("boolean", Value::Bool(b)) => json!(b),
        ("date", Value::String(s)) if s.is_empty() => json!("<unknown>"),
        ("date", Value::String(_)) => match time::parse(value) {
            Some(_) => json!(time::since(value, now)),
            None => json!("<invalid>"),
        },
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn column(name: &str, type_: &str, json_path: &str) -> PrinterColumn {
        PrinterColumn {
            name: name.into(),
            type_: type_.into(),
            format: String::new(),
            description: String::new(),
            priority: 0,
            json_path: json_path.into(),
        }
    }

    #[test]
    fn cells_follow_the_column_type() {
        let columns = CustomColumns::new(&[
            column(
                "Ready",
                "string",
                r#".status.conditions[?(@.type=="Ready")].status"#,
            ),
            column("Count", "integer", ".spec.ratio"),
            column("Ratio", "number", ".spec.count"),
            column("On", "boolean", ".spec.count"),
            column("Bad", "date", ".spec.color"),
            column("Empty", "date", ".spec.empty"),
            column("Obj", "string", ".spec.obj"),
            column("Missing", "string", ".spec.nothing"),
        ]);
        let obj = json!({
            "metadata": {"name": "w"},
            "spec": {"ratio": 2.5, "count": 3, "color": "red", "empty": "", "obj": {"a": 1}},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]},
        });
        assert_eq!(
            columns.cells(&obj, chrono::Utc::now()),
            vec![
                json!("w"),
                json!("True"),
                json!(2),
                json!(3),
                Value::Null,
                json!("<invalid>"),
                json!("<unknown>"),
                json!(r#"{"a":1}"#),
                Value::Null,
            ]
        );
        let defs = columns.definitions();
        assert_eq!(
            defs[1]["description"],
            r#"Custom resource definition column (in JSONPath format): .status.conditions[?(@.type=="Ready")].status"#
        );
    }

    #[test]
    fn columns_end_before_the_first_path_that_does_not_parse() {
        let columns = CustomColumns::new(&[
            column("A", "string", ".spec.a"),
            column("B", "string", ".spec.list["),
            column("C", "string", ".spec.c"),
        ]);
        let names: Vec<Value> = columns
            .definitions()
            .iter()
            .map(|c| c["name"].clone())
            .collect();
        assert_eq!(names, vec![json!("Name"), json!("A")]);
    }

    #[test]
    fn without_printer_columns_there_is_an_age() {
        let columns = CustomColumns::new(&[]);
        let names: Vec<Value> = columns
            .definitions()
            .iter()
            .map(|c| c["name"].clone())
            .collect();
        assert_eq!(names, vec![json!("Name"), json!("Age")]);
    }
}
