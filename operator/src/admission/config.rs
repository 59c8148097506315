//! The `ValidatingWebhookConfiguration` and `MutatingWebhookConfiguration` that send the API server to the
//! operator's webhooks: one webhook per kind, scoped to its group, version and resource.

use base64::Engine as _;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::{Value, json};

use super::review::{ErasedWebhooks, Hook, operations};

/// What the API server does when a webhook cannot be reached, times out or answers garbage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FailurePolicy {
    /// Refuse the request (the API server's default).
    #[default]
    Fail,
    /// Let the request through as if the webhook allowed it.
    Ignore,
}

impl FailurePolicy {
    fn as_str(self) -> &'static str {
        match self {
            FailurePolicy::Fail => "Fail",
            FailurePolicy::Ignore => "Ignore",
        }
    }
}

/// How the API server reaches the webhook server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClientConfig {
    /// At `https://HOST:PORT` (an operator outside the cluster, or the embedded cluster).
    Url(String),
    /// Through a Service in the cluster.
    Service {
        /// The Service's namespace.
        namespace: String,
        /// The Service's name.
        name: String,
        /// The Service's port.
        port: i32,
    },
}

impl ClientConfig {
    fn to_json(&self, path: &str, ca_bundle: &str) -> Value {
        let ca = base64::engine::general_purpose::STANDARD.encode(ca_bundle);
        match self {
            ClientConfig::Url(base) => json!({
                "url": format!("{}{path}", base.trim_end_matches('/')),
                "caBundle": ca,
            }),
            ClientConfig::Service {
                namespace,
                name,
                port,
            } => json!({
                "service": {"namespace": namespace, "name": name, "port": port, "path": path},
                "caBundle": ca,
            }),
        }
    }
}

/// The path a kind's webhook is served at: `/validate/GROUP/VERSION/PLURAL` (`core` for the core group).
pub(super) fn path(hook: Hook, group: &str, version: &str, plural: &str) -> String {
    let prefix = match hook {
        Hook::Validate => "validate",
        Hook::Mutate => "mutate",
    };
    let group = if group.is_empty() { "core" } else { group };
    format!("/{prefix}/{group}/{version}/{plural}")
}

/// Where the webhooks apply beyond their kinds: every namespace, or those a label selector picks.
#[derive(Debug, Clone, Default)]
pub struct Scope<'a> {
    /// `namespaceSelector` of every webhook (a `LabelSelector`).
    pub namespace_selector: Option<&'a LabelSelector>,
}

/// What the configurations need of one kind's webhooks (its API resource, which webhooks, their policy).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebhookSpec {
    /// API group (empty for the core group).
    pub group: String,
    /// Version.
    pub version: String,
    /// Plural resource name.
    pub plural: String,
    /// Whether the kind lives in namespaces.
    pub namespaced: bool,
    /// A validating webhook, and whether it sees deletes.
    pub validating: Option<bool>,
    /// A mutating webhook.
    pub mutating: bool,
    /// The failure policy.
    pub failure_policy: FailurePolicy,
    /// The timeout.
    pub timeout_seconds: i32,
}

impl WebhookSpec {
    /// The spec of a kind's webhooks.
    pub fn of(w: &dyn ErasedWebhooks) -> Self {
        let (failure_policy, timeout_seconds) = w.policy();
        WebhookSpec {
            group: w.group(),
            version: w.version(),
            plural: w.plural(),
            namespaced: w.namespaced(),
            validating: w.validating(),
            mutating: w.mutating(),
            failure_policy,
            timeout_seconds,
        }
    }
}

fn webhook(
    hook: Hook,
    w: &WebhookSpec,
    client: &ClientConfig,
    ca: &str,
    scope: &Scope<'_>,
) -> Value {
    let (group, version, plural) = (&w.group, &w.version, &w.plural);
    let deletes = w.validating.unwrap_or(false);
    let prefix = match hook {
        Hook::Validate => "validate",
        Hook::Mutate => "default",
    };
    let group_name = if group.is_empty() {
        "core.k8s.io"
    } else {
        group.as_str()
    };
    let mut client_config = client.to_json(&path(hook, group, version, plural), ca);
    if ca.is_empty()
        && let Some(m) = client_config.as_object_mut()
    {
        // Filled in by whoever holds the CA (cert-manager's CA injector).
        m.remove("caBundle");
    }
    let namespace_selector = scope
        .namespace_selector
        .and_then(|s| serde_json::to_value(s).ok())
        .unwrap_or_else(|| json!({}));
    json!({
        "name": format!("{prefix}.{plural}.{group_name}"),
        "clientConfig": client_config,
        "rules": [{
            "apiGroups": [group],
            "apiVersions": [version],
            "resources": [plural],
            "operations": operations(hook, deletes),
            "scope": if w.namespaced { "Namespaced" } else { "Cluster" },
        }],
        "failurePolicy": w.failure_policy.as_str(),
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "timeoutSeconds": w.timeout_seconds,
        "namespaceSelector": namespace_selector,
    })
}

/// The validating configuration named `name` for every kind with validators, `None` when none has; an empty
/// `ca_bundle` leaves `caBundle` out (for an injector to fill).
pub fn validating(
    name: &str,
    hooks: &[WebhookSpec],
    client: &ClientConfig,
    ca_bundle: &str,
    scope: &Scope<'_>,
) -> Option<ValidatingWebhookConfiguration> {
    let webhooks: Vec<Value> = hooks
        .iter()
        .filter(|w| w.validating.is_some())
        .map(|w| webhook(Hook::Validate, w, client, ca_bundle, scope))
        .collect();
    if webhooks.is_empty() {
        return None;
    }
    serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": webhooks,
    }))
    .ok()
}

/// The mutating configuration named `name` for every kind with defaulters, `None` when none has; an empty
/// `ca_bundle` leaves `caBundle` out.
pub fn mutating(
    name: &str,
    hooks: &[WebhookSpec],
    client: &ClientConfig,
    ca_bundle: &str,
    scope: &Scope<'_>,
) -> Option<MutatingWebhookConfiguration> {
    let webhooks: Vec<Value> = hooks
        .iter()
        .filter(|w| w.mutating)
        .map(|w| {
            let mut hook = webhook(Hook::Mutate, w, client, ca_bundle, scope);
            hook["reinvocationPolicy"] = json!("Never");
            hook
        })
        .collect();
    if webhooks.is_empty() {
        return None;
    }
    serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": webhooks,
    }))
    .ok()
}
