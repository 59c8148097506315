//! `#[watches(K, by = field)]` for a field naming one object, an optional one or a list; a mapper that reads
//! the caches.
use std::sync::Arc;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::runtime::reflector::ObjectRef;
use kube::{CustomResource, ResourceExt};
use kubewright::{Caches, Context, Reconciler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[path = "../support/mod.rs"]
mod support;

#[derive(CustomResource, Reconciler, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "example.dev",
    version = "v1",
    kind = "App",
    namespaced,
    status = "support::Status"
)]
#[watches(ConfigMap, by = config_map)]
#[watches(Secret, by = secrets)]
#[watches(Deployment, map = apps_for_deployment)]
#[child(desired = desired_deployment)]
pub struct AppSpec {
    config_map: Option<String>,
    secrets: Vec<String>,
}

fn desired_deployment(app: &App, _cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    Ok(Some(support::deployment(app.name_any())))
}

fn apps_for_deployment(d: Arc<Deployment>, caches: &Caches) -> Vec<ObjectRef<App>> {
    let apps = caches.ensure::<App>();
    apps.get(d.namespace().as_deref(), &d.name_any())
        .map(|a| ObjectRef::from_obj(a.as_ref()))
        .into_iter()
        .collect()
}

fn main() {
    let _ = App::reconciler();
}
