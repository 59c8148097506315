//! Installation manifests derived from what reconcilers declare: the CRDs, a ServiceAccount, a ClusterRole
//! with exactly the verbs the wiring needs, its ClusterRoleBinding, and a Deployment running the operator.
//!
//! The rules follow from each reconciler's [`wiring`](crate::Reconciler::wiring):
//!
//! | what | resources | verbs |
//! | --- | --- | --- |
//! | the parent kind | `<plural>` | get, list, watch (and patch, update with a finalizer) |
//! | the parent's status | `<plural>/status` | patch, update |
//! | each owned (child) kind | `<plural>` | get, list, watch, create, patch, update, delete |
//! | each tracked or watched kind | `<plural>` | get, list, watch |
//! | owned RoleBindings | `rbac.authorization.k8s.io` `roles`, `clusterroles` | bind |
//! | owned ClusterRoleBindings | `rbac.authorization.k8s.io` `clusterroles` | bind |
//! | events | `events.k8s.io` `events` | create, patch |
//! | leader election, if on | `coordination.k8s.io` `leases` | get, create, update |
//!
//! Writing a binding to a role needs `bind` on that role (RBAC's escalation check), unless the operator holds
//! every permission the role grants. Which roles the bindings name is in the desired functions, not the
//! wiring, so the derived `bind` covers every role; narrow it with [`Manifests::bind_only`]. Rules the wiring
//! cannot know (a read through the client, say) are added with [`Manifests::rule`].
//!
//! ```
//! # use operator::{Reconciler, manifests::Manifests};
//! # fn demo<P: operator::ParentKind>(reconciler: Reconciler<P>) -> Result<(), serde_yaml::Error> {
//! let yaml = Manifests::new("webapp-operator")
//!     .reconciler(&reconciler)
//!     .namespace("webapp-system")
//!     .image("example.dev/webapp-operator:1.0")
//!     .to_yaml()?;
//! # Ok(()) }
//! ```

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    Capabilities, Container, ContainerPort, EnvVar, EnvVarSource, HTTPGetAction, Namespace,
    ObjectFieldSelector, PodSecurityContext, PodSpec, PodTemplateSpec, Probe, ResourceRequirements,
    SeccompProfile, SecurityContext, ServiceAccount,
};
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, PolicyRule, RoleRef, Subject};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::Resource;
use serde::Serialize;

use crate::reconciler::{ParentKind, Reconciler};
use crate::reconcilers::{Role, Wiring};

/// Verbs on the parent kind.
pub const PARENT_VERBS: &[&str] = &["get", "list", "watch"];
/// Extra verbs on the parent kind when a finalizer is added and removed.
pub const FINALIZER_VERBS: &[&str] = &["patch", "update"];
/// Verbs on the parent's status subresource.
pub const STATUS_VERBS: &[&str] = &["patch", "update"];
/// Verbs on owned (child) kinds.
pub const OWNED_VERBS: &[&str] = &[
    "get", "list", "watch", "create", "patch", "update", "delete",
];
/// Verbs on tracked and watched kinds.
pub const READ_VERBS: &[&str] = &["get", "list", "watch"];
/// Verbs on `events.k8s.io` events.
pub const EVENT_VERBS: &[&str] = &["create", "patch"];
/// Verbs on `coordination.k8s.io` leases, for leader election.
pub const LEASE_VERBS: &[&str] = &["get", "create", "update"];
/// Verbs on the roles an operator's own RoleBindings and ClusterRoleBindings refer to.
pub const BIND_VERBS: &[&str] = &["bind"];

const RBAC_GROUP: &str = "rbac.authorization.k8s.io";

/// The role resources a binding of this owned resource may refer to.
fn bound_roles(group: &str, plural: &str) -> &'static [&'static str] {
    match (group, plural) {
        (RBAC_GROUP, "rolebindings") => &["roles", "clusterroles"],
        (RBAC_GROUP, "clusterrolebindings") => &["clusterroles"],
        _ => &[],
    }
}

