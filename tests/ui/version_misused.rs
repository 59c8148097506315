//! Every misuse of `#[version]` in one build: no type, an empty warning, a key that does not exist, and two
//! storage versions (this kind's own and another's).
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
#[kube(
    group = "example.dev",
    version = "v2",
    kind = "App",
    namespaced,
    status = "support::Status"
)]
#[reconciler(storage)]
#[child(desired = desired_deployment)]
#[version(deprecated)]
#[version(v1::App, storage, deprecated = "", served = false)]
pub struct AppSpec {}

fn desired_deployment(app: &App, _cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    Ok(Some(support::deployment(app.name_any())))
}

fn main() {}
