//! `App::operate::<K>()` takes a kind whose reconciler needs no data; a kind declaring `data = T` is told to
//! add its reconciler (with the data) and its CRD one by one.

#[path = "support/mod.rs"]
mod support;

use k8s_openapi::api::apps::v1::Deployment;
use kube::{CustomResource, ResourceExt};
use kubewright::{Context, Reconciler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

struct Registry;

#[derive(CustomResource, Reconciler, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "example.dev",
    version = "v1",
    kind = "Site",
    namespaced,
    status = "support::Status"
)]
#[reconciler(data = Registry)]
#[child(desired = desired_deployment)]
pub struct SiteSpec {}

fn desired_deployment(site: &Site, _cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    Ok(Some(support::deployment(site.name_any())))
}

fn main() {
    let _ = kubewright::cli::App::new("site-operator").operate::<Site>();
    let _: Reconciler<Site> = Site::reconciler(Registry);
}
