//! A `ready` function takes the child and returns `kubewright::readiness::Readiness`.
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
#[child(desired = desired_config, ready = config_ready)]
pub struct AppSpec {}

fn desired_config(app: &App, _cx: &mut Context) -> kubewright::Result<Option<ConfigMap>> {
    let mut c = ConfigMap::default();
    c.metadata.name = Some(app.name_any());
    Ok(Some(c))
}

fn config_ready(config: &ConfigMap) -> bool {
    config.data.is_some()
}

fn main() {}
