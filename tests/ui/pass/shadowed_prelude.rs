//! The generated code names nothing through the prelude: it compiles with `Result`, `Option`, `Some`, `None`,
//! `Vec`, `Box`, `String`, `Default`, `Send`, `Duration` and `__private` shadowed. (kube's `CustomResource`
//! does not survive this, so the root type is written by hand, with every path spelled out.)
#![allow(dead_code, non_camel_case_types)]

#[path = "../support/mod.rs"]
mod support;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::ResourceExt;
use kubewright::{Context, Outcome, Reconciler};

struct Result;
struct Option;
struct Some;
struct None;
struct Vec;
struct Box;
struct String;
struct Default;
struct Send;
struct Sync;
struct Duration;
struct Ok;
struct Err;
mod __private {}
mod core {}
mod std {}

#[derive(Reconciler, Clone, Debug, serde::Serialize, serde::Deserialize)]
#[reconciler(
    root,
    concurrency = 2,
    debounce_ms = 10,
    finalizer = "example.dev/cleanup"
)]
#[sync(prepare)]
#[child(desired = desired_deployment, reflect = reflect)]
#[children(ConfigMap, desired = desired_extra, id = extra_id)]
#[finalize(prepare)]
#[stash(name: ::std::string::String)]
pub struct App {
    metadata: ObjectMeta,
    status: ::std::option::Option<support::Status>,
}

impl kube::Resource for App {
    type DynamicType = ();
    type Scope = k8s_openapi::NamespaceResourceScope;
    fn kind(_: &()) -> ::std::borrow::Cow<'_, str> {
        "App".into()
    }
    fn group(_: &()) -> ::std::borrow::Cow<'_, str> {
        "example.dev".into()
    }
    fn version(_: &()) -> ::std::borrow::Cow<'_, str> {
        "v1".into()
    }
    fn plural(_: &()) -> ::std::borrow::Cow<'_, str> {
        "apps".into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl kube::core::object::HasStatus for App {
    type Status = support::Status;
    fn status(&self) -> ::std::option::Option<&support::Status> {
        self.status.as_ref()
    }
    fn status_mut(&mut self) -> &mut ::std::option::Option<support::Status> {
        &mut self.status
    }
}

fn prepare(_app: &mut App, _cx: &mut Context) -> kubewright::Result<Outcome> {
    ::std::result::Result::Ok(Outcome::Continue)
}

fn desired_deployment(
    app: &App,
    _cx: &mut Context,
) -> kubewright::Result<::std::option::Option<Deployment>> {
    ::std::result::Result::Ok(::std::option::Option::Some(support::deployment(
        app.name_any(),
    )))
}

fn reflect(status: &mut support::Status, child: &kubewright::ChildOutcome<Deployment>) {
    status.deployment = child.child().map(|d| d.name_any());
}

fn desired_extra(_app: &App, _cx: &mut Context) -> kubewright::Result<::std::vec::Vec<ConfigMap>> {
    ::std::result::Result::Ok(::std::vec::Vec::new())
}

fn extra_id(d: &ConfigMap) -> ::std::string::String {
    d.name_any()
}

fn main() {
    let _: Reconciler<App> = App::reconciler();
    let _ = App::NAME;
}
