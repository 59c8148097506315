//! One row of a Table, as a printer fills it.

use serde_json::Value;

/// One row's cells, and the conditions kube-apiserver gives some rows (a finished Pod's `Completed`).
pub(super) struct Row {
    pub(super) cells: Vec<Value>,
    pub(super) conditions: Option<Value>,
}

impl From<Vec<Value>> for Row {
    fn from(cells: Vec<Value>) -> Self {
        Row {
            cells,
            conditions: None,
        }
    }
}
