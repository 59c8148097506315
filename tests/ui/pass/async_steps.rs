//! `#[sync]`, `#[finalize]` and `desired` functions may be `async fn`, beside plain ones, with no extra key;
//! `strategy = "create"` and `ready = f` on `#[child]` and `#[children]`. The controller stays `Send`.

#[path = "../support/mod.rs"]
mod support;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::{CustomResource, ResourceExt};
use kubewright::readiness::Readiness;
use kubewright::{Context, Operator, Outcome, Reconciler};
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
#[reconciler(finalizer = "example.dev/cleanup")]
#[sync(check_external)]
#[sync(prepare)]
#[child(desired = desired_deployment)]
#[child(desired = desired_secret, strategy = "create")]
#[children(desired = desired_configs, id = config_id, ready = config_ready)]
#[finalize(release)]
#[finalize(release_plain)]
#[stash(image: String)]
pub struct AppSpec {}

async fn check_external(app: &mut App, cx: &mut Context) -> kubewright::Result<Outcome> {
    tokio::task::yield_now().await;
    cx.stash_mut().store(
        &App::IMAGE,
        format!("registry.example.dev/{}", app.name_any()),
    );
    Ok(Outcome::Continue)
}

fn prepare(_app: &mut App, _cx: &mut Context) -> kubewright::Result<Outcome> {
    Ok(Outcome::Continue)
}

async fn desired_deployment(app: &App, cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    let image = cx.stash().get(&App::IMAGE)?.clone();
    tokio::task::yield_now().await;
    let _ = image;
    Ok(Some(support::deployment(app.name_any())))
}

fn desired_secret(app: &App, _cx: &mut Context) -> kubewright::Result<Option<Secret>> {
    let mut s = Secret::default();
    s.metadata.name = Some(format!("{}-credentials", app.name_any()));
    Ok(Some(s))
}

async fn desired_configs(app: &App, _cx: &mut Context) -> kubewright::Result<Vec<ConfigMap>> {
    tokio::task::yield_now().await;
    let mut c = ConfigMap::default();
    c.metadata.name = Some(app.name_any());
    Ok(vec![c])
}

fn config_id(c: &ConfigMap) -> String {
    c.name_any()
}

fn config_ready(c: &ConfigMap) -> Readiness {
    match &c.data {
        Some(_) => Readiness::Ready,
        None => Readiness::not_ready("Empty", "the ConfigMap has no data yet"),
    }
}

async fn release(_app: &mut App, _cx: &mut Context) -> kubewright::Result<Outcome> {
    tokio::task::yield_now().await;
    Ok(Outcome::Continue)
}

fn release_plain(_app: &mut App, _cx: &mut Context) -> kubewright::Result<Outcome> {
    Ok(Outcome::Continue)
}

fn assert_send<T: Send + 'static>(_: &T) {}

#[allow(dead_code)]
async fn run(client: kube::Client) {
    let reconciler: Reconciler<App> = App::reconciler();
    assert_send(&reconciler);
    let running = Operator::new(client)
        .controller(reconciler)
        .run_until(async {});
    assert_send(&running);
    let _ = tokio::spawn(running).await;
}

fn main() {
    let _: Reconciler<App> = App::reconciler();
}
