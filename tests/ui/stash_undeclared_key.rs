//! `stores`/`reads` name keys declared in `#[stash]`: a typo lists the declared ones; a read nobody stores says so.
#![allow(unused_imports, dead_code)]

mod support;

use k8s_openapi::api::apps::v1::Deployment;
use kube::{CustomResource, ResourceExt};
use kubewright::{Context, Outcome, Reconciler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Reconciler, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(group = "example.dev", version = "v1", kind = "App", namespaced, status = "support::Status")]
#[sync(resolve_image, stores = [imgae])]
#[child(desired = desired_deployment, reads = [image])]
#[stash(image: String)]
pub struct AppSpec {}

fn resolve_image(_app: &mut App, cx: &mut Context) -> kubewright::Result<Outcome> {
    cx.stash_mut().store(&App::IMAGE, "nginx".into());
    Ok(Outcome::Continue)
}

fn desired_deployment(app: &App, cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    let _image = cx.stash().get(&App::IMAGE)?;
    Ok(Some(support::deployment(app.name_any())))
}

fn main() {}
