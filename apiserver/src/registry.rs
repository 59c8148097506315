//! The kinds the server knows: built-in ones and those registered by CRDs or by the user.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::schema::Schema;

/// Where a `scale` subresource reads and writes its fields (JSON paths without the leading dot).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleSpec {
    /// Path of the desired replicas, e.g. `spec.replicas`.
    pub spec_replicas_path: String,
    /// Path of the observed replicas, e.g. `status.replicas`.
    pub status_replicas_path: String,
    /// Path of the label selector string in status, if any.
    pub label_selector_path: Option<String>,
}

/// How objects of one served version are converted from and to the stored form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Conversion {
    /// Only `apiVersion` differs.
    None,
    /// `events.k8s.io/v1` over `core/v1` Event storage.
    EventsV1,
}

/// Checks and normalizes a built-in object by round-tripping it through its k8s-openapi type.
pub type TypedCheck = fn(Value) -> Result<Value, String>;

/// A kind the server serves: group, version, kind, plural, scope and subresources.
#[derive(Clone)]
pub struct ResourceType {
    /// API group, empty for the core group.
    pub group: String,
    /// The served version.
    pub version: String,
    /// The kind, e.g. `ConfigMap`.
    pub kind: String,
    /// The plural resource name, e.g. `configmaps`.
    pub plural: String,
    /// The singular name, e.g. `configmap`.
    pub singular: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Short names for kubectl, e.g. `cm`.
    pub short_names: Vec<String>,
    /// Categories, e.g. `all`.
    pub categories: Vec<String>,
    /// Whether the type has a `status` subresource.
    pub status_subresource: bool,
    /// The `scale` subresource, if any.
    pub scale: Option<ScaleSpec>,
    /// Whether `metadata.generation` is maintained.
    pub generation: bool,
    /// Whether this version is the preferred one of its group in discovery.
    pub preferred: bool,
    /// Storage shared by every version of the kind: (group, plural) of the stored form.
    pub storage: (String, String),
    /// The storage version (the `apiVersion` stored objects carry).
    pub storage_version: String,
    /// How this version converts to storage.
    pub conversion: Conversion,
    /// Schema enforced on writes (custom resources).
    pub schema: Option<Arc<Schema>>,
    /// Typed check for built-in kinds.
    pub typed: Option<TypedCheck>,
    /// Whether the type was created by a CustomResourceDefinition.
    pub custom: bool,
    /// Additional printer columns from a CRD (name, type, jsonPath).
    pub printer_columns: Vec<(String, String, String)>,
    /// Extra field selectors the type supports, mapped to JSON paths.
    pub field_selectors: Vec<(String, String)>,
}

impl std::fmt::Debug for ResourceType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceType")
            .field("group", &self.group)
            .field("version", &self.version)
            .field("kind", &self.kind)
            .field("plural", &self.plural)
            .field("namespaced", &self.namespaced)
            .finish_non_exhaustive()
    }
}

impl ResourceType {
    /// A new namespaced or cluster-scoped type with no subresources, stored under itself.
    pub fn new(group: &str, version: &str, kind: &str, plural: &str, namespaced: bool) -> Self {
        Self {
            group: group.to_string(),
            version: version.to_string(),
            kind: kind.to_string(),
            plural: plural.to_string(),
            singular: kind.to_lowercase(),
            namespaced,
            short_names: Vec::new(),
            categories: Vec::new(),
            status_subresource: false,
            scale: None,
            generation: false,
            preferred: true,
            storage: (group.to_string(), plural.to_string()),
            storage_version: version.to_string(),
            conversion: Conversion::None,
            schema: None,
            typed: None,
            custom: false,
            printer_columns: Vec::new(),
            field_selectors: Vec::new(),
        }
    }

    /// Adds short names.
    pub fn short_names(mut self, names: &[&str]) -> Self {
        self.short_names = names.iter().map(|s| s.to_string()).collect();
        self
    }

    /// Adds a status subresource.
    pub fn with_status(mut self) -> Self {
        self.status_subresource = true;
        self
    }

