//! `example.dev/v1` WebApps: the first version of the API, still served (deprecated), and its conversions to and
//! from `v2` ([`super::WebApp`], the hub). The mapping is in the [parent module](super); what `v1` cannot express
//! is kept in the annotation [`V2_FIELDS`].
//!
//! Both WebApp operators serve this version: `webapp-by-hand` through the `From`/`TryFrom` impls here, the
//! derive's `webapp` through its own impls, which call [`to_v2`] and [`to_v1`] as these do.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

use super::{DEFAULT_PORT_NAME, Port, Scale, WebAppStatus};

/// The annotation of a `v1` WebApp that keeps, as JSON, the fields of `v2` that `v1` cannot express:
/// `maxSurge` (`spec.scale.maxSurge`), `portName` (the first port's name, when not `http`) and `morePorts`
/// (`spec.ports` after the first). A WebApp read at `v1` carries it only when one of them is set; a conversion
/// to `v2` consumes it.
pub const V2_FIELDS: &str = "example.dev/v2-fields";

/// The desired state of a web application, as `example.dev/v1` wrote it: one `replicas`, one `port`.
#[derive(CustomResource, Clone, Debug, PartialEq, Serialize, Deserialize, KubeSchema)]
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
#[x_kube(validation = Rule::new("self.replicas <= 50").message("replicas must be at most 50"))]
#[serde(rename_all = "camelCase")]
pub struct WebAppSpec {
    /// The container image to run.
    pub image: String,
    /// How many pods to run.
    #[serde(default = "super::default_replicas")]
    #[schemars(range(min = 0))]
    pub replicas: i32,
    /// The port the container listens on, and the Service's port: 8080 when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: Option<i32>,
    /// The name of a ConfigMap in the same namespace whose data the pods use; a change to it rolls the pods.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config_map: Option<String>,
}

/// Why a `v1` WebApp does not convert to `v2`: its [`V2_FIELDS`] annotation is not one a conversion writes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConversionError {
    /// The annotation is not the JSON of the kept fields.
    #[error("annotation {V2_FIELDS} does not read: {0}")]
    Unreadable(String),
    /// The annotation names ports but `spec.port` is absent (there is no first port to add them to).
    #[error("annotation {V2_FIELDS} names ports but spec.port is not set")]
    PortsWithoutPort,
}

/// The fields of `v2` that `v1` cannot express: the value of [`V2_FIELDS`].
#[derive(Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Kept {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_surge: Option<IntOrString>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    port_name: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    more_ports: Vec<Port>,
}

impl Kept {
    fn is_empty(&self) -> bool {
        *self == Kept::default()
    }
}

/// `v2`'s `scale` and `ports` of a `v1` WebApp's `replicas` and `port`, with what [`V2_FIELDS`] in `metadata`
/// kept; the annotation is removed from `metadata` (and the annotations with it when it was the only one).
pub fn to_v2(
    replicas: i32,
    port: Option<i32>,
    metadata: &mut ObjectMeta,
) -> Result<(Scale, Vec<Port>), ConversionError> {
    let annotations = &mut metadata.annotations;
    let kept = match annotations.as_mut().and_then(|a| a.remove(V2_FIELDS)) {
        Some(text) => {
            if annotations.as_ref().is_some_and(BTreeMap::is_empty) {
                *annotations = None;
            }
            serde_json::from_str(&text).map_err(|e| ConversionError::Unreadable(e.to_string()))?
        }
        None => Kept::default(),
    };
    let ports = match port {
        Some(port) => {
            let name = kept
                .port_name
                .unwrap_or_else(|| DEFAULT_PORT_NAME.to_string());
            std::iter::once(Port { name, port })
                .chain(kept.more_ports)
                .collect()
        }
        None if kept.port_name.is_some() || !kept.more_ports.is_empty() => {
            return Err(ConversionError::PortsWithoutPort);
        }
        None => Vec::new(),
    };
    let scale = Scale {
        replicas,
        max_surge: kept.max_surge,
    };
    Ok((scale, ports))
}

/// `v1`'s `replicas` and `port` of a `v2` WebApp's `scale` and `ports`; what `v1` cannot express goes to
/// [`V2_FIELDS`] in `metadata` (any earlier value of it is replaced, or removed when nothing is kept).
pub fn to_v1(scale: Scale, ports: Vec<Port>, metadata: &mut ObjectMeta) -> (i32, Option<i32>) {
    let mut ports = ports.into_iter();
    let first = ports.next();
    let kept = Kept {
        max_surge: scale.max_surge,
        port_name: first
            .as_ref()
            .map(|p| p.name.clone())
            .filter(|n| n != DEFAULT_PORT_NAME),
        more_ports: ports.collect(),
    };
    if let Some(annotations) = metadata.annotations.as_mut() {
        annotations.remove(V2_FIELDS);
    }
    if !kept.is_empty() {
        // Kept holds strings, numbers and lists of them: writing it as JSON cannot fail.
        let text = serde_json::to_string(&kept).unwrap_or_default();
        metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(V2_FIELDS.into(), text);
    }
    (scale.replicas, first.map(|p| p.port))
}

impl TryFrom<WebApp> for super::WebApp {
    type Error = ConversionError;

    fn try_from(old: WebApp) -> Result<Self, ConversionError> {
        let mut metadata = old.metadata;
        let (scale, ports) = to_v2(old.spec.replicas, old.spec.port, &mut metadata)?;
        Ok(super::WebApp {
            metadata,
            spec: super::WebAppSpec {
                image: old.spec.image,
                scale,
                ports,
                config_map: old.spec.config_map,
            },
            status: old.status,
        })
    }
}

impl From<super::WebApp> for WebApp {
    fn from(new: super::WebApp) -> Self {
        let mut metadata = new.metadata;
        let (replicas, port) = to_v1(new.spec.scale, new.spec.ports, &mut metadata);
        WebApp {
            metadata,
            spec: WebAppSpec {
                image: new.spec.image,
                replicas,
                port,
                config_map: new.spec.config_map,
            },
            status: new.status,
        }
    }
}
