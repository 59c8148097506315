//! The WebApp upgrade from `v1` to `v2` on the embedded cluster (`tests::webapp_upgrade`, also run on
//! kube-apiserver by `tests/envtest/webapp_versions.rs`): the new release serves its conversion webhook over
//! HTTPS, as on a real cluster, and the in-memory server calls it for every request at another version.

use kubewright::testing::ApiServer;
use tests::kubectl::{Kubectl, kubectl_binary};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webapps_written_at_v1_survive_the_upgrade_to_v2_on_the_embedded_cluster() {
    let Some(bin) = kubectl_binary() else {
        return;
    };
    let server = ApiServer::new();
    let serving = server.serve("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    serving.write_kubeconfig(&kubeconfig).unwrap();
    let k = Kubectl { bin, kubeconfig };
    k.ok(&["create", "namespace", "upgrade"]).await;
    let client = server.client();
    let operator_client = client.clone();
    tests::webapp_upgrade::upgrade(&k, &client, "upgrade", move |stopped| {
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