    /// Maintains `metadata.generation`.
    pub fn with_generation(mut self) -> Self {
        self.generation = true;
        self
    }

    /// Adds the `scale` subresource at the usual paths.
    pub fn with_scale(mut self, selector: Option<&str>) -> Self {
        self.scale = Some(ScaleSpec {
            spec_replicas_path: "spec.replicas".into(),
            status_replicas_path: "status.replicas".into(),
            label_selector_path: selector.map(str::to_string),
        });
        self
    }

    fn in_category(mut self, category: &str) -> Self {
        self.categories.push(category.to_string());
        self
    }

    fn typed(mut self, check: TypedCheck) -> Self {
        self.typed = Some(check);
        self
    }

    fn field_selector(mut self, field: &str, path: &str) -> Self {
        self.field_selectors
            .push((field.to_string(), path.to_string()));
        self
    }

    /// Whether this is the CustomResourceDefinition kind itself.
    pub fn custom_resource_definition(&self) -> bool {
        self.group == "apiextensions.k8s.io" && self.plural == "customresourcedefinitions"
    }

    /// `v1` or `apps/v1`.
    pub fn api_version(&self) -> String {
        api_version(&self.group, &self.version)
    }

    /// `configmaps` or `deployments.apps`, as used in messages.
    pub fn group_resource(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    /// The target of status messages about this type.
    pub fn target(&self) -> super::error::Target<'_> {
        super::error::Target {
            group: &self.group,
            resource: &self.plural,
        }
    }
}

/// `v1` for the core group, `group/version` otherwise.
pub fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// All served types, by (group, version, plural).
#[derive(Debug, Clone, Default)]
pub struct Registry {
    types: BTreeMap<(String, String, String), Arc<ResourceType>>,
}

impl Registry {
    /// A registry with the built-in kinds.
    pub fn with_builtins() -> Self {
        let mut r = Self::default();
        for t in builtins() {
            r.insert(t);
        }
        r
    }

    /// Adds or replaces a type.
    pub fn insert(&mut self, t: ResourceType) {
        self.types.insert(
            (t.group.clone(), t.version.clone(), t.plural.clone()),
            Arc::new(t),
        );
    }

    /// Removes every version of a group's resource.
    pub fn remove_resource(&mut self, group: &str, plural: &str) {
        self.types
            .retain(|(g, _, p), _| !(g == group && p == plural));
    }

    /// Looks a type up by its URL coordinates.
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceType>> {
        self.types
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
            .cloned()
    }

    /// Looks a type up by group, version and kind.
    pub fn by_kind(&self, group: &str, version: &str, kind: &str) -> Option<Arc<ResourceType>> {
        self.types
            .values()
            .find(|t| t.group == group && t.version == version && t.kind == kind)
            .cloned()
    }

    /// The type that owns storage for (group, plural) in its storage version.
    pub fn storage_type(&self, storage: &(String, String)) -> Option<Arc<ResourceType>> {
        self.types
            .values()
            .find(|t| {
                &t.storage == storage && t.version == t.storage_version && (t.group == storage.0)
            })
            .cloned()
    }

    /// Any type stored under (group, plural), preferring the storage version.
    pub fn find_storage(&self, storage: &(String, String)) -> Option<Arc<ResourceType>> {
        self.storage_type(storage)
            .or_else(|| self.types.values().find(|t| &t.storage == storage).cloned())
    }

    /// Every type.
    pub fn all(&self) -> impl Iterator<Item = &Arc<ResourceType>> {
        self.types.values()
    }

    /// Whether any version of the group is served.
    pub fn has_group_version(&self, group: &str, version: &str) -> bool {
        self.types
            .keys()
            .any(|(g, v, _)| g == group && v == version)
    }
}

macro_rules! typed_check {
    ($vis:vis $name:ident, $ty:ty) => {
        $vis fn $name(v: Value) -> Result<Value, String> {
            fn round_trip(v: Value) -> Result<Value, String> {
                let typed: $ty = serde_json::from_value(v).map_err(|e| e.to_string())?;
                serde_json::to_value(typed).map_err(|e| e.to_string())
            }
            round_trip(v).map(|out| {
                let mut out = crate::omit_empty::omit_empty(out, round_trip);
                crate::quantity::canonicalize::<$ty>(&mut out);
                out
            })
        }
    };
}

