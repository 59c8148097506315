//! The design's WebApp, with every attribute: it compiles, its wiring follows the attributes, and the stash
//! key is typed.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Secret, Service};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::runtime::reflector::ObjectRef;
use kube::{CustomResource, ResourceExt};
use kubewright::{ChildOutcome, Context, Outcome, Reconciler, ReconcilerStatus, StashKey};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Reconciler, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "example.dev",
    version = "v1",
    kind = "WebApp",
    namespaced,
    status = "WebAppStatus"
)]
#[reconciler(finalizer = "example.dev/cleanup", concurrency = 4, debounce_ms = 100)]
#[sync(resolve_image, stores = [image, port])]
#[child(desired = desired_deployment, reflect = reflect_deployment, reads = [image])]
#[child(Service, desired = desired_service, strategy = "update", field_manager = "webapp-svc")]
#[children(Secret, desired = desired_secrets, id = secret_id, reflect = reflect_secrets)]
#[owns(ConfigMap)]
#[watches(ConfigMap, map = webapps_for_configmap)]
#[finalize(release_dns)]
#[stash(image: String, port: i32)]
pub struct WebAppSpec {
    image: String,
    replicas: i32,
    config_map: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct WebAppStatus {
    observed_generation: Option<i64>,
    #[serde(default)]
    conditions: Vec<Condition>,
    deployment: Option<String>,
    secrets: usize,
}

impl ReconcilerStatus for WebAppStatus {
    fn conditions(&self) -> &[Condition] {
        &self.conditions
    }
    fn conditions_mut(&mut self) -> &mut Vec<Condition> {
        &mut self.conditions
    }
    fn observed_generation(&self) -> Option<i64> {
        self.observed_generation
    }
    fn set_observed_generation(&mut self, g: Option<i64>) {
        self.observed_generation = g;
    }
}

fn resolve_image(app: &mut WebApp, cx: &mut Context) -> kubewright::Result<Outcome> {
    cx.stash_mut().store(&WebApp::IMAGE, app.spec.image.clone());
    cx.stash_mut().store(&WebApp::PORT, 8080);
    Ok(Outcome::Continue)
}

fn desired_deployment(app: &WebApp, cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    let _image: &String = cx.stash().get(&WebApp::IMAGE)?;
    let mut d = Deployment::default();
    d.metadata.name = Some(app.name_any());
    Ok(Some(d))
}

fn reflect_deployment(status: &mut WebAppStatus, child: &ChildOutcome<Deployment>) {
    status.deployment = child.child().map(|d| d.name_any());
}

fn desired_service(app: &WebApp, _cx: &mut Context) -> kubewright::Result<Option<Service>> {
    let mut s = Service::default();
    s.metadata.name = Some(app.name_any());
    Ok(Some(s))
}

fn desired_secrets(_app: &WebApp, _cx: &mut Context) -> kubewright::Result<Vec<Secret>> {
    Ok(Vec::new())
}

fn secret_id(secret: &Secret) -> String {
    secret.name_any()
}

fn reflect_secrets(status: &mut WebAppStatus, secrets: &BTreeMap<String, ChildOutcome<Secret>>) {
    status.secrets = secrets.len();
}

fn webapps_for_configmap(cm: Arc<ConfigMap>) -> Vec<ObjectRef<WebApp>> {
    vec![ObjectRef::new(&cm.name_any()).within(&cm.namespace().unwrap_or_default())]
}

fn release_dns(_app: &mut WebApp, _cx: &mut Context) -> kubewright::Result<Outcome> {
    Ok(Outcome::Continue)
}

fn main() {
    let reconciler: Reconciler<WebApp> = WebApp::reconciler();
    assert_eq!(reconciler.name(), "webapp-controller");
    // What `App::operate` runs: the same reconciler, and no webhooks (none declared).
    assert_eq!(
        <WebApp as kubewright::Declared>::declared_reconciler().name(),
        "webapp-controller"
    );
    assert!(<WebApp as kubewright::Declared>::declared_webhooks().is_none());
    let kinds: Vec<String> = reconciler
        .wiring()
        .kinds()
        .iter()
        .map(|k| k.kind.clone())
        .collect();
    assert_eq!(kinds, ["Deployment", "Service", "Secret", "ConfigMap"]);
    let _: StashKey<String> = WebApp::IMAGE;
    let _: StashKey<i32> = WebApp::PORT;
}
