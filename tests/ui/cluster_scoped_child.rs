//! A namespaced parent cannot own a cluster-scoped child.
#![allow(unused_imports, dead_code)]

mod support;

use k8s_openapi::api::core::v1::Namespace;
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
#[child(desired = desired_namespace)]
pub struct AppSpec {}

fn desired_namespace(app: &App, _cx: &mut Context) -> kubewright::Result<Option<Namespace>> {
    let mut ns = Namespace::default();
    ns.metadata.name = Some(app.name_any());
    Ok(Some(ns))
}

fn main() {}
