//! Every misuse of `#[reconciler(parent = ..)]` in one build: beside `#[kube(..)]` (whose kind is the parent),
//! with `root`, a child reflected into a status that is not written, and admission webhooks.
#![allow(unused_imports, dead_code)]

mod support;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use kube::{CustomResource, ResourceExt};
use kubewright::{ChildOutcome, Context, Foreign, Reconciler};
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
#[reconciler(parent = Service)]
#[child(desired = desired_deployment)]
pub struct AppSpec {}

fn desired_deployment(app: &App, _cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    Ok(Some(support::deployment(app.name_any())))
}

#[derive(Reconciler)]
#[reconciler(parent = Service, root)]
#[child(desired = deployment_for_service, reflect = reflect_deployment)]
#[admission(validate = check)]
pub struct Exposed;

fn deployment_for_service(
    svc: &Foreign<Service>,
    _cx: &mut Context,
) -> kubewright::Result<Option<Deployment>> {
    Ok(Some(support::deployment(svc.name_any())))
}

fn reflect_deployment(_: &mut kubewright::foreign::Unwritten, _: &ChildOutcome<Deployment>) {}

fn check(_: &Service) -> Result<(), String> {
    Ok(())
}

fn main() {}
