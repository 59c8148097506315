//! A stash key carries its type: storing another is a compile error.
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
#[sync(prepare)]
#[child(desired = desired_deployment)]
#[stash(image: String)]
pub struct AppSpec {}

fn desired_deployment(app: &App, _cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    Ok(Some(support::deployment(app.name_any())))
}

fn prepare(_app: &mut App, cx: &mut Context) -> kubewright::Result<kubewright::Outcome> {
    cx.stash_mut().store(&App::IMAGE, 42);
    Ok(kubewright::Outcome::Continue)
}

fn main() {}
