//! The `WebApp` operator, written with the runtime only (no derive): the reference the derive's `webapp`
//! example must match.
//!
//! A `WebApp` (`example.dev/v2`, namespaced) runs an image as a Deployment and exposes its ports with a Service,
//! both named like the WebApp and controlled by it. When `spec.configMap` names a ConfigMap in the same namespace,
//! the pod template carries a hash of that ConfigMap's data ([`CONFIG_HASH_ANNOTATION`]), so editing the
//! ConfigMap rolls the pods. A missing ConfigMap is an invalid spec: `Ready=False` with reason
//! `ConfigMapNotFound`, and the existing children are left alone.
//!
//! The binary (`cargo run --example webapp-by-hand`), the integration tests and the benchmark all build the
//! controller with [`reconciler`], so they exercise exactly this code; [`cli`] is the binary's command line.
//!
//! # Two versions
//!
//! `v2` ([`WebApp`]) is the version the reconciler works with and the version the API server stores. `v1`
//! ([`v1::WebApp`], the first version of the API) is still served, deprecated: the API server warns on every
//! request to it ([`V1_DEPRECATED`]) and converts through the operator's conversion webhook ([`versions`]):
//!
//! | `v1` | `v2` |
//! | --- | --- |
//! | `spec.replicas` | `spec.scale.replicas` |
//! | (none) | `spec.scale.maxSurge`, the Deployment's `maxSurge` (a count or a percentage) |
//! | `spec.port` | `spec.ports[0].port`; absent when `spec.ports` is empty |
//! | (none) | `spec.ports[0].name` when it is not `http`, and `spec.ports[1..]` |
//! | `spec.image`, `spec.configMap`, `status` | the same |
//!
//! What `v1` cannot express is kept on the `v1` object in the annotation [`v1::V2_FIELDS`], as kube-apiserver
//! keeps `autoscaling/v2` metrics on an `autoscaling/v1` HorizontalPodAutoscaler, so that reading a `v2`
//! WebApp at `v1` and writing it back loses nothing; a `v1` patch of `spec.port` changes the first port and
//! keeps the others. [`v1::WebApp`] and the conversions are in [`v1`].

pub mod cli;
pub mod v1;

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::apps::v1::{DeploymentStrategy, RollingUpdateDeployment};
use k8s_openapi::api::core::v1::{
    ConfigMap, Container, ContainerPort, PodSpec, PodTemplateSpec, Service, ServicePort,
    ServiceSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::{CustomResource, KubeSchema, ResourceExt};
use kubewright::conversion::Versions;
use kubewright::{ChildOutcome, ChildReconciler, Context, Error, Reconciler, ReconcilerStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The controller's name: its field manager and the reporter of its events.
pub const CONTROLLER_NAME: &str = "webapp-controller";

/// The pod-template annotation holding the hash of the referenced ConfigMap's data.
pub const CONFIG_HASH_ANNOTATION: &str = "example.dev/config-hash";

/// The label every child and pod carries with the WebApp's name; the Service selects pods on it.
pub const INSTANCE_LABEL: &str = "app.kubernetes.io/instance";

/// The label naming the application kind of every child and pod.
pub const NAME_LABEL: &str = "app.kubernetes.io/name";

/// The reason of `Ready=False` when `spec.configMap` names a ConfigMap that does not exist.
pub const CONFIG_MAP_NOT_FOUND: &str = "ConfigMapNotFound";

/// The desired state of a web application (`example.dev/v2`, the hub and the storage version).
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, KubeSchema)]
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

/// How many pods a WebApp runs (`spec.scale` of `v2`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Scale {
    /// How many pods to run.
    #[serde(default = "default_replicas")]
    #[schemars(range(min = 0))]
    pub replicas: i32,
    /// How many pods above `replicas` a rollout may start (a count, or a percentage such as `25%`): the
    /// Deployment's `maxSurge`; Kubernetes' default (25%) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_surge: Option<IntOrString>,
}

impl Default for Scale {
    fn default() -> Self {
        Scale {
            replicas: default_replicas(),
            max_surge: None,
        }
    }
}

/// A port the container listens on and the Service exposes under the same number (`spec.ports[]` of `v2`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Port {
    /// The port's name, on the container and the Service.
    pub name: String,
    /// The port number.
    #[schemars(range(min = 1, max = 65535))]
    pub port: i32,
}

impl Port {
    /// The port named [`DEFAULT_PORT_NAME`] numbered `port`.
    pub fn http(port: i32) -> Self {
        Port {
            name: DEFAULT_PORT_NAME.into(),
            port,
        }
    }
}

