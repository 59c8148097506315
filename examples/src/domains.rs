//! The Domain operator: every `Domain` gets a cert-manager `Certificate` for its host, and is `Ready` when the
//! Certificate is. The operator has no Rust type for the Certificate: it names cert-manager's kind by group,
//! version and kind only ([`kubewright::kind!`], [`Untyped`]), and the runtime takes its readiness from its
//! `Ready` condition for its current generation, as most custom resources report it
//! ([`kubewright::readiness::conventional`]).

use kubewright::prelude::*;
use kubewright::untyped::Untyped;
use serde_json::json;

kubewright::kind! {
    /// cert-manager's `Certificate` (`cert-manager.io/v1`).
    pub CertificateKind = "cert-manager.io/v1", "Certificate", "certificates", Namespaced
}

/// A cert-manager Certificate, untyped.
pub type Certificate = Untyped<CertificateKind>;

/// A domain the operator gets a certificate for.
#[derive(
    CustomResource, Reconciler, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema,
)]
#[kube(
    group = "example.dev",
    version = "v1",
    kind = "Domain",
    namespaced,
    status = "DomainStatus",
    printcolumn = r#"{"name":"Host","type":"string","jsonPath":".spec.host"}"#,
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#
)]
#[child(Certificate, desired = desired_certificate, reflect_name = certificate)]
#[serde(rename_all = "camelCase")]
pub struct DomainSpec {
    /// The host name the certificate is for.
    pub host: String,
    /// The cert-manager issuer to ask (a ClusterIssuer), default `letsencrypt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
}

/// What the operator observed of a Domain.
#[derive(
    Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, ReconcilerStatus,
)]
#[serde(rename_all = "camelCase", default)]
pub struct DomainStatus {
    /// The generation of the spec this status describes.
    pub observed_generation: Option<i64>,
    /// `Ready`, from `CertificateReady`: the Certificate's own `Ready` condition.
    pub conditions: Vec<Condition>,
    /// The name of the Certificate.
    pub certificate: Option<String>,
}

/// The Certificate a Domain wants: its host, in a Secret `<domain>-tls`, from the issuer it names.
pub fn desired_certificate(
    domain: &Domain,
    _: &mut Context,
) -> kubewright::Result<Option<Certificate>> {
    let name = domain.name_any();
    let issuer = domain.spec.issuer.as_deref().unwrap_or("letsencrypt");
    Ok(Some(Certificate::new(
        &name,
        json!({
            "spec": {
                "secretName": format!("{name}-tls"),
                "dnsNames": [domain.spec.host],
                "issuerRef": {"name": issuer, "kind": "ClusterIssuer"},
            }
        }),
    )))
}

/// The part of cert-manager's Certificate CRD this operator relies on (its kind, with a status subresource):
/// what the tests install, where a cluster has cert-manager's own.
pub fn certificate_crd()
-> k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "certificates.cert-manager.io"},
        "spec": {
            "group": "cert-manager.io",
            "names": {"kind": "Certificate", "listKind": "CertificateList", "plural": "certificates", "singular": "certificate"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1",
                "served": true,
                "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    },
                }},
            }],
        },
    }))
    .expect("a CustomResourceDefinition")
}

/// On the embedded cluster, where no cert-manager runs, plays its part: each Certificate is reported `Ready`
/// for its current generation, a moment after it changes. A real cluster's cert-manager does this itself.
pub fn play_cert_manager(client: kube::Client) -> futures::future::BoxFuture<'static, ()> {
    use futures::{FutureExt, StreamExt};
    use kube::api::{Api, Patch, PatchParams};
    use kube::runtime::{WatchStreamExt, watcher};
    async move {
        let certs: Api<Certificate> = Api::all(client.clone());
        let mut changes = std::pin::pin!(watcher(certs, watcher::Config::default()).applied_objects());
        while let Some(change) = changes.next().await {
            let Ok(cert) = change else { continue };
            let generation = cert.metadata.generation;
            let observed = cert
                .data
                .get("status")
                .and_then(|s| s["conditions"].as_array())
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Ready" && c["observedGeneration"].as_i64() == generation);
            if observed {
                continue;
            }
            let (Some(ns), Some(name)) = (cert.namespace(), cert.metadata.name.clone()) else {
                continue;
            };
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            let status = json!({"status": {"conditions": [{
                "type": "Ready", "status": "True", "reason": "Ready",
                "message": "issued by the embedded cluster's stand-in for cert-manager",
                "observedGeneration": generation,
                "lastTransitionTime": k8s_openapi::jiff::Timestamp::now().to_string(),
            }]}});
            let api: Api<Certificate> = Api::namespaced(client.clone(), &ns);
            match api
                .patch_status(&name, &PatchParams::default(), &Patch::Merge(&status))
                .await
            {
                Ok(_) => tracing::info!(%ns, %name, "stand-in cert-manager: Certificate issued"),
                Err(e) => tracing::warn!(%ns, %name, error = %e, "stand-in cert-manager: cannot write status"),
            }
        }
    }
    .boxed()
}

/// The command line: the Domain reconciler and CRD, a sample Domain; on the embedded cluster, the minimal
/// Certificate CRD and a stand-in for cert-manager that issues every Certificate.
pub fn app() -> kubewright::cli::App {
    let sample = Domain::new(
        "shop",
        DomainSpec {
            host: "shop.example.dev".into(),
            issuer: None,
        },
    );
    kubewright::cli::App::new("domain-operator")
        .operate::<Domain>()
        .embedded_crd(certificate_crd())
        .observe(play_cert_manager)
        .sample(sample)
        .kubectl_hint("get domains,certificates.cert-manager.io")
}
