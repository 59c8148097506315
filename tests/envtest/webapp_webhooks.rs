//! The WebApp admission webhooks on the real kube-apiserver: the operator's webhook server (generated
//! certificates, `https://127.0.0.1:PORT`) is installed as validating and mutating configurations scoped to
//! the test's namespace, and kubectl meets it (`tests::webapp_webhooks`).

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::CustomResourceExt;
use kube::api::{Api, DeleteParams};
use kubewright::admission::{Certificates, ClientConfig, WebhookServer};
use kubewright::testing::envtest::ControlPlane;

#[tokio::test]
async fn kubectl_apply_meets_the_operators_webhooks_on_kube_apiserver() {
    let Some(cp) = ControlPlane::shared_or_skip("the WebApp webhooks on kube-apiserver").await
    else {
        return;
    };
    let Some(bin) = tests::kubectl::kubectl_binary() else {
        return;
    };
    cp.install_crds([examples::webapp::WebApp::crd()])
        .await
        .unwrap();
    let ns = cp.namespace().await.unwrap();
    let client = cp.client().unwrap();
    let selector = LabelSelector {
        match_labels: Some([("kubernetes.io/metadata.name".to_string(), ns.clone())].into()),
        ..Default::default()
    };
    let server = WebhookServer::new(Certificates::generate(["127.0.0.1"]).unwrap())
        .kind(tests::webapp_webhooks::test_webhooks())
        .namespace_selector(selector);
    let bound = server
        .clone()
        .bind("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let url = format!("https://127.0.0.1:{}", bound.local_addr().port());
    let serving = tokio::spawn(bound.serve());
    let name = format!("webapp-webhooks-{ns}");
    server
        .install(&client, &name, &ClientConfig::Url(url), "webhook-test")
        .await
        .unwrap();

    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    cp.write_kubeconfig(&kubeconfig).unwrap();
    let k = tests::kubectl::Kubectl { bin, kubeconfig };
    tests::webapp_webhooks::kubectl_apply_meets_the_webhooks(&k, &ns, "hooks", true).await;

    let dp = DeleteParams::default();
    let _ = Api::<ValidatingWebhookConfiguration>::all(client.clone())
        .delete(&name, &dp)
        .await;
    let _ = Api::<MutatingWebhookConfiguration>::all(client)
        .delete(&name, &dp)
        .await;
    serving.abort();
}

/// The manifests of a deployed operator with webhooks (`manifests --webhooks`) are accepted by kube-apiserver
/// (a server-side dry run; cert-manager's Issuer and Certificate kinds are stubbed by CRDs that keep every
/// field, as the test control plane has no cert-manager and runs no pods).
#[tokio::test]
async fn the_manifests_with_webhooks_are_accepted_by_kube_apiserver() {
    let Some(cp) = ControlPlane::shared_or_skip("the webhook manifests on kube-apiserver").await
    else {
        return;
    };
    let Some(bin) = tests::kubectl::kubectl_binary() else {
        return;
    };
    let stub = |kind: &str, plural: &str| -> k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition {
        serde_json::from_value(serde_json::json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": format!("{plural}.cert-manager.io")},
            "spec": {
                "group": "cert-manager.io",
                "names": {"kind": kind, "plural": plural},
                "scope": "Namespaced",
                "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                    "type": "object", "x-kubernetes-preserve-unknown-fields": true}}}],
            },
        }))
        .unwrap()
    };
    cp.install_crds([
        stub("Issuer", "issuers"),
        stub("Certificate", "certificates"),
    ])
    .await
    .unwrap();
    let ns = cp.namespace().await.unwrap();
    let hooks = examples::webapp_derive::WebApp::webhooks();
    let yaml = examples::webapp_derive::app()
        .installation()
        .namespace(ns.clone())
        .admission(&hooks)
        .to_yaml()
        .unwrap();
    for kind in [
        "kind: Certificate",
        "kind: Issuer",
        "kind: ValidatingWebhookConfiguration",
        "name: webhook",
    ] {
        assert!(yaml.contains(kind), "the manifests lack {kind}");
    }
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    cp.write_kubeconfig(&kubeconfig).unwrap();
    let k = tests::kubectl::Kubectl { bin, kubeconfig };
    let out = k
        .ok_with(
            // The shared control plane's WebApp CRD is the other tests' (`v2` alone, applied by `envtest`): the
            // manifests' CRD, with both versions and the conversion webhook, takes its versions over in this dry run.
            &[
                "apply",
                "--server-side",
                "--force-conflicts",
                "--dry-run=server",
                "-f",
                "-",
            ],
            Some(&yaml),
        )
        .await;
    assert!(
        out.contains("validatingwebhookconfiguration.admissionregistration.k8s.io/webapp-operator serverside-applied (server dry run)"),
        "{out}"
    );
    assert!(
        out.contains("certificate.cert-manager.io/webapp-operator-webhook serverside-applied"),
        "{out}"
    );
}
