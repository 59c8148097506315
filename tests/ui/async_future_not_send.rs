//! The future of an `async` step is `Send`: the controller runs it on any thread. This one holds an `Rc`
//! across an `.await`.
#![allow(unused_imports, dead_code)]

mod support;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::{CustomResource, ResourceExt};
use kubewright::{Context, Outcome, Reconciler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Reconciler, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "example.dev",
    version = "v1",
    kind = "App",
    namespaced,
    status = "support::Status"
)]
#[sync(prepare)]
#[child(desired = desired_deployment)]
pub struct AppSpec {}

async fn prepare(app: &mut App, _cx: &mut Context) -> kubewright::Result<Outcome> {
    let name = std::rc::Rc::new(app.name_any());
    tokio::task::yield_now().await;
    let _ = name;
    Ok(Outcome::Continue)
}

fn desired_deployment(app: &App, _cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    Ok(Some(support::deployment(app.name_any())))
}

fn main() {}
