//! `#[admission]` generates `App::webhooks()`, which a table test calls directly.

#[path = "../support/mod.rs"]
mod support;

use k8s_openapi::api::apps::v1::Deployment;
use kube::{CustomResource, ResourceExt};
use kubewright::admission::{Request, Verdict};
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
#[child(desired = desired_deployment)]
#[admission(validate = check, default = fill, deletes, failure_policy = "Ignore", timeout_seconds = 5)]
pub struct AppSpec {
    image: String,
}

fn desired_deployment(app: &App, _cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    Ok(Some(support::deployment(app.name_any())))
}

fn check(r: &Request<'_, App>) -> Verdict {
    match r.object {
        Some(app) if app.spec.image.is_empty() => Verdict::deny("image is required"),
        _ => Verdict::allow(),
    }
}

fn fill(app: &mut App) {
    if app.spec.image.is_empty() {
        app.spec.image = "nginx:1.27".into();
    }
}

fn main() {
    // `App::operate` serves the declared webhooks with the reconciler.
    assert!(<App as kubewright::Declared>::declared_webhooks().is_some());
    let hooks = App::webhooks();
    let mut app = App::new(
        "a",
        AppSpec {
            image: String::new(),
        },
    );
    let request = Request {
        operation: kube::core::admission::Operation::Create,
        object: Some(&app),
        old_object: None,
        dry_run: false,
    };
    assert!(!hooks.check(&request).allowed);
    hooks.fill(&mut app);
    assert_eq!(app.spec.image, "nginx:1.27");
}
