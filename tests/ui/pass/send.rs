//! The controller built from a derived reconciler is `Send`: it runs inside `tokio::spawn`.

#[path = "../support/mod.rs"]
mod support;

use k8s_openapi::api::apps::v1::Deployment;
use kube::{CustomResource, ResourceExt};
use kubewright::{Context, Operator, Reconciler};
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
#[child(desired = desired_deployment)]
pub struct AppSpec {}

fn desired_deployment(app: &App, _cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    Ok(Some(support::deployment(app.name_any())))
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

fn main() {}
