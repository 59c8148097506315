//! The objects of an installation, built from [`Manifests`].

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, ContainerPort, EnvVar, EnvVarSource, HTTPGetAction, Namespace,
    ObjectFieldSelector, PodSecurityContext, PodSpec, PodTemplateSpec, Probe, ResourceRequirements,
    SeccompProfile, SecurityContext, Service, ServiceAccount, ServicePort, ServiceSpec,
};
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, Role, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::Resource;
use serde::Serialize;

use super::Manifests;

impl Manifests {
    fn meta(&self, namespaced: bool) -> ObjectMeta {
        ObjectMeta {
            name: Some(self.name.clone()),
            namespace: namespaced.then(|| self.namespace.clone()),
            labels: Some(self.labels()),
            ..Default::default()
        }
    }

    pub(super) fn meta_in(&self, name: &str, namespace: &str) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.to_string()),
            namespace: Some(namespace.to_string()),
            labels: Some(self.labels()),
            ..Default::default()
        }
    }

    pub(super) fn labels(&self) -> BTreeMap<String, String> {
        [("app.kubernetes.io/name".to_string(), self.name.clone())].into()
    }

    /// The CustomResourceDefinitions.
    pub fn crds(&self) -> &[CustomResourceDefinition] {
        &self.crds
    }

    /// The operator's ServiceAccount.
    pub fn service_account(&self) -> ServiceAccount {
        ServiceAccount {
            metadata: self.meta(true),
            ..Default::default()
        }
    }

    /// The ClusterRole with [`rules`](Self::rules).
    pub fn cluster_role(&self) -> ClusterRole {
        ClusterRole {
            metadata: self.meta(false),
            rules: Some(self.rules()),
            ..Default::default()
        }
    }

    /// With [`metrics_secure`](Self::metrics_secure): the ClusterRole `<name>-metrics-reader`, which lets its
    /// subjects `get` `/metrics`.
    pub fn metrics_reader_role(&self) -> Option<ClusterRole> {
        (self.metrics_secure && self.metrics_port.is_some()).then(|| {
            let mut metadata = self.meta(false);
            metadata.name = Some(format!("{}-metrics-reader", self.name));
            ClusterRole {
                metadata,
                rules: Some(vec![k8s_openapi::api::rbac::v1::PolicyRule {
                    non_resource_urls: Some(vec!["/metrics".into()]),
                    verbs: vec!["get".into()],
                    ..Default::default()
                }]),
                ..Default::default()
            }
        })
    }

    /// Binds the ClusterRole to the ServiceAccount.
    // `.into()` converts to `Option<T>` before Kubernetes 1.37 and to `T` itself from 1.37 on.
    #[allow(clippy::useless_conversion)]
    pub fn cluster_role_binding(&self) -> ClusterRoleBinding {
        ClusterRoleBinding {
            metadata: self.meta(false),
            role_ref: RoleRef {
                // `Option<String>` from Kubernetes 1.37 on, `String` before: either comes from a `String`.
                api_group: String::from("rbac.authorization.k8s.io").into(),
                kind: "ClusterRole".into(),
                name: self.name.clone(),
            },
            subjects: Some(vec![self.subject()]),
        }
    }

    /// The container's arguments: those given, then the flags the options ask for.
    pub(super) fn container_args(&self) -> Vec<String> {
        let mut args = self.args.clone();
        if self.install_crds {
            args.push("--install-crds".into());
        }
        if self.sharded.is_some() {
            args.push("--sharded".into());
        } else if self.leader_election {
            args.push("--leader-elect".into());
        }
        if let Some(port) = self.probe_port {
            args.push(format!("--health-probe-bind-address=:{port}"));
        }
        if let Some(port) = self.metrics_port {
            args.push(format!("--metrics-bind-address=:{port}"));
            if self.metrics_secure {
                args.push("--metrics-secure".into());
            }
        }
        for namespace in &self.watch_namespaces {
            args.push(format!("--namespace={namespace}"));
        }
        args.extend(self.webhook_args());
        args
    }

    pub(super) fn container_ports(&self) -> Vec<ContainerPort> {
        let port = |name: &str, port: i32| ContainerPort {
            name: Some(name.into()),
            container_port: port,
            ..Default::default()
        };
        let mut ports = Vec::new();
        if let Some(p) = self.probe_port {
            ports.push(port("healthz", p));
        }
        if let Some(p) = self.metrics_port {
            ports.push(port("metrics", p));
        }
        if self.serves_webhooks() {
            ports.push(port("webhook", super::WEBHOOK_PORT));
        }
        ports
    }

    /// The Roles: one for leader election in the operator's namespace (`<name>-leader-election`), and with
    /// [`watch_namespaces`](Self::watch_namespaces) one in each watched namespace (`<name>`).
    pub fn roles(&self) -> Vec<Role> {
        let mut roles = Vec::new();
        let leases = self.leader_election_rules();
        if !leases.is_empty() {
            roles.push(Role {
                metadata: self.meta_in(&self.leader_election_name(), &self.namespace),
                rules: Some(leases),
            });
        }
        let rules = self.namespace_rules();
        if !rules.is_empty() {
            for namespace in &self.watch_namespaces {
                roles.push(Role {
                    metadata: self.meta_in(&self.name, namespace),
                    rules: Some(rules.clone()),
                });
            }
        }
        roles
    }

    /// A RoleBinding of each of [`roles`](Self::roles) to the ServiceAccount, beside it.
    // `.into()` converts to `Option<T>` before Kubernetes 1.37 and to `T` itself from 1.37 on.
    #[allow(clippy::useless_conversion)]
    pub fn role_bindings(&self) -> Vec<RoleBinding> {
        self.roles()
            .into_iter()
            .map(|role| RoleBinding {
                metadata: role.metadata.clone(),
                role_ref: RoleRef {
                    api_group: String::from("rbac.authorization.k8s.io").into(),
                    kind: "Role".into(),
                    name: role.metadata.name.clone().unwrap_or_default(),
                },
                subjects: Some(vec![self.subject()]),
            })
            .collect()
    }

    fn leader_election_name(&self) -> String {
        format!("{}-leader-election", self.name)
    }

    fn subject(&self) -> Subject {
        Subject {
            kind: "ServiceAccount".into(),
            name: self.name.clone(),
            namespace: Some(self.namespace.clone()),
            ..Default::default()
        }
    }

    /// The Service `<name>-metrics` in front of the operator's metrics port (none without
    /// [`metrics`](Self::metrics)).
    pub fn metrics_service(&self) -> Option<Service> {
        let port = self.metrics_port?;
        Some(Service {
            metadata: self.meta_in(&format!("{}-metrics", self.name), &self.namespace),
            spec: Some(ServiceSpec {
                selector: Some(self.labels()),
                ports: Some(vec![ServicePort {
                    name: Some("metrics".into()),
                    port,
                    target_port: Some(IntOrString::String("metrics".into())),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            ..Default::default()
        })
    }

    /// One replica of the operator under the ServiceAccount; `POD_NAME` names the event reporter instance.
    // `.into()` converts to `Option<T>` before Kubernetes 1.37 and to `T` itself from 1.37 on.
    #[allow(clippy::useless_conversion)]
    pub fn deployment(&self) -> Deployment {
        let labels = self.labels();
        Deployment {
            metadata: self.meta(true),
            // `Option` before Kubernetes 1.37, required from 1.37 on: `into` fits both.
            spec: DeploymentSpec {
                replicas: Some(self.sharded.unwrap_or(1)),
                selector: LabelSelector {
                    match_labels: Some(labels.clone()),
                    ..Default::default()
                },
                template: PodTemplateSpec {
                    metadata: Some(ObjectMeta {
                        labels: Some(labels),
                        ..Default::default()
                    }),
                    spec: Some(PodSpec {
                        service_account_name: Some(self.name.clone()),
                        volumes: self.webhook_volume().map(|(v, _)| vec![v]),
                        // Restricted (Pod Security Standards): non-root, the runtime's seccomp profile.
                        security_context: Some(PodSecurityContext {
                            run_as_non_root: Some(true),
                            seccomp_profile: Some(SeccompProfile {
                                type_: "RuntimeDefault".into(),
                                ..Default::default()
                            }),
                            ..Default::default()
                        }),
                        containers: vec![Container {
                            name: "operator".into(),
                            image: Some(
                                self.image
                                    .clone()
                                    .unwrap_or_else(|| format!("{}:latest", self.name)),
                            ),
                            args: {
                                let args = self.container_args();
                                (!args.is_empty()).then_some(args)
                            },
                            ports: {
                                let ports = self.container_ports();
                                (!ports.is_empty()).then_some(ports)
                            },
                            volume_mounts: self.webhook_volume().map(|(_, m)| vec![m]),
                            liveness_probe: self.probe_port.map(|_| probe("/healthz")),
                            readiness_probe: self.probe_port.map(|_| probe("/readyz")),
                            security_context: Some(SecurityContext {
                                allow_privilege_escalation: Some(false),
                                read_only_root_filesystem: Some(true),
                                run_as_non_root: Some(true),
                                capabilities: Some(Capabilities {
                                    drop: Some(vec!["ALL".into()]),
                                    ..Default::default()
                                }),
                                ..Default::default()
                            }),
                            // What `cargo xtask bench-cluster` measured for 1,000 parents (55 MiB peak), with room.
                            resources: Some(ResourceRequirements {
                                requests: Some(BTreeMap::from([
                                    ("cpu".to_string(), Quantity("50m".into())),
                                    ("memory".to_string(), Quantity("64Mi".into())),
                                ])),
                                limits: Some(BTreeMap::from([(
                                    "memory".to_string(),
                                    Quantity("256Mi".into()),
                                )])),
                                ..Default::default()
                            }),
                            env: Some(vec![
                                EnvVar {
                                    name: "POD_NAME".into(),
                                    value_from: Some(EnvVarSource {
                                        field_ref: Some(ObjectFieldSelector {
                                            field_path: "metadata.name".into(),
                                            ..Default::default()
                                        }),
                                        ..Default::default()
                                    }),
                                    ..Default::default()
                                },
                                EnvVar {
                                    name: "RUST_LOG".into(),
                                    value: Some("info".into()),
                                    ..Default::default()
                                },
                            ]),
                            ..Default::default()
                        }],
                        ..Default::default()
                    }),
                },
                ..Default::default()
            }
            .into(),
            ..Default::default()
        }
    }

    /// The Namespace the operator runs in, unless it is one every cluster has (`default`, `kube-system`).
    pub fn namespace_object(&self) -> Option<Namespace> {
        (!["default", "kube-system", "kube-public"].contains(&self.namespace.as_str())).then(|| {
            let mut labels = self.labels();
            // The operator's pod meets the `restricted` Pod Security Standard; the namespace enforces it.
            labels.insert(
                "pod-security.kubernetes.io/enforce".into(),
                "restricted".into(),
            );
            Namespace {
                metadata: ObjectMeta {
                    name: Some(self.namespace.clone()),
                    labels: Some(labels),
                    ..Default::default()
                },
                ..Default::default()
            }
        })
    }

    /// Every object, in the order `kubectl apply` needs them (CRDs first, then the Namespace the rest goes
    /// into); the ClusterRole and its binding only when some rule needs them.
    pub fn objects(&self) -> serde_json::Result<Vec<serde_json::Value>> {
        let mut out: Vec<serde_json::Value> = Vec::new();
        for crd in self.served_crds() {
            out.push(typed(&crd)?);
        }
        if let Some(namespace) = self.namespace_object() {
            out.push(typed(&namespace)?);
        }
        out.push(typed(&self.service_account())?);
        if !self.rules().is_empty() {
            out.push(typed(&self.cluster_role())?);
            out.push(typed(&self.cluster_role_binding())?);
        }
        for role in self.roles() {
            out.push(typed(&role)?);
        }
        for binding in self.role_bindings() {
            out.push(typed(&binding)?);
        }
        out.push(typed(&self.deployment())?);
        if let Some(service) = self.metrics_service() {
            out.push(typed(&service)?);
        }
        if let Some(reader) = self.metrics_reader_role() {
            out.push(typed(&reader)?);
        }
        if let Some(service) = self.webhook_service() {
            out.push(typed(&service)?);
            out.extend(self.webhook_certificate());
            out.extend(self.webhook_configurations()?);
        }
        Ok(out)
    }

    /// Every object as one YAML stream (documents separated by `---`), ready for `kubectl apply -f -`.
    pub fn to_yaml(&self) -> Result<String, ManifestsError> {
        let mut out = String::new();
        for object in self.objects().map_err(ManifestsError::Json)? {
            out.push_str("---\n");
            let yaml = serde_saphyr::to_string(&object)
                .map_err(|e| ManifestsError::Yaml(e.to_string()))?;
            out.push_str(&yaml);
        }
        Ok(out)
    }
}

/// Why [`Manifests::to_yaml`] could not write the manifests.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ManifestsError {
    /// An object did not serialize to JSON (a custom resource definition or webhook configuration the
    /// reconciler declared).
    #[error("the manifests do not serialize: {0}")]
    Json(#[source] serde_json::Error),
    /// An object's JSON did not write as YAML.
    #[error("the manifests do not write as YAML: {0}")]
    Yaml(String),
}

/// An HTTP probe on the container's `healthz` port.
fn probe(path: &str) -> Probe {
    Probe {
        http_get: Some(HTTPGetAction {
            path: Some(path.into()),
            port: IntOrString::String("healthz".into()),
            ..Default::default()
        }),
        period_seconds: Some(10),
        ..Default::default()
    }
}

/// An object with its `apiVersion` and `kind` first.
fn typed<K: Resource<DynamicType = ()> + Serialize>(
    object: &K,
) -> serde_json::Result<serde_json::Value> {
    let mut map = serde_json::Map::new();
    map.insert("apiVersion".into(), K::api_version(&()).into());
    map.insert("kind".into(), K::kind(&()).into());
    if let serde_json::Value::Object(fields) = crate::json::convert(object)? {
        for (k, v) in fields {
            if k != "apiVersion" && k != "kind" {
                map.insert(k, v);
            }
        }
    }
    Ok(serde_json::Value::Object(map))
}
