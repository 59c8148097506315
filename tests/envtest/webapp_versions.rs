//! The WebApp upgrade from `v1` to `v2` on a real kube-apiserver (`tests::webapp_upgrade`, also run on the
//! embedded cluster by `tests/runtime/webapp_versions.rs`), on a control plane of its own: the upgrade changes
//! the cluster-wide WebApp CRD, which the other tests share at `v2` alone.

use kubewright::testing::envtest::{ControlPlane, assets_or_skip};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webapps_written_at_v1_survive_the_upgrade_to_v2_on_a_real_apiserver() {
    if assets_or_skip("the WebApp upgrade on a real control plane").is_none() {
        return;
    }
    let Some(bin) = tests::kubectl::kubectl_binary() else {
        return;
    };
    let cp = ControlPlane::builder()
        .name("webapp-upgrade")
        .start()
        .await
        .unwrap();
    let client = cp.client().unwrap();
    let ns = cp.namespace().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    cp.write_kubeconfig(&kubeconfig).unwrap();
    let k = tests::kubectl::Kubectl { bin, kubeconfig };
    let operator_client = client.clone();
    tests::webapp_upgrade::upgrade(&k, &client, &ns, move |stopped| {
        let app = examples::webapp_derive::app();
        let cli = app
            .try_parse_from([
                "webapp",
                "--install-crds",
                "--webhook-bind-address",
                "127.0.0.1:0",
            ])
            .unwrap();
        async move {
            app.run_on_cluster(
                operator_client,
                cli.install_crds,
                &cli.run,
                &cli.webhooks,
                async move {
                    let _ = stopped.await;
                },
            )
            .await
        }
    })
    .await;
}
