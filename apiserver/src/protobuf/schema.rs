//! The protobuf messages of the built-in kinds: `schema.json`, written by `cargo xtask protobuf-schema` from
//! Kubernetes' `generated.proto` files and the Go types they were generated from.
//!
//! Each message is a Go struct (its fields with their JSON names, `""` for a struct embedded inline, and
//! whether Go holds them by value, which its protobuf code marshals even when zero), a Go named slice
//! (`Verbs`, `ExtraValue`: a JSON array, a message of `items`), or a type with its own JSON form (`Time`,
//! `Quantity`, `IntOrString`, ...) that `encode.rs` writes by hand.

use std::collections::HashMap;
use std::sync::LazyLock;

use serde::Deserialize;

/// The schema, parsed on first use.
static SCHEMA: LazyLock<Schema> = LazyLock::new(|| {
    serde_json::from_str(include_str!("schema.json")).unwrap_or_else(|e| {
        tracing::error!(error = %e, "the protobuf schema does not parse; nothing is encoded in protobuf");
        Schema::default()
    })
});

/// The messages of every served group-version.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Schema {
    /// Proto package by `apiVersion`.
    groups: HashMap<String, String>,
    /// Messages by full name.
    messages: HashMap<String, Message>,
}

/// One message.
#[derive(Debug, Deserialize)]
pub(super) struct Message {
    /// How its JSON is laid out.
    pub(super) form: Form,
    /// Its fields, in the order of the `.proto` file.
    #[serde(default)]
    pub(super) fields: Vec<Field>,
}

/// How a message's JSON is laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Form {
    /// A JSON object of the fields.
    Struct,
    /// A JSON array: the message's only field, `items`.
    Slice,
    /// A JSON form of its own.
    Special,
}

/// One field of a message.
#[derive(Debug, Deserialize)]
pub(super) struct Field {
    /// The JSON name; empty for a Go struct embedded inline.
    pub(super) json: String,
    /// The field number.
    pub(super) number: u32,
    /// Single, repeated, or a map.
    pub(super) label: Label,
    /// A scalar type (`string`, `int32`, ...) or the full name of a message: of the value, for a map.
    #[serde(rename = "type")]
    pub(super) ty: String,
    /// The scalar type of a map's keys.
    #[serde(default)]
    pub(super) key: Option<String>,
    /// Held by value in Go: written even when absent from the JSON, as its zero.
    #[serde(default)]
    pub(super) value: bool,
    /// `omitempty` (or `omitzero`) in its JSON tag: left out of the JSON when zero.
    #[serde(default)]
    pub(super) omitempty: bool,
}

/// A field's label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum Label {
    /// One value.
    Optional,
    /// A list.
    Repeated,
    /// A map (repeated key-value entries).
    Map,
}

/// The message named `name`.
pub(super) fn message(name: &str) -> Option<&'static Message> {
    SCHEMA.messages.get(name)
}

/// The full name of the message of a top-level object: the kind in the package of its `apiVersion`. A
/// `Status` is `meta.k8s.io/v1`'s whatever group it is served in, as kube-apiserver registers it in every
/// group-version.
pub(super) fn message_of(api_version: &str, kind: &str) -> Option<String> {
    let in_package = |package: &String| {
        let name = format!("{package}.{kind}");
        SCHEMA.messages.contains_key(&name).then_some(name)
    };
    SCHEMA
        .groups
        .get(api_version)
        .and_then(in_package)
        .or_else(|| match kind {
            "Status" => SCHEMA.groups.get("meta.k8s.io/v1").and_then(in_package),
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_parses_and_names_the_built_in_kinds() {
        assert!(SCHEMA.messages.len() > 1000);
        assert_eq!(
            message_of("apps/v1", "Deployment").as_deref(),
            Some("k8s.io.api.apps.v1.Deployment")
        );
        assert_eq!(
            message_of("v1", "Status").as_deref(),
            Some("k8s.io.apimachinery.pkg.apis.meta.v1.Status")
        );
        assert_eq!(message_of("example.com/v1", "Widget"), None);
    }
}
