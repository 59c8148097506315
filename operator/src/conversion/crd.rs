//! A CRD's `spec.conversion` pointed at the operator's conversion webhook.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceConversion, CustomResourceDefinition, ServiceReference, WebhookClientConfig,
    WebhookConversion,
};

use crate::admission::ClientConfig;

/// `crd` with `spec.conversion` set to `strategy: Webhook` at `path` of the webhook server that
/// `client_config` reaches, trusted with `ca_bundle` (PEM; empty when something else injects it, as
/// cert-manager's CA injector does in the manifests), asking for ConversionReview `v1`. A CRD with one
/// version is returned unchanged: the API server converts nothing for it.
pub fn webhook_conversion(
    mut crd: CustomResourceDefinition,
    client_config: &ClientConfig,
    path: &str,
    ca_bundle: &str,
) -> CustomResourceDefinition {
    if crd.spec.versions.len() < 2 {
        return crd;
    }
    let ca =
        (!ca_bundle.is_empty()).then(|| k8s_openapi::ByteString(ca_bundle.as_bytes().to_vec()));
    let config = match client_config {
        ClientConfig::Url(base) => WebhookClientConfig {
            url: Some(format!("{}{path}", base.trim_end_matches('/'))),
            ca_bundle: ca,
            service: None,
        },
        ClientConfig::Service {
            namespace,
            name,
            port,
        } => WebhookClientConfig {
            service: Some(ServiceReference {
                namespace: namespace.clone(),
                name: name.clone(),
                path: Some(path.to_string()),
                port: Some(*port),
            }),
            ca_bundle: ca,
            url: None,
        },
    };
    crd.spec.conversion = Some(CustomResourceConversion {
        strategy: "Webhook".into(),
        webhook: Some(WebhookConversion {
            client_config: Some(config),
            conversion_review_versions: vec!["v1".into()],
        }),
    });
    crd
}