mod checks {
    use super::Value;
    use k8s_openapi::api::{apps, batch, coordination, core, networking, policy, rbac};
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiext;

    typed_check!(pub namespace, core::v1::Namespace);
    typed_check!(pub config_map, core::v1::ConfigMap);
    typed_check!(pub secret, core::v1::Secret);
    typed_check!(pub service, core::v1::Service);
    typed_check!(pub service_account, core::v1::ServiceAccount);
    typed_check!(pub pod, core::v1::Pod);
    typed_check!(pub event, core::v1::Event);
    typed_check!(pub endpoints, core::v1::Endpoints);
    typed_check!(pub pvc, core::v1::PersistentVolumeClaim);
    typed_check!(pub node, core::v1::Node);
    typed_check!(pub deployment, apps::v1::Deployment);
    typed_check!(pub stateful_set, apps::v1::StatefulSet);
    typed_check!(pub daemon_set, apps::v1::DaemonSet);
    typed_check!(pub replica_set, apps::v1::ReplicaSet);
    typed_check!(pub job, batch::v1::Job);
    typed_check!(pub cron_job, batch::v1::CronJob);
    typed_check!(pub lease, coordination::v1::Lease);
    typed_check!(pub crd, apiext::CustomResourceDefinition);
    typed_check!(pub role, rbac::v1::Role);
    typed_check!(pub role_binding, rbac::v1::RoleBinding);
    typed_check!(pub cluster_role, rbac::v1::ClusterRole);
    typed_check!(pub cluster_role_binding, rbac::v1::ClusterRoleBinding);
    typed_check!(pub ingress, networking::v1::Ingress);
    typed_check!(pub network_policy, networking::v1::NetworkPolicy);
    typed_check!(pub pdb, policy::v1::PodDisruptionBudget);
    typed_check!(pub events_v1, k8s_openapi::api::events::v1::Event);
}

