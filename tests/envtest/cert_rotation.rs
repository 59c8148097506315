//! The webhook server's certificate renewed in place on the real kube-apiserver (`kubewright::admission`
//! reloads `--webhook-cert-dir`): while kube-apiserver keeps sending the WebApp webhooks AdmissionReviews (dry-run
//! creates, one after another), the files are replaced with a new pair from the same CA, then with a pair
//! whose key does not match. No request fails; new TLS connections get the new certificate; the bad pair is
//! refused (counted in `operator_certificate_reloads_total{result="error"}`) and the renewed one keeps serving.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::CustomResourceExt;
use kube::api::{Api, DeleteParams, PostParams};
use kubewright::admission::{Certificates, ClientConfig, WebhookServer};
use kubewright::testing::envtest::ControlPlane;
use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;

/// A CA and a way to issue serving certificates for 127.0.0.1 from it.
struct Ca(CertifiedIssuer<'static, KeyPair>);

impl Ca {
    fn new() -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        Ca(CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap())
    }

    /// A serving certificate and its key (PEM).
    fn issue(&self) -> (String, String) {
        let key = KeyPair::generate().unwrap();
        let cert = CertificateParams::new(vec!["127.0.0.1".to_string()])
            .unwrap()
            .signed_by(&key, &self.0)
            .unwrap();
        (cert.pem(), key.serialize_pem())
    }
}

/// Writes the pair as cert-manager does, each file replaced at once (written aside, then renamed).
fn write_pair(dir: &Path, cert: &str, key: &str) {
    for (name, pem) in [("tls.crt", cert), ("tls.key", key)] {
        let aside = dir.join(format!(".{name}.new"));
        std::fs::write(&aside, pem).unwrap();
        std::fs::rename(&aside, dir.join(name)).unwrap();
    }
}

/// The certificate a new TLS connection to `port` is served (DER), trusting `ca_pem`.
async fn served(port: u16, ca_pem: &str) -> Vec<u8> {
    let tls = crate::support::tls_to_localhost(port, ca_pem).await;
    tls.get_ref().1.peer_certificates().unwrap()[0].to_vec()
}

fn der(pem: &str) -> Vec<u8> {
    CertificateDer::from_pem_slice(pem.as_bytes())
        .unwrap()
        .to_vec()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renewed_certificate_is_served_while_admission_requests_keep_succeeding() {
    let Some(cp) = ControlPlane::shared_or_skip("certificate rotation on kube-apiserver").await
    else {
        return;
    };
    cp.install_crds([examples::webapp::WebApp::crd()])
        .await
        .unwrap();
    let ns = cp.namespace().await.unwrap();
    let client = cp.client().unwrap();
    let ca = Ca::new();
    let dir = tempfile::tempdir().unwrap();
    let (first, first_key) = ca.issue();
    write_pair(dir.path(), &first, &first_key);
    std::fs::write(dir.path().join("ca.crt"), ca.0.pem()).unwrap();

    let selector = LabelSelector {
        match_labels: Some([("kubernetes.io/metadata.name".to_string(), ns.clone())].into()),
        ..Default::default()
    };
    let server = WebhookServer::new(Certificates::from_dir(dir.path()).unwrap())
        .kind(tests::webapp_webhooks::test_webhooks())
        .namespace_selector(selector);
    let bound = server
        .clone()
        .bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let port = bound.local_addr().port();
    let serving = tokio::spawn(bound.serve());
    let name = format!("rotation-{ns}");
    server
        .install(
            &client,
            &name,
            &ClientConfig::Url(format!("https://127.0.0.1:{port}")),
            "rotation-test",
        )
        .await
        .unwrap();
    assert_eq!(served(port, &ca.0.pem()).await, der(&first));

    // Admission requests, one after another, until told to stop.
    let apps: Api<examples::webapp::WebApp> = Api::namespaced(client.clone(), &ns);
    let (stop, sent, failed) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicUsize::new(0)),
        Arc::new(std::sync::Mutex::new(Vec::<String>::new())),
    );
    let traffic = {
        let (stop, sent, failed) = (stop.clone(), sent.clone(), failed.clone());
        let ns = ns.clone();
        tokio::spawn(async move {
            let dry_run = PostParams {
                dry_run: true,
                ..Default::default()
            };
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) {
                let mut app = examples::webapp::sample(&format!("web-{i}"), None);
                app.metadata.namespace = Some(ns.clone());
                if let Err(e) = apps.create(&dry_run, &app).await {
                    failed.lock().unwrap().push(e.to_string());
                }
                sent.fetch_add(1, Ordering::SeqCst);
                i += 1;
            }
        })
    };
    let at_least = |n: usize| {
        let sent = sent.clone();
        async move {
            while sent.load(Ordering::SeqCst) < n {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    };
    at_least(20).await;

    // Renewed: the next handshakes get the new certificate.
    let (second, second_key) = ca.issue();
    write_pair(dir.path(), &second, &second_key);
    tokio::time::sleep(kubewright::admission::CERTIFICATE_CHECK_EVERY + Duration::from_millis(200))
        .await;
    let _ = served(port, &ca.0.pem()).await; // the handshake that looks at the files
    assert_eq!(served(port, &ca.0.pem()).await, der(&second));
    let n = sent.load(Ordering::SeqCst);
    at_least(n + 20).await;

    // A pair whose key is not the certificate's: refused, the renewed one keeps serving.
    let errors_before = reload_errors();
    let (third, _) = ca.issue();
    write_pair(dir.path(), &third, &first_key);
    tokio::time::sleep(kubewright::admission::CERTIFICATE_CHECK_EVERY + Duration::from_millis(200))
        .await;
    let _ = served(port, &ca.0.pem()).await;
    assert_eq!(served(port, &ca.0.pem()).await, der(&second));
    assert_eq!(reload_errors(), errors_before + 1.0);
    let n = sent.load(Ordering::SeqCst);
    at_least(n + 20).await;

    stop.store(true, Ordering::SeqCst);
    traffic.await.unwrap();
    let failed = failed.lock().unwrap().clone();
    assert!(
        failed.is_empty(),
        "{} of {} requests failed, first: {:?}",
        failed.len(),
        sent.load(Ordering::SeqCst),
        failed.iter().take(3).collect::<Vec<_>>()
    );
    eprintln!(
        "{} admission requests, none failed",
        sent.load(Ordering::SeqCst)
    );

    let dp = DeleteParams::default();
    let _ = Api::<ValidatingWebhookConfiguration>::all(client.clone())
        .delete(&name, &dp)
        .await;
    let _ = Api::<MutatingWebhookConfiguration>::all(client)
        .delete(&name, &dp)
        .await;
    serving.abort();
}

/// `operator_certificate_reloads_total{result="error"}` of this process.
fn reload_errors() -> f64 {
    let text = kubewright::metrics::Metrics::global().encode();
    crate::support::sample_value(
        &text,
        r#"operator_certificate_reloads_total{result="error"}"#,
    )
    .unwrap_or(0.0)
}
