//! An `async` desired-state function returns `kubewright::Result<Option<Child>>` too.
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
#[child(desired = desired_deployment)]
pub struct AppSpec {}

async fn desired_deployment(app: &App, _cx: &mut Context) -> Option<Deployment> {
    Some(support::deployment(app.name_any()))
}

fn main() {}
