//! A misspelt key of `#[reconciler(..)]` is one error: the other keys still take effect (`data` still makes
//! `reconciler()` take its argument), so the code calling it adds no error of its own.
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
#[reconciler(data = Registry, concurency = 2)]
#[child(desired = desired_deployment)]
pub struct AppSpec {}

struct Registry;

fn desired_deployment(app: &App, _cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    Ok(Some(support::deployment(app.name_any())))
}

fn main() {
    let _: Reconciler<App> = App::reconciler(Registry);
}
