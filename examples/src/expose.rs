//! The Expose operator: every `Service` annotated `example.dev/expose: "true"` gets an `Ingress` routing its
//! host to the Service's first port; the Ingress goes when the annotation does. The parent is a built-in kind
//! whose status belongs to Kubernetes, so it is a [`Foreign`] parent: the runtime writes nothing to it, and
//! tells what it would have written as events (a Warning for an annotation it cannot use) and metrics. Its
//! RBAC (from the wiring) reads Services and writes Ingresses, with no access to `services/status`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::{
    HTTPIngressPath, HTTPIngressRuleValue, Ingress, IngressBackend, IngressRule,
    IngressServiceBackend, IngressSpec, ServiceBackendPort,
};
use kube::ResourceExt;
use kubewright::cli::App;
use kubewright::{ChildReconciler, Context, Error, Foreign, Reconciler};

/// The annotation that asks for an Ingress.
pub const EXPOSE: &str = "example.dev/expose";
/// The annotation that names the Ingress's host (default `<service>.<namespace>.example.dev`).
pub const HOST: &str = "example.dev/host";

fn annotation<'a>(svc: &'a Service, key: &str) -> Option<&'a str> {
    svc.metadata
        .annotations
        .as_ref()?
        .get(key)
        .map(String::as_str)
}

/// The Ingress an exposed Service wants: its host to the Service's first port. `None` when the Service is not
/// exposed (the step then deletes an Ingress it made before); an invalid spec when the host is not a DNS
/// name or the Service has no port.
pub fn desired_ingress(
    svc: &Foreign<Service>,
    _: &mut Context,
) -> kubewright::Result<Option<Ingress>> {
    if annotation(svc, EXPOSE) != Some("true") {
        return Ok(None);
    }
    let name = svc.name_any();
    let namespace = svc.namespace().unwrap_or_default();
    let host = match annotation(svc, HOST) {
        Some(host) => host.to_string(),
        None => format!("{name}.{namespace}.example.dev"),
    };
    if !is_dns_name(&host) {
        return Err(Error::invalid_spec(
            "InvalidHost",
            format!("annotation {HOST}: {host:?} is not a DNS name"),
        ));
    }
    let port = svc
        .spec
        .as_ref()
        .and_then(|s| s.ports.as_ref())
        .and_then(|ports| ports.first())
        .ok_or_else(|| Error::invalid_spec("NoPort", "the Service has no port to expose"))?;
    let backend = IngressBackend {
        service: Some(IngressServiceBackend {
            name: name.clone(),
            port: Some(ServiceBackendPort {
                number: Some(port.port),
                ..Default::default()
            }),
        }),
        ..Default::default()
    };
    let mut ingress = Ingress {
        spec: Some(IngressSpec {
            rules: Some(vec![IngressRule {
                host: Some(host),
                http: Some(HTTPIngressRuleValue {
                    paths: vec![HTTPIngressPath {
                        path: Some("/".into()),
                        path_type: "Prefix".into(),
                        backend,
                    }],
                }),
            }]),
            ..Default::default()
        }),
        ..Default::default()
    };
    ingress.metadata.name = Some(name);
    ingress.metadata.labels = Some(BTreeMap::from([(
        "app.kubernetes.io/managed-by".to_string(),
        "expose".to_string(),
    )]));
    Ok(Some(ingress))
}

/// Whether `host` is a lowercase DNS name (RFC 1123 subdomain), as an Ingress's host must be.
fn is_dns_name(host: &str) -> bool {
    !host.is_empty()
        && host.len() <= 253
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

/// The reconciler, written with the runtime alone.
pub fn reconciler() -> Reconciler<Foreign<Service>> {
    Reconciler::new("expose-controller").step(ChildReconciler::new("ingress", desired_ingress))
}

/// The command line: the reconciler, its manifests and a sample Service.
pub fn app() -> App {
    let mut sample = Service::default();
    sample.metadata.name = Some("web".into());
    sample.metadata.namespace = Some("default".into());
    sample.metadata.annotations = Some(BTreeMap::from([(EXPOSE.to_string(), "true".to_string())]));
    sample.spec = Some(k8s_openapi::api::core::v1::ServiceSpec {
        selector: Some(BTreeMap::from([("app".to_string(), "web".to_string())])),
        ports: Some(vec![k8s_openapi::api::core::v1::ServicePort {
            port: 80,
            ..Default::default()
        }]),
        ..Default::default()
    });
    App::new("expose-operator")
        .reconciler(reconciler())
        .sample(sample)
        .kubectl_hint("get services,ingresses")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_must_be_dns_names() {
        assert!(is_dns_name("web.default.example.dev"));
        assert!(!is_dns_name("Web.example.dev"));
        assert!(!is_dns_name("-web.example.dev"));
        assert!(!is_dns_name("web..dev"));
    }
}
