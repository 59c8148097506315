//! The WebApp admission webhooks on the real kube-apiserver: the operator's webhook server (generated
//! certificates, `https://127.0.0.1:PORT`) is installed as validating and mutating configurations scoped to
//! the test's namespace, and kubectl meets it (`tests::webapp_webhooks`).

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::CustomResourceExt;
use kube::api::{Api, DeleteParams};
use operator::admission::{Certificates, ClientConfig, WebhookServer};
use operator::testing::envtest::ControlPlane;

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
