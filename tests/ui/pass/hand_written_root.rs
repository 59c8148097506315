//! The derive on a hand-written root type (no `#[kube]`): `#[reconciler(root)]`, here spelled out.

#[path = "../support/mod.rs"]
mod support;

use std::borrow::Cow;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::object::HasStatus;
use kube::{Resource, ResourceExt};
use kubewright::{Context, Reconciler};
use serde::{Deserialize, Serialize};

#[derive(Reconciler, Clone, Debug, Default, Serialize, Deserialize)]
#[reconciler(root, name = "thing-controller")]
#[child(desired = desired_deployment)]
pub struct Thing {
    metadata: ObjectMeta,
    status: Option<support::Status>,
}

impl Resource for Thing {
    type DynamicType = ();
    type Scope = k8s_openapi::NamespaceResourceScope;
    fn kind(_: &()) -> Cow<'_, str> {
        "Thing".into()
    }
    fn group(_: &()) -> Cow<'_, str> {
        "example.dev".into()
    }
    fn version(_: &()) -> Cow<'_, str> {
        "v1".into()
    }
    fn plural(_: &()) -> Cow<'_, str> {
        "things".into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl HasStatus for Thing {
    type Status = support::Status;
    fn status(&self) -> Option<&support::Status> {
        self.status.as_ref()
    }
    fn status_mut(&mut self) -> &mut Option<support::Status> {
        &mut self.status
    }
}

fn desired_deployment(thing: &Thing, _cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    Ok(Some(support::deployment(thing.name_any())))
}

fn main() {
    let r: Reconciler<Thing> = Thing::reconciler();
    assert_eq!(r.name(), "thing-controller");
}
