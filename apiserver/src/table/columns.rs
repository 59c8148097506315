//! kube-apiserver's column definitions, read from `columns.json` (taken from kube-apiserver 1.35's Table
//! answers: names, types, formats, descriptions and priorities, `priority: 1` for the `-o wide` ones).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::Value;

const COLUMNS: &str = include_str!("columns.json");

fn all() -> &'static BTreeMap<String, Vec<Value>> {
    static PARSED: OnceLock<BTreeMap<String, Vec<Value>>> = OnceLock::new();
    // The file is part of the crate and a unit test parses it, so the fallback never serves.
    PARSED.get_or_init(|| serde_json::from_str(COLUMNS).unwrap_or_default())
}

/// The columns kube-apiserver's printer of `group`/`kind` defines, if it has one here.
pub(super) fn of(group: &str, kind: &str) -> Option<&'static [Value]> {
    all().get(&format!("{group}/{kind}")).map(Vec::as_slice)
}

/// The columns of kinds without a printer: Name and Created At.
pub(super) fn default() -> &'static [Value] {
    all().get("*/default").map(Vec::as_slice).unwrap_or(&[])
}

/// The description of the Name column (the same in every table).
pub(super) fn name_description() -> Value {
    default()
        .first()
        .map(|c| c["description"].clone())
        .unwrap_or(Value::Null)
}

/// The description of `metadata.creationTimestamp` (a CRD's default Age column).
pub(super) fn creation_timestamp_description() -> Value {
    default()
        .get(1)
        .map(|c| c["description"].clone())
        .unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_parses_and_every_column_is_complete() {
        let parsed: BTreeMap<String, Vec<Value>> =
            serde_json::from_str(COLUMNS).expect("columns.json parses");
        assert!(parsed.contains_key("*/default"));
        for (kind, columns) in &parsed {
            for c in columns {
                for key in ["name", "type", "format", "description", "priority"] {
                    assert!(c.get(key).is_some(), "{kind}: {c} has no {key}");
                }
            }
        }
        assert_eq!(default()[1]["name"], "Created At");
    }

    #[test]
    fn every_kind_has_a_printer_filling_its_columns() {
        let empty = serde_json::json!({ "metadata": { "name": "x" } });
        for (key, columns) in all().iter().filter(|(k, _)| *k != "*/default") {
            let (group, kind) = key.split_once('/').expect("group/kind");
            let print = crate::table::builtin::printer(group, kind)
                .unwrap_or_else(|| panic!("{key} has columns but no printer"));
            let cells = print(&empty, chrono::Utc::now()).cells.len();
            // kube-apiserver's IPAddress rows carry an Age cell its columns do not name.
            let expected = columns.len() + usize::from(key == "networking.k8s.io/IPAddress");
            assert_eq!(cells, expected, "{key}");
        }
    }
}
