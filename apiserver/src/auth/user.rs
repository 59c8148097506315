//! A user as authenticators describe one: name, uid, groups and extra values.

use std::collections::BTreeMap;

use serde_json::{Value, json};

/// A user.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct UserInfo {
    /// The user name.
    pub(crate) name: String,
    /// The uid, empty when unknown.
    pub(crate) uid: String,
    /// The groups, in order.
    pub(crate) groups: Vec<String>,
    /// Extra values by key.
    pub(crate) extra: BTreeMap<String, Vec<String>>,
}

/// The name of the one user who makes every request to the in-memory server.
pub(crate) const REQUESTER_NAME: &str = "system:admin";

/// The groups of the requester.
pub(crate) const REQUESTER_GROUPS: [&str; 2] = ["system:masters", "system:authenticated"];

/// The user every request is made by: the in-memory server authenticates no one.
pub(crate) fn requester() -> UserInfo {
    UserInfo {
        name: REQUESTER_NAME.into(),
        groups: REQUESTER_GROUPS.iter().map(|g| g.to_string()).collect(),
        ..UserInfo::default()
    }
}

impl UserInfo {
    /// The `authentication.k8s.io/v1` `UserInfo` JSON (empty fields left out, as Go's `omitempty` does).
    pub(crate) fn to_json(&self) -> Value {
        let mut out = json!({});
        if !self.name.is_empty() {
            out["username"] = json!(self.name);
        }
        if !self.uid.is_empty() {
            out["uid"] = json!(self.uid);
        }
        if !self.groups.is_empty() {
            out["groups"] = json!(self.groups);
        }
        if !self.extra.is_empty() {
            out["extra"] = json!(self.extra);
        }
        out
    }
}
