//! Two child steps of one kind would delete each other's children, also when the kind is inferred from the
//! desired functions. The derive cannot see inferred types, so for each pair of child steps it calls
//! `kubewright::__private::one_step_per_child_kind`, which compiles only when the two kinds differ. For one kind
//! twice rustc says "type annotations needed ... multiple `impl`s satisfying `(Deployment, Deployment):
//! OneStepPerChildKind<_>`" on the second attribute: read "a second step for `Deployment`" (rustc's help to
//! specify generic arguments is about the generated call: ignore it). Merge them into one `#[children(..)]`.
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
#[child(desired = desired_deployment)]
#[child(desired = desired_canary)]
pub struct AppSpec {}

fn desired_deployment(app: &App, _cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    Ok(Some(support::deployment(app.name_any())))
}

async fn desired_canary(app: &App, _cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    Ok(Some(support::deployment(format!("{}-canary", app.name_any()))))
}

fn main() {}
