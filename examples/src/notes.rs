//! A kind with two versions (the conversion tests use it): `v1` Notes hold one `text`, `v2` Notes (the hub, and
//! the storage version) hold `lines` and an optional `title`, which `v1` keeps in an annotation so that a
//! round trip loses nothing. A `v1` text starting with `!` cannot be converted (a conversion that fails for
//! one object).

use k8s_openapi::api::core::v1::ConfigMap;
use kube::{CustomResource, ResourceExt};
use kubewright::prelude::*;

/// The annotation that keeps a `v2` title on a `v1` Note.
pub const TITLE: &str = "versions.example.dev/title";

/// `versions.example.dev/v1`.
pub mod v1 {
    use super::*;

    /// A note as one text.
    #[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[kube(
        group = "versions.example.dev",
        version = "v1",
        kind = "Note",
        namespaced
    )]
    #[kube(status = "super::NoteStatus")]
    pub struct NoteSpec {
        /// The lines, joined with newlines.
        pub text: String,
    }
}

/// `versions.example.dev/v2`, the hub.
pub mod v2 {
    use super::*;

    /// A note as lines with a title; its reconciler writes a ConfigMap of the lines.
    #[derive(
        CustomResource, Reconciler, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema,
    )]
    #[kube(
        group = "versions.example.dev",
        version = "v2",
        kind = "Note",
        namespaced
    )]
    #[kube(status = "super::NoteStatus")]
    #[reconciler(storage)]
    #[version(
        super::v1::Note,
        deprecated = "versions.example.dev/v1 Note is deprecated; use v2"
    )]
    #[child(ConfigMap, desired = super::desired_config_map)]
    pub struct NoteSpec {
        /// The lines.
        pub lines: Vec<String>,
        /// A title `v1` cannot hold.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub title: Option<String>,
    }
}

/// The status both versions share.
#[derive(
    Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, ReconcilerStatus,
)]
#[serde(rename_all = "camelCase")]
pub struct NoteStatus {
    /// The generation last reconciled.
    pub observed_generation: Option<i64>,
    /// Ready and the child's condition.
    #[serde(default)]
    pub conditions: Vec<Condition>,
}

impl TryFrom<v1::Note> for v2::Note {
    type Error = String;

    fn try_from(old: v1::Note) -> Result<Self, String> {
        if old.spec.text.starts_with('!') {
            return Err(format!("text {:?} cannot be read", old.spec.text));
        }
        let mut metadata = old.metadata;
        let title = metadata.annotations.as_mut().and_then(|a| a.remove(TITLE));
        if metadata.annotations.as_ref().is_some_and(|a| a.is_empty()) {
            metadata.annotations = None;
        }
        Ok(v2::Note {
            metadata,
            spec: v2::NoteSpec {
                lines: lines(&old.spec.text),
                title,
            },
            status: old.status,
        })
    }
}

impl From<v2::Note> for v1::Note {
    fn from(new: v2::Note) -> Self {
        let mut metadata = new.metadata;
        if let Some(title) = new.spec.title {
            metadata
                .annotations
                .get_or_insert_with(Default::default)
                .insert(TITLE.into(), title);
        }
        v1::Note {
            metadata,
            spec: v1::NoteSpec {
                text: new.spec.lines.join("\n"),
            },
            status: new.status,
        }
    }
}

/// A text's lines: none for an empty text, else every line between newlines (a trailing newline makes an
/// empty last line, so that joining them gives the text back).
fn lines(text: &str) -> Vec<String> {
    if text.is_empty() {
        return Vec::new();
    }
    text.split('\n').map(String::from).collect()
}

/// The ConfigMap `NAME-lines` with one key per line.
pub fn desired_config_map(
    note: &v2::Note,
    _cx: &mut Context,
) -> kubewright::Result<Option<ConfigMap>> {
    let data = note
        .spec
        .lines
        .iter()
        .enumerate()
        .map(|(i, l)| (format!("line{i}"), l.clone()))
        .collect();
    Ok(Some(ConfigMap {
        metadata: kube::api::ObjectMeta {
            name: Some(format!("{}-lines", note.name_any())),
            ..Default::default()
        },
        data: Some(data),
        ..Default::default()
    }))
}

/// The operator of Notes: `v2` reconciled, both versions served and converted.
pub fn app() -> kubewright::cli::App {
    kubewright::cli::App::new("note-operator").operate::<v2::Note>()
}
