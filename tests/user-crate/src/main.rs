//! An operator crate that picks the latest Kubernetes version, as kube's docs set one up.
use k8s_openapi::api::core::v1::ConfigMap;
use kube::CustomResource;
use kubewright::{Context, Reconciler, ReconcilerStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Reconciler, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.dev", version = "v1", kind = "Note", namespaced, status = "NoteStatus")]
#[child(desired = desired_config_map)]
pub struct NoteSpec {
    pub text: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, ReconcilerStatus)]
#[serde(rename_all = "camelCase")]
pub struct NoteStatus {
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub conditions: Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition>,
}

fn desired_config_map(note: &Note, _cx: &mut Context) -> kubewright::Result<Option<ConfigMap>> {
    let mut cm = ConfigMap::default();
    cm.metadata.name = note.metadata.name.clone();
    cm.data = Some([("text".to_string(), note.spec.text.clone())].into());
    Ok(Some(cm))
}

fn main() {
    let _ = Note::reconciler();
}
