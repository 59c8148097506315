//! `#[reconciler(data = T)]`: `reconciler(data)` takes the author's data, which steps read with `cx.data()`, or
//! `None` (a binary that only prints manifests).

#[path = "../support/mod.rs"]
mod support;

use k8s_openapi::api::apps::v1::Deployment;
use kube::{CustomResource, ResourceExt};
use kubewright::{Context, Reconciler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

struct Registry {
    prefix: String,
}

#[derive(CustomResource, Reconciler, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "example.dev",
    version = "v1",
    kind = "App",
    namespaced,
    status = "support::Status"
)]
#[reconciler(data = Registry)]
#[child(desired = desired_deployment)]
pub struct AppSpec {}

fn desired_deployment(app: &App, cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    let prefix = cx
        .data::<Registry>()
        .map(|r| r.prefix.clone())
        .unwrap_or_default();
    Ok(Some(support::deployment(format!(
        "{prefix}{}",
        app.name_any()
    ))))
}

fn main() {
    let _: Reconciler<App> = App::reconciler(Registry {
        prefix: "r-".into(),
    });
    // Manifests need the wiring, not the data.
    let _: Reconciler<App> = App::reconciler(None);
}
