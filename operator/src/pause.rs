//! Pausing one parent: while its pause annotation (`GROUP/paused: "true"`, e.g. `example.dev/paused`; for a
//! core-group parent `kubewright/paused`) is set, its passes run no step and write nothing to it or its
//! children, except a `Paused=True` condition in its status (where the runtime writes status) and a `Paused`
//! event when the pause starts. Its `Ready` condition and `observedGeneration` stay as they were (they speak
//! of the generation last reconciled); a parent paused before its first pass gets `Ready=False` with reason
//! `Paused`. Removing the annotation (or setting another value) triggers one pass that reconciles as usual,
//! removes the `Paused` condition and records a `Resumed` event.
//!
//! A paused parent being deleted still runs its finalize steps, so that deletion is not blocked by a
//! forgotten annotation; [`Reconciler::finalize_while_paused`] with `false` keeps it `Terminating` until the
//! pause ends instead.
//!
//! ```
//! # use k8s_openapi::api::core::v1::ConfigMap;
//! # use kubewright::prelude::*;
//! # #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
//! # #[kube(group = "example.dev", version = "v1", kind = "Note", namespaced, status = "NoteStatus")]
//! # pub struct NoteSpec { pub text: String }
//! # #[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, ReconcilerStatus)]
//! # #[serde(rename_all = "camelCase")]
//! # pub struct NoteStatus { pub observed_generation: Option<i64>, #[serde(default)] pub conditions: Vec<Condition> }
//! let r = Reconciler::<Note>::new("note-controller");
//! assert_eq!(r.pause_annotation_name(), "example.dev/paused");
//! let r = r.pause_annotation("notes.example.dev/hold").finalize_while_paused(false);
//! assert_eq!(r.pause_annotation_name(), "notes.example.dev/hold");
//! ```

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{Resource, ResourceExt};

use crate::cache::CachedKind;
use crate::conditions::ConditionUpdate;
use crate::reconciler::Reconciler;

/// The condition type (and reason) of a paused parent.
pub const PAUSED: &str = "Paused";

/// A reconciler's pause settings.
#[derive(Debug, Clone)]
pub(crate) struct Pause {
    annotation: Option<String>,
    pub(crate) finalize: bool,
}

impl Default for Pause {
    fn default() -> Self {
        Pause {
            annotation: None,
            finalize: true,
        }
    }
}

impl Pause {
    /// The annotation that pauses a `P`.
    fn annotation<P: Resource<DynamicType = ()>>(&self) -> String {
        self.annotation.clone().unwrap_or_else(|| {
            let group = P::group(&());
            if group.is_empty() {
                "kubewright/paused".to_string()
            } else {
                format!("{group}/paused")
            }
        })
    }

    /// The annotation, when it pauses `parent` (its value is `"true"`).
    pub(crate) fn paused<P: Resource<DynamicType = ()>>(&self, parent: &P) -> Option<String> {
        let annotation = self.annotation::<P>();
        (parent.annotations().get(&annotation).map(String::as_str) == Some("true"))
            .then_some(annotation)
    }
}

/// The `Paused=True` condition a paused pass sets.
pub(crate) fn condition(annotation: &str) -> ConditionUpdate {
    ConditionUpdate::true_(
        PAUSED,
        PAUSED,
        format!("reconciling is paused by the annotation {annotation}; remove it to resume"),
    )
}

/// Whether `conditions` hold the runtime's `Paused=True`.
pub(crate) fn is_marked(conditions: &[Condition]) -> bool {
    conditions
        .iter()
        .any(|c| c.type_ == PAUSED && c.reason == PAUSED && c.status == "True")
}

/// Removes the runtime's `Paused` condition (an author's own condition of that type, with another reason,
/// stays).
pub(crate) fn clear(conditions: &mut Vec<Condition>) {
    conditions.retain(|c| !(c.type_ == PAUSED && c.reason == PAUSED));
}

impl<P: CachedKind> Reconciler<P> {
    /// Pauses a parent with this annotation (value `"true"`) instead of `GROUP/paused`.
    #[must_use]
    pub fn pause_annotation(mut self, annotation: impl Into<String>) -> Self {
        self.pause.annotation = Some(annotation.into());
        self
    }

    /// Whether a paused parent being deleted runs its finalize steps (default `true`); with `false`, it
    /// stays `Terminating` until the pause ends.
    #[must_use]
    pub fn finalize_while_paused(mut self, finalize: bool) -> Self {
        self.pause.finalize = finalize;
        self
    }

    /// The annotation that pauses a parent of this reconciler.
    pub fn pause_annotation_name(&self) -> String {
        self.pause.annotation::<P>()
    }
}
