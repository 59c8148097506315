//! Conflicts: fields an apply would change while another manager owns them, and the 409 message.

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value};

use super::entries::{Entry, manager_identity};
use super::field_set::{FieldSet, go_quote, path_string};
use super::scope::Operation;

/// A field whose value an apply would change while another manager owns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The other manager's name.
    pub manager: String,
    /// The other manager's operation.
    pub operation: Operation,
    /// The apiVersion of the other manager's entry.
    pub api_version: String,
    /// The other manager's subresource (`Some("status")` for status entries).
    pub subresource: Option<String>,
    /// The field in structured-merge-diff path form, e.g. `.spec.replicas`,
    /// `.spec.template.spec.containers[name="app"].image`, `.metadata.finalizers[="x"]`.
    pub field: String,
}

impl Conflict {
    /// How the real server names the other manager: `"mgr"` for appliers, `"mgr" using apps/v1`
    /// for updaters, with ` with subresource "status"` after the name for status entries.
    pub fn manager_description(&self) -> String {
        let mut out = go_quote(&self.manager);
        if let Some(sub) = self.subresource.as_deref().filter(|s| !s.is_empty()) {
            out.push_str(" with subresource ");
            out.push_str(&go_quote(sub));
        }
        if self.operation == Operation::Update {
            out.push_str(" using ");
            out.push_str(&self.api_version);
        }
        out
    }

    /// The `StatusCause` the real server puts in `details.causes` for this conflict:
    /// `{"reason": "FieldManagerConflict", "message": "conflict with \"mgr\" using v1",
    /// "field": ".spec.x"}`.
    pub fn cause(&self) -> Value {
        let mut cause = Map::new();
        cause.insert(
            "reason".to_owned(),
            Value::String("FieldManagerConflict".to_owned()),
        );
        cause.insert(
            "message".to_owned(),
            Value::String(format!("conflict with {}", self.manager_description())),
        );
        cause.insert("field".to_owned(), Value::String(self.field.clone()));
        Value::Object(cause)
    }

    pub(super) fn identity(&self) -> String {
        manager_identity(
            &self.manager,
            self.operation,
            &self.api_version,
            self.subresource.as_deref().unwrap_or(""),
        )
    }
}

impl fmt::Display for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "conflict with {}: {}",
            self.manager_description(),
            self.field
        )
    }
}

impl std::error::Error for Conflict {}

/// Renders conflicts like the message of the real server's 409 response.
///
/// One conflict:
/// `Apply failed with 1 conflict: conflict with "mgr" using apps/v1: .spec.replicas`.
///
/// Several (one line per manager and per field, joined with `\n`; managers sorted like the real
/// server sorts its manager identifiers, fields in the given order):
///
/// ```text
/// Apply failed with 3 conflicts: conflicts with "a":
/// - .spec.x
/// - .spec.y
/// conflicts with "b" using v1:
/// - .spec.x
/// ```
pub fn conflict_message(conflicts: &[Conflict]) -> String {
    if let [only] = conflicts {
        return format!("Apply failed with 1 conflict: {only}");
    }
    let mut groups: BTreeMap<String, (String, Vec<&str>)> = BTreeMap::new();
    for conflict in conflicts {
        groups
            .entry(conflict.identity())
            .or_insert_with(|| (conflict.manager_description(), Vec::new()))
            .1
            .push(&conflict.field);
    }
    let mut lines = Vec::new();
    for (description, fields) in groups.values() {
        lines.push(format!("conflicts with {description}:"));
        for field in fields {
            lines.push(format!("- {field}"));
        }
    }
    format!(
        "Apply failed with {} conflicts: {}",
        conflicts.len(),
        lines.join("\n")
    )
}

pub(super) fn build_conflicts(
    entries: &[Entry],
    conflicting: &[(usize, FieldSet)],
) -> Vec<Conflict> {
    let mut out: Vec<(String, Conflict)> = Vec::new();
    for (j, set) in conflicting {
        let Some(entry) = entries.get(*j) else {
            continue;
        };
        let identity = entry.identity();
        for path in set.paths() {
            out.push((
                identity.clone(),
                Conflict {
                    manager: entry.manager.clone(),
                    operation: entry.operation,
                    api_version: entry.api_version.clone(),
                    subresource: Some(entry.subresource.clone()).filter(|s| !s.is_empty()),
                    field: path_string(&path),
                },
            ));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out.into_iter().map(|(_, conflict)| conflict).collect()
}
