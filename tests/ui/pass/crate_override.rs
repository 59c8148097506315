//! `#[reconciler(crate = "..")]`: the runtime reached through another path (a re-export), with no crate
//! named `operator` used by the generated code.

#[path = "../support/mod.rs"]
mod support;

mod framework {
    pub use kubewright::*;
}

use framework::{Context, Reconciler};
use k8s_openapi::api::apps::v1::Deployment;
use kube::{CustomResource, ResourceExt};
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
#[reconciler(crate = "crate::framework")]
#[child(desired = desired_deployment)]
#[stash(image: String)]
pub struct AppSpec {
    pub image: String,
}

fn desired_deployment(app: &App, _cx: &mut Context) -> framework::Result<Option<Deployment>> {
    Ok(Some(support::deployment(app.name_any())))
}

fn main() {
    let r: framework::Reconciler<App> = App::reconciler();
    assert_eq!(r.name(), "app-controller");
    let _: framework::StashKey<String> = App::IMAGE;
}