fn default_replicas() -> i32 {
    1
}

/// What the operator observed of a WebApp.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebAppStatus {
    /// The generation of the spec this status describes.
    pub observed_generation: Option<i64>,
    /// `Ready`, rolled up from `DeploymentReady` and `ServiceReady`.
    #[serde(default)]
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
    fn set_observed_generation(&mut self, generation: Option<i64>) {
        self.observed_generation = generation;
    }
}

/// The message of the validating webhook for an image with neither a tag nor a digest.
pub const IMAGE_NEEDS_TAG: &str = "image must name a tag or digest";

/// The warning of the validating webhook for a WebApp of 0 replicas.
pub const NOTHING_WILL_RUN: &str = "spec.scale.replicas is 0: nothing will run";

/// The port of a WebApp that names none.
pub const DEFAULT_PORT: i32 = 8080;

/// The name of the port of a WebApp that names none, and of `v1`'s single port.
pub const DEFAULT_PORT_NAME: &str = "http";

/// The deprecation warning the API server gives for every request at `example.dev/v1`.
pub const V1_DEPRECATED: &str = "example.dev/v1 WebApp is deprecated; use example.dev/v2";

/// A WebApp's ports: `spec.ports`, or `http` [`DEFAULT_PORT`] for a WebApp stored without any (created while no
/// defaulting webhook ran).
pub fn ports(ports: &[Port]) -> Vec<Port> {
    if ports.is_empty() {
        vec![Port::http(DEFAULT_PORT)]
    } else {
        ports.to_vec()
    }
}

/// The Deployment strategy of a WebApp: a rolling update with `spec.scale.maxSurge` when set, else the
/// Deployment's default (none written).
pub fn strategy(scale: &Scale) -> Option<DeploymentStrategy> {
    scale.max_surge.as_ref().map(|surge| DeploymentStrategy {
        type_: Some("RollingUpdate".into()),
        rolling_update: Some(RollingUpdateDeployment {
            max_surge: Some(surge.clone()),
            ..Default::default()
        }),
    })
}

/// The versions of the kind: `v2` ([`WebApp`]) the hub and stored, `v1` ([`v1::WebApp`]) served, deprecated
/// with [`V1_DEPRECATED`], and converted both ways by the `From` impls of [`v1`].
pub fn versions() -> Versions<WebApp> {
    Versions::<WebApp>::new()
        .storage("v2")
        .version::<v1::WebApp>()
        .deprecated("v1", V1_DEPRECATED)
}

/// Whether `image` names a tag (`nginx:1.27`, `host:5000/app:v1`) or a digest (`app@sha256:..`).
pub fn image_is_pinned(image: &str) -> bool {
    let last = image.rsplit('/').next().unwrap_or(image);
    image.contains('@') || last.contains(':')
}

/// The WebApp admission webhooks (served by `kubewright::admission::WebhookServer`): a defaulter setting
/// `spec.ports` to `http` [`DEFAULT_PORT`] when empty, and a validator refusing an image with neither a tag nor
/// a digest and warning about 0 replicas.
pub fn webhooks() -> kubewright::admission::Webhooks<WebApp> {
    use kubewright::admission::{Verdict, Webhooks};
    Webhooks::<WebApp>::new()
        .default(|app| {
            if app.spec.ports.is_empty() {
                app.spec.ports = vec![Port::http(DEFAULT_PORT)];
            }
        })
        .validate(|request| match request.object {
            Some(app) if !image_is_pinned(&app.spec.image) => Verdict::deny(IMAGE_NEEDS_TAG),
            Some(app) if app.spec.scale.replicas == 0 => Verdict::allow().warn(NOTHING_WILL_RUN),
            _ => Verdict::allow(),
        })
}

/// The root reconciler of WebApps: a Deployment and a Service, each a [`ChildReconciler`], and the referenced
/// ConfigMap read through the (tracking) cache.
pub fn reconciler() -> Reconciler<WebApp> {
    Reconciler::new(CONTROLLER_NAME)
        // A changed ConfigMap reconciles the apps whose spec names it (a field index of the WebApp cache).
        .references::<ConfigMap>(|app: &WebApp| app.spec.config_map.iter().cloned().collect())
        .step(ChildReconciler::new("deployment", desired_deployment).reflect(reflect_deployment))
        .step(ChildReconciler::new("service", desired_service).reflect(reflect_service))
}