/// The RBAC rules a reconciler of `P` with this wiring needs.
pub fn rules<P: Resource<DynamicType = ()>>(wiring: &Wiring) -> Vec<PolicyRule> {
    let mut rules = Rules::default();
    let (group, plural) = (P::group(&()).into_owned(), P::plural(&()).into_owned());
    rules.add(&group, &plural, PARENT_VERBS);
    if !wiring.finalizers().is_empty() {
        rules.add(&group, &plural, FINALIZER_VERBS);
    }
    rules.add(&group, &format!("{plural}/status"), STATUS_VERBS);
    for kind in wiring.kinds() {
        let verbs = match kind.role {
            Role::Owned => OWNED_VERBS,
            Role::Tracked | Role::Watched => READ_VERBS,
        };
        rules.add(&kind.group, &kind.plural, verbs);
        if kind.role == Role::Owned {
            for roles in bound_roles(&kind.group, &kind.plural) {
                rules.add(RBAC_GROUP, roles, BIND_VERBS);
            }
        }
    }
    rules.add("events.k8s.io", "events", EVENT_VERBS);
    rules.into_rules()
}

/// Verbs by (API group, resource), merged.
#[derive(Debug, Default, Clone)]
struct Rules(BTreeMap<(String, String), BTreeSet<String>>);

impl Rules {
    fn add(&mut self, group: &str, resource: &str, verbs: &[&str]) {
        self.0
            .entry((group.to_string(), resource.to_string()))
            .or_default()
            .extend(verbs.iter().map(|v| v.to_string()));
    }

    fn remove_verbs(&mut self, group: &str, resource: &str, verbs: &[&str]) {
        let key = (group.to_string(), resource.to_string());
        if let Some(have) = self.0.get_mut(&key) {
            have.retain(|v| !verbs.contains(&v.as_str()));
            if have.is_empty() {
                self.0.remove(&key);
            }
        }
    }

    fn merge(&mut self, rules: &[PolicyRule]) {
        for r in rules {
            let verbs: Vec<&str> = r.verbs.iter().map(String::as_str).collect();
            for group in r.api_groups.iter().flatten() {
                for resource in r.resources.iter().flatten() {
                    self.add(group, resource, &verbs);
                }
            }
        }
    }

    /// One rule per resource, verbs in the canonical order of [`OWNED_VERBS`].
    fn into_rules(self) -> Vec<PolicyRule> {
        let order = |v: &str| {
            OWNED_VERBS
                .iter()
                .position(|o| *o == v)
                .unwrap_or(OWNED_VERBS.len())
        };
        self.0
            .into_iter()
            .map(|((group, resource), verbs)| {
                let mut verbs: Vec<String> = verbs.into_iter().collect();
                verbs.sort_by(|a, b| order(a).cmp(&order(b)).then(a.cmp(b)));
                PolicyRule {
                    api_groups: Some(vec![group]),
                    resources: Some(vec![resource]),
                    verbs,
                    ..Default::default()
                }
            })
            .collect()
    }
}

/// Everything needed to install an operator: see the [module documentation](self).
#[derive(Debug, Clone)]
pub struct Manifests {
    name: String,
    namespace: String,
    image: Option<String>,
    args: Vec<String>,
    leader_election: bool,
    install_crds: bool,
    probe_port: Option<i32>,
    crds: Vec<CustomResourceDefinition>,
    rules: Rules,
    extra: Vec<PolicyRule>,
    bind_only: Option<Vec<(String, String)>>,
}

