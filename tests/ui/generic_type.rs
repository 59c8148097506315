//! Generic types are not supported.
#![allow(unused_imports, dead_code)]

mod support;

use k8s_openapi::api::apps::v1::Deployment;
use kube::ResourceExt;
use kubewright::{Context, Reconciler};

#[derive(Reconciler)]
#[reconciler(root)]
#[child(desired = desired_deployment)]
pub struct App<T> {
    value: T,
}

fn desired_deployment(app: &App<u8>, _cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    Ok(Some(support::deployment(app.value.to_string())))
}

fn main() {}
