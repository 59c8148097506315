//! The runtime's own table tests: one pass over given state, on the production code path, with every write
//! compared against what the behaviour requires (`kubewright::testing::table`).

mod child_set;
mod children;
mod finalizer;
mod flow;
mod harness;
mod history;
mod owned;
mod ownership;
mod readiness;
mod status;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::runtime::reflector::ObjectRef;
use kube::{CustomResource, CustomResourceExt, ResourceExt};
use kubewright::testing::table::ReconcilerTestCase;
use kubewright::{
    ChildOutcome, ChildReconciler, Context, Error, Reconciler, ReconcilerStatus, WriteStrategy,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The parent kind of these tests: a note whose text goes into a ConfigMap (or several, one per item).
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "example.dev",
    version = "v1",
    kind = "Note",
    namespaced,
    status = "NoteStatus"
)]
pub struct NoteSpec {
    pub text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct NoteStatus {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub conditions: Vec<Condition>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_map: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
}

impl ReconcilerStatus for NoteStatus {
    fn conditions(&self) -> &[Condition] {
        &self.conditions
    }
    fn conditions_mut(&mut self) -> &mut Vec<Condition> {
        &mut self.conditions
    }
    fn observed_generation(&self) -> Option<i64> {
        self.observed_generation
    }
    fn set_observed_generation(&mut self, g: Option<i64>) {
        self.observed_generation = g;
    }
}

pub const NS: &str = "default";
pub const NAME: &str = "hello";
pub const UID: &str = "6d3c2a8e-5b1f-4c2e-9a47-000000000001";
/// The harness's default time, as conditions carry it.
pub const T0: &str = "2025-01-01T00:00:00Z";

/// The parent as the cluster holds it (no status yet).
pub fn note(text: &str) -> Value {
    json!({
        "apiVersion": "example.dev/v1",
        "kind": "Note",
        "metadata": {"name": NAME, "namespace": NS, "uid": UID, "generation": 1},
        "spec": {"text": text},
    })
}

/// The parent with a status.
pub fn note_with(text: &str, status: Value) -> Value {
    let mut n = note(text);
    n["status"] = status;
    n
}

/// A condition as the runtime writes it at `T0` for generation 1.
pub fn condition(type_: &str, status: &str, reason: &str, message: &str) -> Value {
    json!({
        "type": type_,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": T0,
        "observedGeneration": 1,
    })
}

/// The status of a parent whose ConfigMap child is in place.
pub fn converged() -> Value {
    json!({
        "observedGeneration": 1,
        "conditions": [
            condition("ConfigMapReady", "True", "Reconciled", ""),
            condition("Ready", "True", "Ready", ""),
        ],
        "configMap": NAME,
    })
}

/// The controller owner reference the runtime sets on children.
pub fn owner() -> Value {
    json!({
        "apiVersion": "example.dev/v1",
        "kind": "Note",
        "name": NAME,
        "uid": UID,
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

/// A ConfigMap controlled by the parent, as the runtime applied it (with the desired-state hash).
pub fn child(name: &str, text: &str) -> Value {
    stamped(json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": NS, "ownerReferences": [owner()]},
        "data": {"text": text},
    }))
}

/// A child with what the runtime stamps: the annotation holding the hash of the desired object (no namespace,
/// owner or owner label) and, for a child the parent owns, the owner label.
pub fn stamped(mut child: Value) -> Value {
    let mut desired = child.clone();
    let meta = desired["metadata"].as_object_mut().expect("metadata");
    meta.remove("namespace");
    let owned = meta.remove("ownerReferences").is_some();
    if let Some(labels) = meta.get_mut("labels").and_then(Value::as_object_mut) {
        labels.remove(kubewright::OWNER_LABEL);
        if labels.is_empty() {
            meta.remove("labels");
        }
    }
    let desired: ConfigMap = serde_json::from_value(desired).expect("a ConfigMap");
    let hash = kubewright::reconcilers::desired_hash(&desired).expect("hash");
    child["metadata"]["annotations"] = json!({ kubewright::reconcilers::DESIRED_HASH: hash });
    if owned {
        child["metadata"]["labels"][kubewright::OWNER_LABEL] = json!(UID);
    }
    child
}

/// The desired ConfigMap: named after the note, holding its text; none for an empty text; an invalid spec
/// for the text `invalid`.
pub fn desired_cm(note: &Note, _cx: &mut Context) -> kubewright::Result<Option<ConfigMap>> {
    match note.spec.text.as_str() {
        "invalid" => Err(Error::invalid_spec(
            "InvalidText",
            "text must not be \"invalid\"",
        )),
        "" => Ok(None),
        text => {
            let mut cm = ConfigMap::default();
            cm.metadata.name = Some(note.name_any());
            cm.data = Some([("text".to_string(), text.to_string())].into());
            Ok(Some(cm))
        }
    }
}

/// Records the child's name; a failed pass says nothing new about the child, so the name stays.
pub fn reflect_cm(note: &mut Note, outcome: &ChildOutcome<ConfigMap>) {
    if matches!(outcome, ChildOutcome::Failed(_)) {
        return;
    }
    let status = note.status.get_or_insert_with(Default::default);
    status.config_map = outcome.child().map(|c| c.name_any());
}

/// A reconciler with one ConfigMap child written with `strategy`.
pub fn reconciler_with(strategy: WriteStrategy) -> Reconciler<Note> {
    Reconciler::new("notes").step(
        ChildReconciler::new("configmap", desired_cm)
            .reflect(reflect_cm)
            .strategy(strategy),
    )
}

/// A reconciler with one ConfigMap child written by server-side apply.
pub fn reconciler() -> Reconciler<Note> {
    reconciler_with(WriteStrategy::default())
}

/// A case over the note `default/hello` with the Note CRD installed.
pub fn case(name: &str) -> ReconcilerTestCase<Note> {
    ReconcilerTestCase::new(name, ObjectRef::new(NAME).within(NS)).crd(Note::crd())
}

pub fn parent_ref() -> ObjectRef<Note> {
    ObjectRef::new(NAME).within(NS)
}
