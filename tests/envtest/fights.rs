//! A fight over a child's field on kube-apiserver (`tests::fights_scenario`).

use kubewright::testing::envtest::ControlPlane;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_writer_is_reported_and_backed_off_on_kube_apiserver() {
    let Some(cp) =
        ControlPlane::shared_or_skip("a fight over a child's field on kube-apiserver").await
    else {
        return;
    };
    let client = cp.client().unwrap();
    examples::webapp::cli::ensure_crd(&client).await.unwrap();
    let ns = cp.namespace().await.unwrap();
    tests::fights_scenario::a_second_writer_is_reported_and_backed_off(&client, &client, &ns).await;
}
