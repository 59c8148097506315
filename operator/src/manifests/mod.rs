//! Installation manifests derived from what reconcilers declare: the CRDs, the operator's Namespace and
//! ServiceAccount, a ClusterRole with exactly the verbs the wiring needs (or, for an operator that watches
//! some namespaces, a Role in each), the bindings, a Deployment running the operator, and a Service for its
//! metrics; with [`Manifests::admission`], the webhooks too (a Service, the webhook configurations, and a
//! cert-manager Issuer and Certificate for the serving certificate).
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
//! | leader election, if on (a Role in the operator's namespace) | `coordination.k8s.io` `leases` | get, create, update |
//! | sharding, if on (the same Role) | `coordination.k8s.io` `leases` | get, list, create, update |
//! | sharding: each parent kind (the assigner's and the hand-over's labels) | `<plural>` | patch |
//!
//! Writing a binding to a role needs `bind` on that role (RBAC's escalation check), unless the operator holds
//! every permission the role grants. Which roles the bindings name is in the desired functions, not the
//! wiring, so the derived `bind` covers every role; narrow it with [`Manifests::bind_only`]. Rules the wiring
//! cannot know (a read through the client, say) are added with [`Manifests::rule`].
//!
//! ```
//! # use kubewright::{Reconciler, manifests::Manifests};
//! # fn demo<P: kubewright::ParentKind>(reconciler: Reconciler<P>) -> Result<(), kubewright::manifests::ManifestsError> {
//! let yaml = Manifests::new("webapp-operator")
//!     .reconciler(&reconciler)
//!     .namespace("webapp-system")
//!     .image("example.dev/webapp-operator:1.0")
//!     .to_yaml()?;
//! # Ok(()) }
//! ```

use k8s_openapi::api::rbac::v1::PolicyRule;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::reconciler::{ParentKind, Reconciler};

mod objects;
mod rules;
#[cfg(test)]
mod tests;
mod webhooks;

pub use objects::ManifestsError;
pub use rules::{
    BIND_VERBS, EVENT_VERBS, FINALIZER_VERBS, LEASE_VERBS, OWNED_VERBS, PARENT_VERBS, READ_VERBS,
    STATUS_VERBS, rules,
};
use rules::{RBAC_GROUP, Rules, scoped_rules};
pub use webhooks::{WEBHOOK_CERT_DIR, WEBHOOK_PORT};

