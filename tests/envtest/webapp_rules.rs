//! The WebApp CRD's validation rule on the real kube-apiserver, through kubectl: the same check the runtime
//! test makes on the embedded cluster (`tests::webapp_rules`).

use kube::CustomResourceExt;
use kubewright::testing::envtest::ControlPlane;

#[tokio::test]
async fn kubectl_apply_of_too_many_replicas_is_refused_with_the_rule_message() {
    let Some(cp) = ControlPlane::shared_or_skip("the WebApp rule on kube-apiserver").await else {
        return;
    };
    let Some(bin) = tests::kubectl::kubectl_binary() else {
        return;
    };
    cp.install_crds([examples::webapp::WebApp::crd()])
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    cp.write_kubeconfig(&kubeconfig).unwrap();
    let k = tests::kubectl::Kubectl { bin, kubeconfig };
    let ns = cp.namespace().await.unwrap();
    tests::webapp_rules::kubectl_apply_is_refused_with_the_rule_message(&k, &ns, "rules").await;
}
