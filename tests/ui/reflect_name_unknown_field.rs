//! `reflect_name` names a field the status does not have (one error, on that name, listing the fields), and
//! another names it as a string (the error says to remove the quotes).
#![allow(unused_imports, dead_code)]

mod support;

use k8s_openapi::api::apps::v1::Deployment;
use kube::{CustomResource, ResourceExt};
use kubewright::{Context, Reconciler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Reconciler, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.dev", version = "v1", kind = "App", namespaced, status = "support::Status")]
#[child(desired = desired_deployment, reflect_name = deploymnt)]
pub struct AppSpec {
    replicas: i32,
}

#[derive(CustomResource, Reconciler, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.dev", version = "v1", kind = "Site", namespaced, status = "support::Status")]
#[child(desired = site_deployment, reflect_name = "deployment")]
pub struct SiteSpec {
    replicas: i32,
}

fn desired_deployment(app: &App, _cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    Ok(Some(support::deployment(app.name_any())))
}

fn site_deployment(site: &Site, _cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    Ok(Some(support::deployment(site.name_any())))
}

fn main() {}