/// Everything needed to install an operator: see the [module documentation](self).
#[derive(Debug, Clone)]
pub struct Manifests {
    name: String,
    namespace: String,
    image: Option<String>,
    args: Vec<String>,
    leader_election: bool,
    /// Sharded with this many replicas, when set.
    sharded: Option<i32>,
    /// Each parent kind: group, plural, namespaced.
    parents: Vec<(String, String, bool)>,
    install_crds: bool,
    probe_port: Option<i32>,
    metrics_port: Option<i32>,
    metrics_secure: bool,
    watch_namespaces: Vec<String>,
    crds: Vec<CustomResourceDefinition>,
    rules: Rules,
    extra: Vec<PolicyRule>,
    bind_only: Option<Vec<(String, String)>>,
    webhooks: Vec<crate::admission::WebhookSpec>,
    /// The CRDs (by name) whose objects the operator's webhook converts, with the path it serves them at.
    conversions: Vec<(String, String)>,
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
            sharded: None,
            parents: Vec::new(),
            install_crds: false,
            probe_port: None,
            metrics_port: None,
            metrics_secure: false,
            watch_namespaces: Vec::new(),
            crds: Vec::new(),
            rules: Rules::default(),
            extra: Vec::new(),
            bind_only: None,
            webhooks: Vec::new(),
            conversions: Vec::new(),
        }
    }

    /// Adds the admission webhooks of a kind: the Deployment serves them (port `webhook`, 9443, with the
    /// certificate cert-manager issues mounted), a Service fronts them, and the validating and mutating
    /// configurations send the API server there. Applying the manifests then needs cert-manager.
    pub fn admission(mut self, hooks: &dyn crate::admission::ErasedWebhooks) -> Self {
        self.webhooks.push(crate::admission::WebhookSpec::of(hooks));
        self
    }

    /// Adds the conversion webhook of a kind with several versions: the Deployment serves it (as it serves
    /// admission webhooks, behind the same Service and certificate), and the kind's CRD gets a
    /// `spec.conversion` sending the API server there, its `caBundle` injected by cert-manager. Applying the
    /// manifests then needs cert-manager.
    pub fn conversion(mut self, conversion: &dyn crate::conversion::ErasedConversion) -> Self {
        self.conversions
            .push((conversion.crd_name(), conversion.path()));
        self
    }

    /// Whether the Deployment serves webhooks (admission or conversion).
    fn serves_webhooks(&self) -> bool {
        !self.webhooks.is_empty() || !self.conversions.is_empty()
    }

    /// Adds the rules a reconciler needs, and its CRD when the parent kind has one.
    pub fn reconciler<P: ParentKind>(mut self, reconciler: &Reconciler<P>) -> Self {
        let status = <P::ParentStatus as crate::ReconcilerStatus>::WRITTEN;
        self.rules
            .merge(&scoped_rules::<P>(&reconciler.wiring(), status));
        self.parents.push((
            P::group(&()).into_owned(),
            P::plural(&()).into_owned(),
            crate::cache::is_namespaced::<P>(),
        ));
        self
    }

    /// Adds a CustomResourceDefinition (`Kind::crd()`), replacing one of the same name.
    pub fn crd(mut self, crd: CustomResourceDefinition) -> Self {
        match self
            .crds
            .iter_mut()
            .find(|c| c.metadata.name == crd.metadata.name)
        {
            Some(same) => *same = crd,
            None => self.crds.push(crd),
        }
        self
    }

    /// The operator's name: its ServiceAccount's, roles' and Deployment's.
    pub fn name(&self) -> &str {
        &self.name
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

    /// Whether the operator elects a leader on a Lease: it runs with `--leader-elect` (the examples' flag,
    /// [`crate::leader`]), and a Role in its namespace (`<name>-leader-election`) lets it use Leases there.
    pub fn leader_election(mut self, on: bool) -> Self {
        self.leader_election = on;
        self
    }

    /// Runs `replicas` replicas sharing the parents ([`crate::sharding`]; they run with `--sharded` instead of
    /// `--leader-elect`): the Role in the operator's namespace also lets them list Leases (the members), and
    /// the ClusterRole lets them patch the parents' labels (assignment and hand-over). `None`: one replica, or
    /// leader election.
    pub fn sharded(mut self, replicas: Option<i32>) -> Self {
        self.sharded = replicas;
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

    /// Serves the metrics with `--metrics-secure` (HTTPS, for the callers the cluster allows): the ClusterRole
    /// may create TokenReviews and SubjectAccessReviews, and a ClusterRole `<name>-metrics-reader` (to bind to
    /// the scraper, e.g. Prometheus' ServiceAccount) may `get` `/metrics`.
    pub fn metrics_secure(mut self, on: bool) -> Self {
        self.metrics_secure = on;
        self
    }

    /// Metrics on `port`: the operator runs with `--metrics-bind-address=:PORT` (the examples' flag, served
    /// by [`crate::metrics`]), the container has a `metrics` port, and a Service `<name>-metrics` exposes it
    /// for Prometheus to scrape.
    pub fn metrics(mut self, port: i32) -> Self {
        self.metrics_port = Some(port);
        self
    }

    /// The operator watches only these namespaces ([`Operator::for_namespaces`](crate::Operator::for_namespaces);
    /// it runs with `--namespace=NS` for each, the examples' flag): the rules on namespaced resources go into a
    /// Role and RoleBinding in each of them instead of the ClusterRole, which keeps only what must be
    /// cluster-wide (cluster-scoped kinds, installing CRDs, [`rule`](Self::rule)s) and is left out when
    /// nothing must. The namespaces themselves must exist.
    pub fn watch_namespaces(
        mut self,
        namespaces: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.watch_namespaces = namespaces.into_iter().map(Into::into).collect();
        self.watch_namespaces.sort();
        self.watch_namespaces.dedup();
        self
    }

    /// Adds a rule the wiring cannot derive, as it is (with its `resourceNames`, if any); it always goes into
    /// the ClusterRole.
    ///
    /// ```
    /// # use k8s_openapi::api::rbac::v1::PolicyRule;
    /// # use kubewright::manifests::Manifests;
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
    /// # use kubewright::manifests::Manifests;
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

    /// The ClusterRole's rules: every rule, or with [`watch_namespaces`](Self::watch_namespaces) those that
    /// need a ClusterRole.
    pub fn rules(&self) -> Vec<PolicyRule> {
        self.split_rules().0
    }

    /// The rules of the Role in each watched namespace (none without
    /// [`watch_namespaces`](Self::watch_namespaces)).
    pub fn namespace_rules(&self) -> Vec<PolicyRule> {
        self.split_rules().1
    }

    /// The leader election Role's rules (none without [`leader_election`](Self::leader_election)).
    pub fn leader_election_rules(&self) -> Vec<PolicyRule> {
        let mut rules = Rules::default();
        if self.leader_election {
            rules.add("coordination.k8s.io", "leases", LEASE_VERBS, true);
        }
        if self.sharded.is_some() {
            rules.add("coordination.k8s.io", "leases", LEASE_VERBS, true);
            rules.add("coordination.k8s.io", "leases", &["list"], true);
        }
        rules.into_rules(|_| true)
    }

    /// (ClusterRole rules, per-namespace Role rules).
    fn split_rules(&self) -> (Vec<PolicyRule>, Vec<PolicyRule>) {
        let mut rules = self.rules.clone();
        if self.sharded.is_some() {
            for (group, plural, namespaced) in &self.parents {
                rules.add(group, plural, &["patch"], *namespaced);
            }
        }
        if self.metrics_secure && self.metrics_port.is_some() {
            rules.add("authentication.k8s.io", "tokenreviews", &["create"], false);
            rules.add(
                "authorization.k8s.io",
                "subjectaccessreviews",
                &["create"],
                false,
            );
        }
        if self.install_crds {
            // A kind with several versions may need its CRD's versions and conversion updated.
            let verbs: &[&str] = if self.conversions.is_empty() {
                &["get", "list", "watch", "create"]
            } else {
                &["get", "list", "watch", "create", "patch"]
            };
            rules.add(
                "apiextensions.k8s.io",
                "customresourcedefinitions",
                verbs,
                false,
            );
        }
        let mut narrowed = Vec::new();
        // Narrowed `bind` rules go where the derived ones were: per namespace for RoleBindings only.
        let narrowed_namespaced = rules.is_namespaced(RBAC_GROUP, "clusterroles");
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
                    narrowed.push(PolicyRule {
                        api_groups: Some(vec![RBAC_GROUP.into()]),
                        resources: Some(vec![resource.into()]),
                        resource_names: Some(names),
                        verbs: BIND_VERBS.iter().map(|v| v.to_string()).collect(),
                        ..Default::default()
                    });
                }
            }
        }
        let scoped = !self.watch_namespaces.is_empty();
        let mut cluster = rules
            .clone()
            .into_rules(|namespaced| !scoped || !namespaced);
        let mut namespaced = if scoped {
            rules.into_rules(|namespaced| namespaced)
        } else {
            Vec::new()
        };
        if scoped && narrowed_namespaced {
            namespaced.extend(narrowed);
        } else {
            cluster.extend(narrowed);
        }
        cluster.extend(self.extra.iter().cloned());
        (cluster, namespaced)
    }
}
