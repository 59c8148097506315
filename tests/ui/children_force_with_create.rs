//! `force` is about server-side apply; a child set that creates once never applies.
#![allow(unused_imports, dead_code)]

mod support;

use k8s_openapi::api::batch::v1::Job;
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
#[children(Job, desired = desired_jobs, id = job_id, strategy = "create", force = true)]
pub struct AppSpec {}

fn desired_jobs(_app: &App, _cx: &mut Context) -> kubewright::Result<Vec<Job>> {
    Ok(Vec::new())
}

fn job_id(job: &Job) -> String {
    job.name_any()
}

fn main() {}
