//! `by` cannot infer the watched kind: the type comes first.
#![allow(unused_imports, dead_code)]

mod support;

use std::sync::Arc;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::runtime::reflector::ObjectRef;
use kube::{CustomResource, ResourceExt};
use kubewright::{Context, Reconciler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Reconciler, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.dev", version = "v1", kind = "App", namespaced, status = "support::Status")]
#[watches(by = config_map)]
#[child(desired = desired_deployment)]
pub struct AppSpec {
    config_map: Option<String>,
    replicas: i32,
}

fn desired_deployment(app: &App, _cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    Ok(Some(support::deployment(app.name_any())))
}

fn apps_for_configmap(_cm: Arc<ConfigMap>) -> Vec<ObjectRef<App>> {
    Vec::new()
}

fn main() {}
