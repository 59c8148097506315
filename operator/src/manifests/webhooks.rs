//! The admission webhooks of an operator deployed in the cluster: a Service in front of the operator's
//! webhook port, the webhook configurations that send the API server there, and the serving certificate,
//! issued by cert-manager (a self-signed Issuer and a Certificate whose CA cert-manager's CA injector writes
//! into the configurations' `caBundle`). Printed only when [`Manifests::admission`] declared webhooks;
//! applying them needs cert-manager in the cluster.

use k8s_openapi::api::core::v1::{
    SecretVolumeSource, Service, ServicePort, ServiceSpec, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::{Value, json};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use super::Manifests;
use crate::admission::{self, ClientConfig, Scope};
use crate::conversion;

/// cert-manager's CA injector annotation.
const INJECT_CA: &str = "cert-manager.io/inject-ca-from";

/// The container port the webhooks are served on.
pub const WEBHOOK_PORT: i32 = 9443;

/// Where the serving certificate's Secret is mounted (`--webhook-cert-dir`).
pub const WEBHOOK_CERT_DIR: &str = "/tmp/k8s-webhook-server/serving-certs";

impl Manifests {
    fn webhook_name(&self) -> String {
        format!("{}-webhook", self.name)
    }

    fn webhook_secret(&self) -> String {
        format!("{}-webhook-cert", self.name)
    }

    /// The Service in front of the webhook port (`<name>-webhook`, port 443), when webhooks are declared.
    pub fn webhook_service(&self) -> Option<Service> {
        if !self.serves_webhooks() {
            return None;
        }
        Some(Service {
            metadata: self.meta_in(&self.webhook_name(), &self.namespace),
            spec: Some(ServiceSpec {
                selector: Some(self.labels()),
                ports: Some(vec![ServicePort {
                    name: Some("webhook".into()),
                    port: 443,
                    target_port: Some(IntOrString::String("webhook".into())),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            ..Default::default()
        })
    }

    /// The CRDs, those of kinds with a conversion webhook pointing at the webhook Service with cert-manager's
    /// `inject-ca-from` annotation for their `caBundle`.
    pub fn served_crds(&self) -> Vec<CustomResourceDefinition> {
        let service = self.webhook_client_config();
        self.crds
            .iter()
            .map(|crd| {
                let name = crd.metadata.name.clone().unwrap_or_default();
                match self.conversions.iter().find(|(n, _)| *n == name) {
                    Some((_, path)) => {
                        let mut crd =
                            conversion::webhook_conversion(crd.clone(), &service, path, "");
                        crd.metadata
                            .annotations
                            .get_or_insert_with(Default::default)
                            .insert(INJECT_CA.into(), self.certificate_ref());
                        crd
                    }
                    None => crd.clone(),
                }
            })
            .collect()
    }

    fn webhook_client_config(&self) -> ClientConfig {
        ClientConfig::Service {
            namespace: self.namespace.clone(),
            name: self.webhook_name(),
            port: 443,
        }
    }

    /// `NAMESPACE/NAME` of the serving Certificate.
    fn certificate_ref(&self) -> String {
        format!("{}/{}", self.namespace, self.webhook_name())
    }

    /// The validating and mutating configurations (named `<name>`), sending the API server to the webhook
    /// Service, with cert-manager's `inject-ca-from` annotation for their `caBundle`.
    pub fn webhook_configurations(&self) -> serde_json::Result<Vec<Value>> {
        let service = self.webhook_client_config();
        let scope = Scope::default();
        let inject = json!({ INJECT_CA: self.certificate_ref() });
        let mut out = Vec::new();
        if let Some(v) = admission::validating(&self.name, &self.webhooks, &service, "", &scope) {
            out.push(serde_json::to_value(v)?);
        }
        if let Some(m) = admission::mutating(&self.name, &self.webhooks, &service, "", &scope) {
            out.push(serde_json::to_value(m)?);
        }
        for o in &mut out {
            o["metadata"]["labels"] = serde_json::to_value(self.labels())?;
            o["metadata"]["annotations"] = inject.clone();
        }
        Ok(out)
    }

    /// cert-manager's self-signed Issuer and the Certificate for the webhook Service's names, stored in the
    /// Secret the Deployment mounts.
    pub fn webhook_certificate(&self) -> Vec<Value> {
        if !self.serves_webhooks() {
            return Vec::new();
        }
        let issuer = format!("{}-selfsigned", self.name);
        let service = self.webhook_name();
        let ns = &self.namespace;
        let labels = self.labels();
        vec![
            json!({
                "apiVersion": "cert-manager.io/v1",
                "kind": "Issuer",
                "metadata": {"name": issuer, "namespace": ns, "labels": labels},
                "spec": {"selfSigned": {}},
            }),
            json!({
                "apiVersion": "cert-manager.io/v1",
                "kind": "Certificate",
                "metadata": {"name": service, "namespace": ns, "labels": labels},
                "spec": {
                    "secretName": self.webhook_secret(),
                    "dnsNames": [format!("{service}.{ns}.svc"), format!("{service}.{ns}.svc.cluster.local")],
                    "issuerRef": {"name": issuer, "kind": "Issuer"},
                },
            }),
        ]
    }

    /// The flags that make the operator serve its webhooks in the pod.
    pub(super) fn webhook_args(&self) -> Vec<String> {
        if !self.serves_webhooks() {
            return Vec::new();
        }
        vec![
            format!("--webhook-bind-address=0.0.0.0:{WEBHOOK_PORT}"),
            format!("--webhook-cert-dir={WEBHOOK_CERT_DIR}"),
        ]
    }

    /// The Secret volume and its mount holding the serving certificate.
    pub(super) fn webhook_volume(&self) -> Option<(Volume, VolumeMount)> {
        if !self.serves_webhooks() {
            return None;
        }
        Some((
            Volume {
                name: "webhook-certs".into(),
                secret: Some(SecretVolumeSource {
                    secret_name: Some(self.webhook_secret()),
                    ..Default::default()
                }),
                ..Default::default()
            },
            VolumeMount {
                name: "webhook-certs".into(),
                mount_path: WEBHOOK_CERT_DIR.into(),
                read_only: Some(true),
                ..Default::default()
            },
        ))
    }
}
