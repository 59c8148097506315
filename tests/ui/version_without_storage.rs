//! Several versions and none of them stored; `storage` on a kind with one version.
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
#[child(desired = desired_deployment)]
#[version(v1::App, deprecated)]
pub struct AppSpec {}

#[derive(CustomResource, Reconciler, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.dev", version = "v1", kind = "Other", namespaced, status = "support::Status")]
#[reconciler(storage)]
#[child(desired = desired_other)]
pub struct OtherSpec {}

fn desired_deployment(app: &App, _cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    Ok(Some(support::deployment(app.name_any())))
}

fn desired_other(o: &Other, _cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    Ok(Some(support::deployment(o.name_any())))
}

fn main() {}
