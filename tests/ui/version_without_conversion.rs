//! A version with no conversion to the hub: the error points at the version's type in `#[version(..)]`.
#![allow(unused_imports, dead_code)]

mod support;

use k8s_openapi::api::apps::v1::Deployment;
use kube::{CustomResource, ResourceExt};
use kubewright::{Context, Reconciler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

mod v1 {
    use super::*;
    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[kube(group = "example.dev", version = "v1", kind = "App", namespaced)]
    pub struct AppSpec {}
}

#[derive(CustomResource, Reconciler, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.dev", version = "v2", kind = "App", namespaced, status = "support::Status")]
#[reconciler(storage)]
#[child(desired = desired_deployment)]
#[version(v1::App)]
pub struct AppSpec {}

fn desired_deployment(app: &App, _cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    Ok(Some(support::deployment(app.name_any())))
}

fn main() {}
