//! `force` is about server-side apply; a create-only child is never applied.
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
#[child(Secret, desired = desired_secret, strategy = "create", force = false)]
pub struct AppSpec {}

fn desired_secret(app: &App, _cx: &mut Context) -> kubewright::Result<Option<Secret>> {
    let mut s = Secret::default();
    s.metadata.name = Some(app.name_any());
    Ok(Some(s))
}

fn main() {}