fn builtins() -> Vec<ResourceType> {
    use ResourceType as T;
    let core_event_fields = [
        ("involvedObject.kind", "involvedObject.kind"),
        ("involvedObject.namespace", "involvedObject.namespace"),
        ("involvedObject.name", "involvedObject.name"),
        ("involvedObject.uid", "involvedObject.uid"),
        ("involvedObject.apiVersion", "involvedObject.apiVersion"),
        (
            "involvedObject.resourceVersion",
            "involvedObject.resourceVersion",
        ),
        ("involvedObject.fieldPath", "involvedObject.fieldPath"),
        ("reason", "reason"),
        ("reportingComponent", "reportingComponent"),
        ("source", "source.component"),
        ("type", "type"),
    ];
    let mut core_events = T::new("", "v1", "Event", "events", true)
        .short_names(&["ev"])
        .typed(checks::event);
    for (f, p) in core_event_fields {
        core_events = core_events.field_selector(f, p);
    }
    let mut events_v1 = T::new("events.k8s.io", "v1", "Event", "events", true)
        .short_names(&["ev"])
        .typed(checks::events_v1);
    events_v1.storage = (String::new(), "events".into());
    events_v1.storage_version = "v1".into();
    events_v1.conversion = Conversion::EventsV1;
    for (f, p) in [
        ("regarding.kind", "involvedObject.kind"),
        ("regarding.namespace", "involvedObject.namespace"),
        ("regarding.name", "involvedObject.name"),
        ("regarding.uid", "involvedObject.uid"),
        ("reason", "reason"),
        ("reportingController", "reportingComponent"),
        ("type", "type"),
    ] {
        events_v1 = events_v1.field_selector(f, p);
    }
    vec![
        T::new("", "v1", "Namespace", "namespaces", false)
            .short_names(&["ns"])
            .with_status()
            .typed(checks::namespace)
            .field_selector("status.phase", "status.phase"),
        T::new("", "v1", "ConfigMap", "configmaps", true)
            .short_names(&["cm"])
            .typed(checks::config_map),
        T::new("", "v1", "Secret", "secrets", true)
            .typed(checks::secret)
            .field_selector("type", "type"),
        T::new("", "v1", "Service", "services", true)
            .short_names(&["svc"])
            .with_status()
            .in_category("all")
            .typed(checks::service),
        T::new("", "v1", "ServiceAccount", "serviceaccounts", true)
            .short_names(&["sa"])
            .typed(checks::service_account),
        T::new("", "v1", "Pod", "pods", true)
            .short_names(&["po"])
            .with_status()
            .with_generation()
            .in_category("all")
            .typed(checks::pod)
            .field_selector("spec.nodeName", "spec.nodeName")
            .field_selector("spec.serviceAccountName", "spec.serviceAccountName")
            .field_selector("status.phase", "status.phase")
            .field_selector("status.podIP", "status.podIP"),
        core_events,
        T::new("", "v1", "Endpoints", "endpoints", true)
            .short_names(&["ep"])
            .typed(checks::endpoints),
        T::new(
            "",
            "v1",
            "PersistentVolumeClaim",
            "persistentvolumeclaims",
            true,
        )
        .short_names(&["pvc"])
        .with_status()
        .typed(checks::pvc),
        T::new("", "v1", "Node", "nodes", false)
            .short_names(&["no"])
            .with_status()
            .typed(checks::node),
        T::new("apps", "v1", "Deployment", "deployments", true)
            .short_names(&["deploy"])
            .with_status()
            .with_generation()
            .with_scale(Some("status.selector"))
            .in_category("all")
            .typed(checks::deployment),
        T::new("apps", "v1", "StatefulSet", "statefulsets", true)
            .short_names(&["sts"])
            .with_status()
            .with_generation()
            .with_scale(Some("status.selector"))
            .in_category("all")
            .typed(checks::stateful_set),
        T::new("apps", "v1", "DaemonSet", "daemonsets", true)
            .short_names(&["ds"])
            .with_status()
            .with_generation()
            .in_category("all")
            .typed(checks::daemon_set),
        T::new("apps", "v1", "ReplicaSet", "replicasets", true)
            .short_names(&["rs"])
            .with_status()
            .with_generation()
            .with_scale(Some("status.selector"))
            .in_category("all")
            .typed(checks::replica_set),
        T::new("batch", "v1", "Job", "jobs", true)
            .with_status()
            .with_generation()
            .in_category("all")
            .typed(checks::job),
        T::new("batch", "v1", "CronJob", "cronjobs", true)
            .short_names(&["cj"])
            .with_status()
            .with_generation()
            .in_category("all")
            .typed(checks::cron_job),
        T::new("coordination.k8s.io", "v1", "Lease", "leases", true).typed(checks::lease),
        events_v1,
        T::new(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
            false,
        )
        .short_names(&["crd", "crds"])
        .with_status()
        .with_generation()
        .typed(checks::crd),
        T::new("rbac.authorization.k8s.io", "v1", "Role", "roles", true).typed(checks::role),
        T::new(
            "rbac.authorization.k8s.io",
            "v1",
            "RoleBinding",
            "rolebindings",
            true,
        )
        .typed(checks::role_binding),
        T::new(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRole",
            "clusterroles",
            false,
        )
        .typed(checks::cluster_role),
        T::new(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRoleBinding",
            "clusterrolebindings",
            false,
        )
        .typed(checks::cluster_role_binding),
        T::new("networking.k8s.io", "v1", "Ingress", "ingresses", true)
            .short_names(&["ing"])
            .with_status()
            .with_generation()
            .typed(checks::ingress),
        T::new(
            "networking.k8s.io",
            "v1",
            "NetworkPolicy",
            "networkpolicies",
            true,
        )
        .short_names(&["netpol"])
        .with_generation()
        .typed(checks::network_policy),
        T::new(
            "policy",
            "v1",
            "PodDisruptionBudget",
            "poddisruptionbudgets",
            true,
        )
        .short_names(&["pdb"])
        .with_status()
        .with_generation()
        .typed(checks::pdb),
    ]
}
