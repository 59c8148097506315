//! The `WebApp` operator written with `#[derive(Reconciler)]`: the same operator as [`crate::webapp`] (same CRD,
//! same children, same status, same behaviour), declared with attributes instead of builder calls.
//!
//! The binary (`cargo run --example webapp`) is [`app`], with the samples of `webapp-by-hand` on the embedded
//! cluster ([`crate::webapp::cli`]); `tests/derive/webapp.rs` runs both through one scenario and compares.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Service};
use kubewright::prelude::*;

use crate::webapp::{
    CONFIG_HASH_ANNOTATION, DEFAULT_PORT, IMAGE_NEEDS_TAG, INSTANCE_LABEL, NAME_LABEL,
    NOTHING_WILL_RUN, config_hash, image_is_pinned, port,
};

/// The desired state of a web application.
#[derive(
    CustomResource, Reconciler, Clone, Debug, PartialEq, Serialize, Deserialize, KubeSchema,
)]
#[kube(
    group = "example.dev",
    version = "v1",
    kind = "WebApp",
    namespaced,
    status = "WebAppStatus",
    shortname = "wa",
    printcolumn = r#"{"name":"Image","type":"string","jsonPath":".spec.image"}"#,
    printcolumn = r#"{"name":"Replicas","type":"integer","jsonPath":".spec.replicas"}"#,
    printcolumn = r#"{"name":"Available","type":"integer","jsonPath":".status.availableReplicas"}"#,
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[watches(ConfigMap, by = config_map)]
#[child(desired = desired_deployment, reflect = reflect_deployment, reflect_name = deployment)]
#[child(desired = desired_service, reflect_name = service)]
#[admission(validate = validate_webapp, default = default_webapp)]
#[x_kube(validation = Rule::new("self.replicas <= 50").message("replicas must be at most 50"))]
#[serde(rename_all = "camelCase")]
pub struct WebAppSpec {
    /// The container image to run.
    pub image: String,
    /// How many pods to run.
    #[serde(default = "default_replicas")]
    #[schemars(range(min = 0))]
    pub replicas: i32,
    /// The port the container listens on, and the Service's port: 8080 when absent (the defaulting webhook sets
    /// it; the operator assumes it for WebApps stored while no webhook ran).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: Option<i32>,
    /// The name of a ConfigMap in the same namespace whose data the pods use; a change to it rolls the pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<String>,
}

fn default_replicas() -> i32 {
    1
}

/// What the operator observed of a WebApp.
#[derive(
    Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, ReconcilerStatus,
)]
#[serde(rename_all = "camelCase", default)]
pub struct WebAppStatus {
    /// The generation of the spec this status describes.
    pub observed_generation: Option<i64>,
    /// `Ready`, rolled up from `DeploymentReady` and `ServiceReady`.
    pub conditions: Vec<Condition>,
    /// The name of the Deployment.
    pub deployment: Option<String>,
    /// The name of the Service.
    pub service: Option<String>,
    /// Pods available, as reported by the Deployment.
    pub available_replicas: Option<i32>,
    /// The hash of the ConfigMap's data the pods run with.
    pub config_hash: Option<String>,
}

/// The labels of an app's children and pods; the Deployment and the Service select on them.
pub fn labels(app: &WebApp) -> BTreeMap<String, String> {
    object!({ [NAME_LABEL]: "webapp", [INSTANCE_LABEL]: app.name_any() })
}

/// The Deployment of an app: `replicas` pods running `image`, exposing `port`, with the ConfigMap hash on the
/// pod template when a ConfigMap is named.
pub fn desired_deployment(app: &WebApp, cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    // A ConfigMap the app names but that does not exist is an invalid spec (`ConfigMapNotFound`).
    let config = cx.referenced::<ConfigMap>(app, app.spec.config_map.as_deref())?;
    let annotations = config.map(|cm| object!({ [CONFIG_HASH_ANNOTATION]: config_hash(&cm) }));
    Ok(Some(object!(Deployment {
        metadata: { name: app.name_any(), labels: labels(app) },
        spec: {
            replicas: app.spec.replicas,
            selector: { match_labels: labels(app) },
            template: {
                metadata: { labels: labels(app), annotations },
                spec: {
                    containers: [{
                        name: "app",
                        image: &app.spec.image,
                        ports: [{ name: "http", container_port: port(app.spec.port) }],
                    }],
                },
            },
        },
    })))
}

/// The Service of an app: `port`, forwarded to the pods' `port`, selecting the app's pods.
pub fn desired_service(app: &WebApp, _cx: &mut Context) -> kubewright::Result<Option<Service>> {
    Ok(Some(object!(Service {
        metadata: { name: app.name_any(), labels: labels(app) },
        spec: {
            selector: labels(app),
            ports: [{ name: "http", port: port(app.spec.port), target_port: port(app.spec.port) }],
        },
    })))
}

/// Reports the Deployment's available replicas and the ConfigMap hash its pods run with (its name goes to
/// `status.deployment` by `reflect_name`).
pub fn reflect_deployment(status: &mut WebAppStatus, outcome: &ChildOutcome<Deployment>) {
    outcome.reflect_into(&mut status.available_replicas, |d| {
        d.status.as_ref()?.available_replicas
    });
    outcome.reflect_into(&mut status.config_hash, |d| {
        let template = &d.spec.as_ref()?.template.metadata;
        template.annotation(CONFIG_HASH_ANNOTATION).cloned()
    });
}

/// The validating webhook: an image needs a tag or a digest; 0 replicas are allowed with a warning.
pub fn validate_webapp(request: &Request<'_, WebApp>) -> Verdict {
    match request.object {
        Some(app) if !image_is_pinned(&app.spec.image) => Verdict::deny(IMAGE_NEEDS_TAG),
        Some(app) if app.spec.replicas == 0 => Verdict::allow().warn(NOTHING_WILL_RUN),
        _ => Verdict::allow(),
    }
}

/// The defaulting webhook: `spec.port` is 8080 when absent.
pub fn default_webapp(app: &mut WebApp) {
    app.spec.port.get_or_insert(DEFAULT_PORT);
}

/// The operator's command line ([`kubewright::cli`]): `cargo run --example webapp`.
pub fn app() -> App {
    App::new("webapp-operator")
        .namespace("webapp-system")
        .image("example.dev/webapp-operator:latest")
        .operate::<WebApp>()
}