/// The labels of an app's children and pods; the Deployment and the Service select on them.
pub fn labels(app: &WebApp) -> BTreeMap<String, String> {
    [
        (NAME_LABEL.to_string(), "webapp".to_string()),
        (INSTANCE_LABEL.to_string(), app.name_any()),
    ]
    .into()
}

/// A stable hash (FNV-1a, 64 bits, hex) of a ConfigMap's `data` and `binaryData`, in key order.
pub fn config_hash(cm: &ConfigMap) -> String {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut hash = OFFSET;
    let mut feed = |bytes: &[u8]| {
        // Length-prefixed, so that ("ab", "c") and ("a", "bc") differ.
        for b in (bytes.len() as u64).to_le_bytes().iter().chain(bytes) {
            hash ^= u64::from(*b);
            hash = hash.wrapping_mul(PRIME);
        }
    };
    for (k, v) in cm.data.iter().flatten() {
        feed(b"d");
        feed(k.as_bytes());
        feed(v.as_bytes());
    }
    for (k, v) in cm.binary_data.iter().flatten() {
        feed(b"b");
        feed(k.as_bytes());
        feed(&v.0);
    }
    format!("{hash:016x}")
}

/// The hash of the ConfigMap the app names, read from the cache (and tracked, so a change to it re-runs the
/// app); `None` when the app names none. A missing ConfigMap is an invalid spec.
fn referenced_config_hash(app: &WebApp, cx: &mut Context) -> kubewright::Result<Option<String>> {
    let Some(name) = app.spec.config_map.as_deref() else {
        return Ok(None);
    };
    let namespace = app.namespace();
    match cx.get::<ConfigMap>(namespace.as_deref(), name)? {
        Some(cm) => Ok(Some(config_hash(&cm))),
        None => Err(Error::invalid_spec(
            CONFIG_MAP_NOT_FOUND,
            format!(
                "ConfigMap {name} not found in namespace {}",
                namespace.unwrap_or_default()
            ),
        )),
    }
}

/// The Deployment of an app: `scale.replicas` pods running `image`, exposing `ports`, rolled out with
/// `scale.maxSurge`, with the ConfigMap hash on the pod template when a ConfigMap is named.
pub fn desired_deployment(
    app: &WebApp,
    cx: &mut Context,
) -> kubewright::Result<Option<Deployment>> {
    let hash = referenced_config_hash(app, cx)?;
    let labels = labels(app);
    let annotations = hash.map(|h| BTreeMap::from([(CONFIG_HASH_ANNOTATION.to_string(), h)]));
    Ok(Some(Deployment {
        metadata: ObjectMeta {
            name: Some(app.name_any()),
            labels: Some(labels.clone()),
            ..Default::default()
        },
        spec: Some(DeploymentSpec {
            replicas: Some(app.spec.scale.replicas),
            strategy: strategy(&app.spec.scale),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    annotations,
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "app".into(),
                        image: Some(app.spec.image.clone()),
                        ports: Some(
                            ports(&app.spec.ports)
                                .into_iter()
                                .map(|p| ContainerPort {
                                    name: Some(p.name),
                                    container_port: p.port,
                                    ..Default::default()
                                })
                                .collect(),
                        ),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        }),
        ..Default::default()
    }))
}

/// The Service of an app: each of `ports`, forwarded to the same port of the pods, selecting the app's pods.
pub fn desired_service(app: &WebApp, _cx: &mut Context) -> kubewright::Result<Option<Service>> {
    let labels = labels(app);
    Ok(Some(Service {
        metadata: ObjectMeta {
            name: Some(app.name_any()),
            labels: Some(labels.clone()),
            ..Default::default()
        },
        spec: Some(ServiceSpec {
            selector: Some(labels),
            ports: Some(
                ports(&app.spec.ports)
                    .into_iter()
                    .map(|p| ServicePort {
                        name: Some(p.name),
                        port: p.port,
                        target_port: Some(IntOrString::Int(p.port)),
                        ..Default::default()
                    })
                    .collect(),
            ),
            ..Default::default()
        }),
        ..Default::default()
    }))
}

