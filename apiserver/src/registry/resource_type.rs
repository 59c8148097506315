//! A kind the server serves ([`ResourceType`]): its names, scope, subresources, checks and schema.

use std::sync::Arc;

use serde_json::Value;

use crate::schema::Schema;

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
    /// `autoscaling/v1` HorizontalPodAutoscalers over `autoscaling/v2` storage.
    HorizontalPodAutoscalerV1,
}

/// Checks and normalizes a built-in object by round-tripping it through its k8s-openapi type.
pub type TypedCheck = fn(Value) -> Result<Value, String>;

/// Where a kind's OpenAPI schema comes from.
#[derive(Clone)]
pub enum OpenApiSource {
    /// A built-in kind: registers its k8s-openapi type's schema (and those it refers to) in the generator and
    /// returns a reference to it.
    Builtin(fn(&mut k8s_openapi::schemars::SchemaGenerator) -> k8s_openapi::schemars::Schema),
    /// A custom resource: its version's `openAPIV3Schema`, as written in the CRD.
    Custom(Arc<Value>),
}

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
    /// Where the schema `/openapi/v3` publishes for this kind comes from, if any.
    pub openapi: Option<OpenApiSource>,
    /// Whether the type was created by a CustomResourceDefinition.
    pub custom: bool,
    /// Additional printer columns from a CRD, in order.
    pub printer_columns: Vec<PrinterColumn>,
    /// Extra field selectors the type supports, mapped to JSON paths.
    pub field_selectors: Vec<(String, String)>,
    /// Whether `deletecollection` is served (kube-apiserver refuses it on namespaces).
    pub delete_collection: bool,
    /// A deprecated CRD version's `Warning` (its `deprecationWarning`, or kube-apiserver's default text).
    pub deprecation_warning: Option<String>,
    /// The CRD's conversion webhook, when its `spec.conversion.strategy` is `Webhook`.
    pub conversion_webhook: Option<Arc<ConversionWebhook>>,
    /// A review kind (`authentication.k8s.io`, `authorization.k8s.io`): created only, answered by
    /// [`crate::auth`] and never stored.
    pub review: bool,
}

/// An in-process webhook: the request path and review in, the answer out (the same type as
/// `kubewright_apiserver::admission::WebhookHandler`).
pub type InProcessHandler = Arc<dyn Fn(&str, &[u8]) -> Vec<u8> + Send + Sync>;

/// The in-process webhooks registered with `ApiServer::serve_webhook`, by Service namespace and name; clones
/// share them.
#[derive(Clone, Default)]
pub struct InProcessHandlers(
    pub Arc<std::sync::Mutex<std::collections::HashMap<(String, String), InProcessHandler>>>,
);

impl std::ops::Deref for InProcessHandlers {
    type Target = std::sync::Mutex<std::collections::HashMap<(String, String), InProcessHandler>>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::fmt::Debug for InProcessHandlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcessHandlers").finish_non_exhaustive()
    }
}

/// A CRD's `spec.conversion.webhook` and the in-process webhooks its `clientConfig.service` may name.
pub struct ConversionWebhook {
    /// `spec.conversion.webhook.clientConfig`.
    pub client_config: Value,
    /// `spec.conversion.webhook.conversionReviewVersions`.
    pub review_versions: Vec<String>,
    /// The server's in-process webhooks.
    pub handlers: InProcessHandlers,
}

impl std::fmt::Debug for ConversionWebhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConversionWebhook")
            .field("client_config", &self.client_config)
            .field("review_versions", &self.review_versions)
            .finish_non_exhaustive()
    }
}

/// One of a CRD version's `additionalPrinterColumns`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrinterColumn {
    /// The column's header, e.g. `Ready`.
    pub name: String,
    /// `string`, `integer`, `number`, `boolean` or `date`.
    pub type_: String,
    /// An OpenAPI format such as `int32` or `byte`, or empty.
    pub format: String,
    /// The column's description, or empty.
    pub description: String,
    /// 0 for the columns `kubectl get` shows, more for those only `-o wide` shows.
    pub priority: i64,
    /// The JSONPath (client-go's dialect) evaluated against each object, e.g. `.status.replicas`.
    pub json_path: String,
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
            openapi: None,
            custom: false,
            printer_columns: Vec::new(),
            field_selectors: Vec::new(),
            delete_collection: true,
            deprecation_warning: None,
            conversion_webhook: None,
            review: false,
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

    /// Adds a category, e.g. `all`.
    pub fn in_category(mut self, category: &str) -> Self {
        self.categories.push(category.to_string());
        self
    }

    pub(super) fn typed(mut self, check: TypedCheck) -> Self {
        self.typed = Some(check);
        self
    }

    pub(super) fn openapi(mut self, source: OpenApiSource) -> Self {
        self.openapi = Some(source);
        self
    }

    /// Marks a review kind: created only, never stored.
    pub(super) fn review(mut self) -> Self {
        self.review = true;
        self.delete_collection = false;
        self
    }

    pub(super) fn without_delete_collection(mut self) -> Self {
        self.delete_collection = false;
        self
    }

    pub(super) fn field_selector(mut self, field: &str, path: &str) -> Self {
        self.field_selectors
            .push((field.to_string(), path.to_string()));
        self
    }

    /// Whether this is the CustomResourceDefinition kind itself.
    pub fn custom_resource_definition(&self) -> bool {
        self.group == "apiextensions.k8s.io" && self.plural == "customresourcedefinitions"
    }

    /// Whether this is the core group's Namespace.
    pub fn is_namespace(&self) -> bool {
        self.group.is_empty() && self.plural == "namespaces"
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
    pub fn target(&self) -> crate::error::Target<'_> {
        crate::error::Target {
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
