//! `#[children]` needs `id` to tell its children apart.
#![allow(unused_imports, dead_code)]

mod support;

use k8s_openapi::api::apps::v1::Deployment;
use kube::{CustomResource, ResourceExt};
use kubewright::{Context, Reconciler};
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
#[children(desired = desired_deployments)]
pub struct AppSpec {}

fn desired_deployments(app: &App, _cx: &mut Context) -> kubewright::Result<Vec<Deployment>> {
    Ok(vec![support::deployment(app.name_any())])
}

fn main() {}
