//! The generated code is warning-free under strict lints, including missing docs and unreachable pub items. Clippy
//! checks this file too (`cargo clippy --all-targets`: it is a test target of the `derive-ui` crate).
#![deny(warnings, missing_docs, unused_qualifications, unused_results)]
#![deny(clippy::all, clippy::pedantic)]
//! A crate with strict lints.

#[path = "../support/mod.rs"]
mod support;

use k8s_openapi::api::apps::v1::Deployment;
use kube::{CustomResource, ResourceExt};
use kubewright::{Context, Outcome, Reconciler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The spec.
#[derive(CustomResource, Reconciler, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "example.dev",
    version = "v1",
    kind = "App",
    namespaced,
    status = "support::Status"
)]
#[reconciler(
    name = "app",
    finalizer = "example.dev/cleanup",
    field_manager = "app-manager"
)]
#[sync(prepare)]
#[child(Deployment, desired = desired_deployment, force = false, generate_name, condition = "Deployed")]
#[finalize(cleanup)]
#[stash(replicas: i32)]
pub struct AppSpec {
    /// Replicas.
    pub replicas: i32,
}

// The steps' signatures are the derive's contract: a step that cannot fail still returns a `Result`.
#[allow(clippy::unnecessary_wraps)]
fn prepare(app: &mut App, cx: &mut Context) -> kubewright::Result<Outcome> {
    cx.stash_mut().store(&App::REPLICAS, app.spec.replicas);
    Ok(Outcome::Continue)
}

#[allow(clippy::unnecessary_wraps)]
fn desired_deployment(app: &App, _cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    Ok(Some(support::deployment(app.name_any())))
}

#[allow(clippy::unnecessary_wraps)]
fn cleanup(_app: &mut App, _cx: &mut Context) -> kubewright::Result<Outcome> {
    Ok(Outcome::Halt)
}

fn main() {
    let reconciler: Reconciler<App> = App::reconciler();
    assert_eq!(reconciler.name(), "app");
}