/// Reports the Deployment's name, available replicas and the ConfigMap hash its pods run with.
pub fn reflect_deployment(app: &mut WebApp, outcome: &ChildOutcome<Deployment>) {
    let status = app.status.get_or_insert_with(Default::default);
    match outcome {
        ChildOutcome::Created(d) | ChildOutcome::Updated(d) | ChildOutcome::Unchanged(d) => {
            status.deployment = Some(d.name_any());
            status.available_replicas = d.status.as_ref().and_then(|s| s.available_replicas);
            status.config_hash = d
                .spec
                .as_ref()
                .and_then(|s| s.template.metadata.as_ref())
                .and_then(|m| m.annotations.as_ref())
                .and_then(|a| a.get(CONFIG_HASH_ANNOTATION))
                .cloned();
        }
        ChildOutcome::Deleted
        | ChildOutcome::Absent
        | ChildOutcome::Terminating(_)
        | ChildOutcome::Conflict { .. } => {
            status.deployment = None;
            status.available_replicas = None;
        }
        // Not written this pass (e.g. an invalid spec): what was reported before still holds.
        ChildOutcome::Failed(_) => {}
    }
}

/// Reports the Service's name.
pub fn reflect_service(app: &mut WebApp, outcome: &ChildOutcome<Service>) {
    let status = app.status.get_or_insert_with(Default::default);
    match outcome {
        ChildOutcome::Created(s) | ChildOutcome::Updated(s) | ChildOutcome::Unchanged(s) => {
            status.service = Some(s.name_any());
        }
        ChildOutcome::Deleted
        | ChildOutcome::Absent
        | ChildOutcome::Terminating(_)
        | ChildOutcome::Conflict { .. } => {
            status.service = None;
        }
        ChildOutcome::Failed(_) => {}
    }
}

/// A sample WebApp in namespace `default` named `name`, reading the ConfigMap `config_map` if given.
pub fn sample(name: &str, config_map: Option<&str>) -> WebApp {
    let mut app = WebApp::new(
        name,
        WebAppSpec {
            image: "nginx:1.27".into(),
            scale: Scale {
                replicas: 2,
                max_surge: None,
            },
            ports: Vec::new(),
            config_map: config_map.map(str::to_string),
        },
    );
    app.metadata.namespace = Some("default".into());
    app
}

/// A sample ConfigMap in namespace `default`.
pub fn sample_config_map(name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        data: Some(BTreeMap::from([(
            "index.html".to_string(),
            "<h1>Hello from the WebApp operator</h1>\n".to_string(),
        )])),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_follows_the_data_only() {
        let a = sample_config_map("a");
        let mut b = sample_config_map("b");
        assert_eq!(config_hash(&a), config_hash(&b));
        b.data = Some(BTreeMap::from([("index.html".into(), "other".into())]));
        assert_ne!(config_hash(&a), config_hash(&b));
        let split = |k: &str, v: &str| ConfigMap {
            data: Some(BTreeMap::from([(k.to_string(), v.to_string())])),
            ..Default::default()
        };
        assert_ne!(
            config_hash(&split("ab", "c")),
            config_hash(&split("a", "bc"))
        );
    }

    #[test]
    fn the_crd_has_the_contract() {
        let crd = serde_json::to_value(versions().crd().unwrap()).unwrap();
        assert_eq!(crd["spec"]["group"], "example.dev");
        assert_eq!(crd["spec"]["scope"], "Namespaced");
        let version = |name: &str| {
            crd["spec"]["versions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|v| v["name"] == name)
                .unwrap()
                .clone()
        };
        let (v1, v2) = (version("v1"), version("v2"));
        assert_eq!(
            (v2["storage"].as_bool(), v1["storage"].as_bool()),
            (Some(true), Some(false))
        );
        assert_eq!(v1["deprecated"], true);
        assert_eq!(v1["deprecationWarning"], V1_DEPRECATED);
        assert!(v2["subresources"]["status"].is_object());
        let spec = &v2["schema"]["openAPIV3Schema"]["properties"]["spec"];
        assert_eq!(spec["required"], serde_json::json!(["image"]));
        let scale = &spec["properties"]["scale"];
        assert_eq!(scale["properties"]["replicas"]["default"], 1);
        assert_eq!(
            scale["properties"]["replicas"]["minimum"].as_f64(),
            Some(0.0)
        );
        // No schema default for the ports: the defaulting webhook fills them.
        assert!(spec["properties"]["ports"].get("default").is_none());
        let port = &spec["properties"]["ports"]["items"]["properties"]["port"];
        assert_eq!(port["maximum"].as_f64(), Some(65535.0));
        assert_eq!(spec["properties"]["configMap"]["type"], "string");
        // v1 keeps its own schema.
        let spec = &v1["schema"]["openAPIV3Schema"]["properties"]["spec"];
        assert_eq!(spec["properties"]["replicas"]["default"], 1);
        assert_eq!(spec["properties"]["port"]["type"], "integer");
    }
}
