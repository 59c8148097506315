//! Every error of one attribute is reported at once: a misspelt key does not hide the missing `id`.
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
#[children(desired = desired_deployments, condtion = "DeploymentsReady")]
pub struct AppSpec {}

fn desired_deployments(app: &App, _cx: &mut Context) -> kubewright::Result<Vec<Deployment>> {
    Ok(vec![support::deployment(app.name_any())])
}

fn main() {}
