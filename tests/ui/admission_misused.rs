//! Every misuse of `#[admission]` in one build: a typo, no function, `deletes` without a validator, a policy
//! the API server does not know, a timeout out of its bounds.
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
#[child(desired = desired_deployment)]
#[admission(validat = check)]
#[admission(deletes)]
#[admission(validate = check, failure_policy = "Never", timeout_seconds = 60)]
pub struct AppSpec {}

fn desired_deployment(app: &App, _cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    Ok(Some(support::deployment(app.name_any())))
}

fn check(_: &kubewright::admission::Request<'_, App>) -> kubewright::admission::Verdict {
    kubewright::admission::Verdict::allow()
}

fn main() {}
