//! The `WebApp` operator written with `#[derive(Reconciler)]`: the same operator as [`crate::webapp`] (same CRD,
//! same children, same status, same behaviour), declared with attributes instead of builder calls.
//!
//! The binary (`cargo run --example webapp`) is [`app`], with the samples of `webapp-by-hand` on the embedded
//! cluster ([`crate::webapp::cli`]); `tests/derive/webapp.rs` runs both through one scenario and compares.
//!
//! The kind has two versions, declared on the hub: `#[reconciler(storage)]` stores `v2` (this [`WebApp`]), and
//! `#[version(crate::webapp::v1::WebApp, deprecated = "..")]` serves `v1`, converted with the `TryFrom`/`From`
//! impls below (the mapping is in [`crate::webapp`]); the derive writes `WebApp::versions()`, which
//! [`App::operate`] installs with the conversion webhook.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, ContainerPort, Service, ServicePort};
use kubewright::prelude::*;

use crate::webapp::{
    CONFIG_HASH_ANNOTATION, DEFAULT_PORT, IMAGE_NEEDS_TAG, INSTANCE_LABEL, NAME_LABEL,
    NOTHING_WILL_RUN, Port, Scale, config_hash, image_is_pinned, ports, strategy, v1,
};

/// The desired state of a web application (`example.dev/v2`, the hub and the storage version).
#[derive(
    CustomResource, Reconciler, Clone, Debug, PartialEq, Serialize, Deserialize, KubeSchema,
)]
#[kube(
    group = "example.dev",
    version = "v2",
    kind = "WebApp",
    namespaced,
    status = "WebAppStatus",
    shortname = "wa",
    printcolumn = r#"{"name":"Image","type":"string","jsonPath":".spec.image"}"#,
    printcolumn = r#"{"name":"Replicas","type":"integer","jsonPath":".spec.scale.replicas"}"#,
    printcolumn = r#"{"name":"Available","type":"integer","jsonPath":".status.availableReplicas"}"#,
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[reconciler(storage)]
#[version(
    crate::webapp::v1::WebApp,
    deprecated = "example.dev/v1 WebApp is deprecated; use example.dev/v2"
)]
#[watches(ConfigMap, by = config_map)]
#[child(desired = desired_deployment, reflect = reflect_deployment, reflect_name = deployment)]
#[child(desired = desired_service, reflect_name = service)]
#[admission(validate = validate_webapp, default = default_webapp)]
#[x_kube(validation = Rule::new("self.scale.replicas <= 50").message("replicas must be at most 50"))]
#[serde(rename_all = "camelCase")]
pub struct WebAppSpec {
    /// The container image to run.
    pub image: String,
    /// How many pods to run, and how many more a rollout may add.
    #[serde(default)]
    pub scale: Scale,
    /// The ports the container listens on, each also a port of the Service: `http` 8080 when empty (the
    /// defaulting webhook sets it; the operator assumes it for WebApps stored while no webhook ran).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ports: Vec<Port>,
    /// The name of a ConfigMap in the same namespace whose data the pods use; a change to it rolls the pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<String>,
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

/// The Deployment of an app: `scale.replicas` pods running `image`, exposing `ports`, rolled out with
/// `scale.maxSurge`, with the ConfigMap hash on the pod template when a ConfigMap is named.
pub fn desired_deployment(
    app: &WebApp,
    cx: &mut Context,
) -> kubewright::Result<Option<Deployment>> {
    // A ConfigMap the app names but that does not exist is an invalid spec (`ConfigMapNotFound`).
    let config = cx.referenced::<ConfigMap>(app, app.spec.config_map.as_deref())?;
    let annotations = config.map(|cm| object!({ [CONFIG_HASH_ANNOTATION]: config_hash(&cm) }));
    Ok(Some(object!(Deployment {
        metadata: { name: app.name_any(), labels: labels(app) },
        spec: {
            replicas: app.spec.scale.replicas,
            strategy: strategy(&app.spec.scale),
            selector: { match_labels: labels(app) },
            template: {
                metadata: { labels: labels(app), annotations },
                spec: {
                    containers: [{
                        name: "app",
                        image: &app.spec.image,
                        ports: ports(&app.spec.ports)
                            .into_iter()
                            .map(|p| object!(ContainerPort { name: p.name, container_port: p.port }))
                            .collect::<Vec<_>>(),
                    }],
                },
            },
        },
    })))
}

/// The Service of an app: each of `ports`, forwarded to the same port of the pods, selecting the app's pods.
pub fn desired_service(app: &WebApp, _cx: &mut Context) -> kubewright::Result<Option<Service>> {
    Ok(Some(object!(Service {
        metadata: { name: app.name_any(), labels: labels(app) },
        spec: {
            selector: labels(app),
            ports: ports(&app.spec.ports)
                .into_iter()
                .map(|p| object!(ServicePort { name: p.name, port: p.port, target_port: p.port }))
                .collect::<Vec<_>>(),
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
        Some(app) if app.spec.scale.replicas == 0 => Verdict::allow().warn(NOTHING_WILL_RUN),
        _ => Verdict::allow(),
    }
}

/// The defaulting webhook: `spec.ports` is `http` 8080 when empty.
pub fn default_webapp(app: &mut WebApp) {
    if app.spec.ports.is_empty() {
        app.spec.ports = vec![Port::http(DEFAULT_PORT)];
    }
}

impl TryFrom<v1::WebApp> for WebApp {
    type Error = v1::ConversionError;

    fn try_from(old: v1::WebApp) -> Result<Self, v1::ConversionError> {
        let mut metadata = old.metadata;
        let (scale, ports) = v1::to_v2(old.spec.replicas, old.spec.port, &mut metadata)?;
        Ok(WebApp {
            metadata,
            spec: WebAppSpec {
                image: old.spec.image,
                scale,
                ports,
                config_map: old.spec.config_map,
            },
            status: old.status.map(Into::into),
        })
    }
}

impl From<WebApp> for v1::WebApp {
    fn from(new: WebApp) -> Self {
        let mut metadata = new.metadata;
        let (replicas, port) = v1::to_v1(new.spec.scale, new.spec.ports, &mut metadata);
        v1::WebApp {
            metadata,
            spec: v1::WebAppSpec {
                image: new.spec.image,
                replicas,
                port,
                config_map: new.spec.config_map,
            },
            status: new.status.map(Into::into),
        }
    }
}

/// `v1`'s status ([`crate::webapp::WebAppStatus`]) has the same fields.
impl From<crate::webapp::WebAppStatus> for WebAppStatus {
    fn from(s: crate::webapp::WebAppStatus) -> Self {
        WebAppStatus {
            observed_generation: s.observed_generation,
            conditions: s.conditions,
            deployment: s.deployment,
            service: s.service,
            available_replicas: s.available_replicas,
            config_hash: s.config_hash,
        }
    }
}

impl From<WebAppStatus> for crate::webapp::WebAppStatus {
    fn from(s: WebAppStatus) -> Self {
        crate::webapp::WebAppStatus {
            observed_generation: s.observed_generation,
            conditions: s.conditions,
            deployment: s.deployment,
            service: s.service,
            available_replicas: s.available_replicas,
            config_hash: s.config_hash,
        }
    }
}

/// The operator's command line ([`kubewright::cli`]): `cargo run --example webapp`.
pub fn app() -> App {
    App::new("webapp-operator")
        .namespace("webapp-system")
        .image("example.dev/webapp-operator:latest")
        .operate::<WebApp>()
}