impl Manifests {
    /// Manifests for an operator named `name` (the ServiceAccount, ClusterRole, binding and Deployment), in
    /// namespace `default` until [`namespace`](Self::namespace) says otherwise.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            namespace: "default".into(),
            image: None,
            args: Vec::new(),
            leader_election: false,
            install_crds: false,
            probe_port: None,
            crds: Vec::new(),
            rules: Rules::default(),
            extra: Vec::new(),
            bind_only: None,
        }
    }

    /// Adds the rules a reconciler needs, and its CRD when the parent kind has one.
    pub fn reconciler<P: ParentKind>(mut self, reconciler: &Reconciler<P>) -> Self {
        self.rules.merge(&rules::<P>(&reconciler.wiring()));
        self
    }

    /// Adds a CustomResourceDefinition (`Kind::crd()`).
    pub fn crd(mut self, crd: CustomResourceDefinition) -> Self {
        self.crds.push(crd);
        self
    }

    /// The namespace of the ServiceAccount and the Deployment.
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = namespace.into();
        self
    }

    /// The operator's container image (default `<name>:latest`).
    pub fn image(mut self, image: impl Into<String>) -> Self {
        self.image = Some(image.into());
        self
    }

    /// The container's arguments.
    pub fn args(mut self, args: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.args = args.into_iter().map(Into::into).collect();
        self
    }

    /// Whether the operator elects a leader on a Lease (adds the lease rule).
    pub fn leader_election(mut self, on: bool) -> Self {
        self.leader_election = on;
        self
    }

    /// Whether the operator installs its CRDs itself (it runs with `--install-crds`): only then does the
    /// ClusterRole grant reading and creating CustomResourceDefinitions. Off by default: the manifests install
    /// the CRDs, and the operator only checks they are served.
    pub fn install_crds(mut self, on: bool) -> Self {
        self.install_crds = on;
        self
    }

    /// Health probes on `port`: the operator runs with `--health-probe-bind-address=:PORT` (the examples'
    /// flag, served by [`crate::probes`]), and the Deployment's container has a `healthz` port, a liveness
    /// probe on `/healthz` and a readiness probe on `/readyz`.
    pub fn health_probes(mut self, port: i32) -> Self {
        self.probe_port = Some(port);
        self
    }

    /// Adds a rule the wiring cannot derive, as it is (with its `resourceNames`, if any).
    ///
    /// ```
    /// # use k8s_openapi::api::rbac::v1::PolicyRule;
    /// # use operator::manifests::Manifests;
    /// let m = Manifests::new("op").rule(PolicyRule {
    ///     api_groups: Some(vec!["".into()]),
    ///     resources: Some(vec!["nodes".into()]),
    ///     verbs: vec!["get".into(), "list".into()],
    ///     ..Default::default()
    /// });
    /// assert!(m.rules().iter().any(|r| r.resources == Some(vec!["nodes".into()])));
    /// ```
    pub fn rule(mut self, rule: PolicyRule) -> Self {
        self.extra.push(rule);
        self
    }

    /// Restricts the derived `bind` to these roles, as (`Role` or `ClusterRole`, name): the operator can then
    /// write bindings to them only.
    ///
    /// ```
    /// # use operator::manifests::Manifests;
    /// let m = Manifests::new("op").bind_only([("ClusterRole", "admin")]);
    /// # let _ = m;
    /// ```
    pub fn bind_only<'a>(mut self, roles: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        self.bind_only = Some(
            roles
                .into_iter()
                .map(|(kind, name)| (kind.to_string(), name.to_string()))
                .collect(),
        );
        self
    }

    /// The ClusterRole's rules.
    pub fn rules(&self) -> Vec<PolicyRule> {
        let mut rules = self.rules.clone();
        if self.leader_election {
            rules.add("coordination.k8s.io", "leases", LEASE_VERBS);
        }
        if self.install_crds {
            rules.add(
                "apiextensions.k8s.io",
                "customresourcedefinitions",
                &["get", "list", "watch", "create"],
            );
        }
        let mut out = Vec::new();
        if let Some(only) = &self.bind_only {
            rules.remove_verbs(RBAC_GROUP, "roles", BIND_VERBS);
            rules.remove_verbs(RBAC_GROUP, "clusterroles", BIND_VERBS);
            for (kind, resource) in [("Role", "roles"), ("ClusterRole", "clusterroles")] {
                let names: Vec<String> = only
                    .iter()
                    .filter(|(k, _)| k == kind)
                    .map(|(_, n)| n.clone())
                    .collect();
                if !names.is_empty() {
                    out.push(PolicyRule {
                        api_groups: Some(vec![RBAC_GROUP.into()]),
                        resources: Some(vec![resource.into()]),
                        resource_names: Some(names),
                        verbs: BIND_VERBS.iter().map(|v| v.to_string()).collect(),
                        ..Default::default()
                    });
                }
            }
        }
        let mut all = rules.into_rules();
        all.extend(out);
        all.extend(self.extra.iter().cloned());
        all
    }

    fn meta(&self, namespaced: bool) -> ObjectMeta {
        ObjectMeta {
            name: Some(self.name.clone()),
            namespace: namespaced.then(|| self.namespace.clone()),
            labels: Some(self.labels()),
            ..Default::default()
        }
    }

    fn labels(&self) -> BTreeMap<String, String> {
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
            subjects: Some(vec![Subject {
                kind: "ServiceAccount".into(),
                name: self.name.clone(),
                namespace: Some(self.namespace.clone()),
                ..Default::default()
            }]),
        }
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
                replicas: Some(1),
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
                                let mut args = self.args.clone();
                                if self.install_crds {
                                    args.push("--install-crds".into());
                                }
                                if let Some(port) = self.probe_port {
                                    args.push(format!("--health-probe-bind-address=:{port}"));
                                }
                                (!args.is_empty()).then_some(args)
                            },
                            ports: self.probe_port.map(|port| {
                                vec![ContainerPort {
                                    name: Some("healthz".into()),
                                    container_port: port,
                                    ..Default::default()
                                }]
                            }),
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
    /// into).
    pub fn objects(&self) -> serde_json::Result<Vec<serde_json::Value>> {
        let mut out: Vec<serde_json::Value> = Vec::new();
        for crd in &self.crds {
            out.push(typed(crd)?);
        }
        if let Some(namespace) = self.namespace_object() {
            out.push(typed(&namespace)?);
        }
        out.push(typed(&self.service_account())?);
        out.push(typed(&self.cluster_role())?);
        out.push(typed(&self.cluster_role_binding())?);
        out.push(typed(&self.deployment())?);
        Ok(out)
    }

    /// Every object as one YAML stream (documents separated by `---`), ready for `kubectl apply -f -`.
    pub fn to_yaml(&self) -> Result<String, serde_yaml::Error> {
        let objects = self
            .objects()
            .map_err(<serde_yaml::Error as serde::ser::Error>::custom)?;
        let mut out = String::new();
        for object in objects {
            out.push_str("---\n");
            out.push_str(&serde_yaml::to_string(&object)?);
        }
        Ok(out)
    }
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
    if let serde_json::Value::Object(fields) = serde_json::to_value(object)? {
        for (k, v) in fields {
            if k != "apiVersion" && k != "kind" {
                map.insert(k, v);
            }
        }
    }
    Ok(serde_json::Value::Object(map))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
    use k8s_openapi::api::rbac::v1::ClusterRole;

    fn verbs(rules: &[PolicyRule], group: &str, resource: &str) -> Vec<String> {
        rules
            .iter()
            .find(|r| {
                r.api_groups.as_deref() == Some(&[group.to_string()])
                    && r.resources.as_deref() == Some(&[resource.to_string()])
            })
            .map(|r| r.verbs.clone())
            .unwrap_or_default()
    }

    fn wiring(finalizer: bool) -> Wiring {
        let mut w = Wiring::default();
        w.owns::<Deployment>();
        w.tracks::<ConfigMap>();
        w.watches::<Secret>();
        if finalizer {
            w.finalizer("example.dev/cleanup");
        }
        w
    }

    // A cluster-scoped built-in stands in for a parent kind: only its group and plural matter here.
    type Parent = ClusterRole;

    #[test]
    fn each_role_gets_exactly_its_verbs() {
        let rules = rules::<Parent>(&wiring(false));
        let g = "rbac.authorization.k8s.io";
        assert_eq!(verbs(&rules, g, "clusterroles"), PARENT_VERBS);
        assert_eq!(verbs(&rules, g, "clusterroles/status"), STATUS_VERBS);
        assert_eq!(verbs(&rules, "apps", "deployments"), OWNED_VERBS);
        assert_eq!(verbs(&rules, "", "configmaps"), READ_VERBS);
        assert_eq!(verbs(&rules, "", "secrets"), READ_VERBS);
        assert_eq!(verbs(&rules, "events.k8s.io", "events"), EVENT_VERBS);
        assert_eq!(rules.len(), 6, "nothing else: {rules:#?}");
    }

    #[test]
    fn a_finalizer_lets_the_operator_patch_its_parents() {
        let rules = rules::<Parent>(&wiring(true));
        assert_eq!(
            verbs(&rules, "rbac.authorization.k8s.io", "clusterroles"),
            ["get", "list", "watch", "patch", "update"]
        );
    }

    #[test]
    fn a_kind_both_owned_and_watched_is_owned() {
        let mut w = Wiring::default();
        w.watches::<Namespace>();
        w.owns::<Namespace>();
        assert_eq!(verbs(&rules::<Parent>(&w), "", "namespaces"), OWNED_VERBS);
    }

    #[test]
    fn owned_role_bindings_need_bind_on_the_roles_they_name() {
        use k8s_openapi::api::rbac::v1::{ClusterRoleBinding, RoleBinding};
        let mut w = Wiring::default();
        w.owns::<RoleBinding>();
        let derived = rules::<Namespace>(&w);
        assert_eq!(verbs(&derived, RBAC_GROUP, "roles"), BIND_VERBS);
        assert_eq!(verbs(&derived, RBAC_GROUP, "clusterroles"), BIND_VERBS);
        let mut w = Wiring::default();
        w.owns::<ClusterRoleBinding>();
        let derived = rules::<Namespace>(&w);
        assert!(verbs(&derived, RBAC_GROUP, "roles").is_empty());
        assert_eq!(verbs(&derived, RBAC_GROUP, "clusterroles"), BIND_VERBS);
        // A RoleBinding only read grants no bind.
        let mut w = Wiring::default();
        w.tracks::<RoleBinding>();
        assert!(verbs(&rules::<Namespace>(&w), RBAC_GROUP, "clusterroles").is_empty());
    }

    #[test]
    fn bind_can_be_narrowed_to_named_roles_and_rules_added() {
        use k8s_openapi::api::rbac::v1::RoleBinding;
        let mut w = Wiring::default();
        w.owns::<RoleBinding>();
        let mut m = Manifests::new("op");
        m.rules.merge(&rules::<Namespace>(&w));
        let m = m.bind_only([("ClusterRole", "admin")]).rule(PolicyRule {
            api_groups: Some(vec!["".into()]),
            resources: Some(vec!["nodes".into()]),
            verbs: vec!["list".into()],
            ..Default::default()
        });
        let rules = m.rules();
        let binds: Vec<&PolicyRule> = rules
            .iter()
            .filter(|r| r.verbs.contains(&"bind".to_string()))
            .collect();
        assert_eq!(binds.len(), 1, "{rules:#?}");
        assert_eq!(binds[0].resources, Some(vec!["clusterroles".to_string()]));
        assert_eq!(binds[0].resource_names, Some(vec!["admin".to_string()]));
        assert_eq!(verbs(&rules, "", "nodes"), ["list"]);
    }

    #[test]
    fn crd_rules_and_flag_only_when_the_operator_installs_crds() {
        let crd_rules = |m: &Manifests| {
            m.rules()
                .iter()
                .filter(|r| {
                    r.resources
                        .as_ref()
                        .is_some_and(|r| r.contains(&"customresourcedefinitions".to_string()))
                })
                .count()
        };
        let m = Manifests::new("op")
            .namespace("op-system")
            .args(["--in-cluster"]);
        assert_eq!(crd_rules(&m), 0);
        let args = |m: &Manifests| {
            m.deployment()
                .spec
                .into_iter()
                .flat_map(|s| s.template.spec)
                .flat_map(|p| p.containers)
                .flat_map(|c| c.args.unwrap_or_default())
                .collect::<Vec<_>>()
        };
        assert_eq!(args(&m), ["--in-cluster"]);
        let m = m.install_crds(true);
        assert_eq!(crd_rules(&m), 1);
        assert_eq!(args(&m), ["--in-cluster", "--install-crds"]);
        // The Namespace comes before what goes into it.
        let kinds: Vec<String> = m
            .objects()
            .unwrap()
            .iter()
            .map(|o| o["kind"].as_str().unwrap_or_default().to_string())
            .collect();
        assert_eq!(kinds[0], "Namespace");
        assert_eq!(kinds[1], "ServiceAccount");
        assert!(Manifests::new("op").namespace_object().is_none());
        // Restricted: what the Pod Security Standards' `restricted` level asks of every container.
        let pod = m
            .deployment()
            .spec
            .map(|s| s.template)
            .and_then(|t| t.spec)
            .expect("pod");
        let c = &pod.containers[0];
        let sc = c
            .security_context
            .as_ref()
            .expect("container security context");
        assert_eq!(sc.allow_privilege_escalation, Some(false));
        assert_eq!(sc.read_only_root_filesystem, Some(true));
        assert_eq!(
            sc.capabilities.as_ref().and_then(|c| c.drop.clone()),
            Some(vec!["ALL".to_string()])
        );
        let psc = pod.security_context.as_ref().expect("pod security context");
        assert_eq!(psc.run_as_non_root, Some(true));
        assert_eq!(
            psc.seccomp_profile.as_ref().map(|p| p.type_.as_str()),
            Some("RuntimeDefault")
        );
        assert!(
            c.resources
                .as_ref()
                .and_then(|r| r.limits.as_ref())
                .is_some()
        );
    }

    #[test]
    fn leases_only_with_leader_election() {
        let mut m = Manifests::new("op");
        m.rules.merge(&rules::<Parent>(&wiring(false)));
        assert!(verbs(&m.rules(), "coordination.k8s.io", "leases").is_empty());
        let m = m.leader_election(true);
        assert_eq!(
            verbs(&m.rules(), "coordination.k8s.io", "leases"),
            LEASE_VERBS
        );
    }

    #[test]
    fn the_yaml_stream_binds_the_role_to_the_account() {
        let mut m = Manifests::new("webapp-operator")
            .namespace("system")
            .image("img:1");
        m.rules.merge(&rules::<Parent>(&wiring(false)));
        let yaml = m.to_yaml().unwrap();
        let docs: Vec<serde_json::Value> = yaml
            .split("---\n")
            .filter(|d| !d.trim().is_empty())
            .map(|d| serde_yaml::from_str(d).unwrap())
            .collect();
        let kinds: Vec<&str> = docs.iter().map(|d| d["kind"].as_str().unwrap()).collect();
        assert_eq!(
            kinds,
            [
                "Namespace",
                "ServiceAccount",
                "ClusterRole",
                "ClusterRoleBinding",
                "Deployment"
            ]
        );
        assert_eq!(docs[0]["metadata"]["name"], "system");
        assert_eq!(docs[1]["metadata"]["namespace"], "system");
        assert_eq!(docs[3]["roleRef"]["name"], "webapp-operator");
        assert_eq!(docs[3]["subjects"][0]["namespace"], "system");
        let pod = &docs[4]["spec"]["template"]["spec"];
        assert_eq!(pod["serviceAccountName"], "webapp-operator");
        assert_eq!(pod["containers"][0]["image"], "img:1");
        assert_eq!(docs[2]["rules"].as_array().unwrap().len(), 6);
    }
}
