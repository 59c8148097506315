//! The WebApp upgrade from `v1` to `v2` on the embedded cluster (`tests::webapp_upgrade`, also run on
//! kube-apiserver by `tests/envtest/webapp_versions.rs`): the new release serves its conversion webhook over
//! HTTPS, as on a real cluster, and the in-memory server calls it for every request at another version.
//!
//! The in-memory server waits for a conversion webhook's answer on the thread that serves the request, so the
//! new release runs as a process would: on a runtime of its own, a client of the served endpoint.

use kubewright::testing::ApiServer;
use tests::kubectl::{Kubectl, kubectl_binary};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn webapps_written_at_v1_survive_the_upgrade_to_v2_on_the_embedded_cluster() {
    let Some(bin) = kubectl_binary() else {
        return;
    };
    let server = ApiServer::new();
    let serving = server.serve("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    serving.write_kubeconfig(&kubeconfig).unwrap();
    let k = Kubectl {
        bin,
        kubeconfig: kubeconfig.clone(),
    };
    k.ok(&["create", "namespace", "upgrade"]).await;
    let client = server.client();
    tests::webapp_upgrade::upgrade(&k, &client, "upgrade", move |stopped| async move {
        let (done, result) = tokio::sync::oneshot::channel();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            let ran = runtime.block_on(async move {
                let app = examples::webapp_derive::app();
                let cli = app
                    .try_parse_from([
                        "webapp",
                        "--install-crds",
                        "--webhook-bind-address",
                        "127.0.0.1:0",
                    ])
                    .unwrap();
                let client = kubewright::cli::from_kubeconfig(&kubeconfig).await?;
                app.run_on_cluster(
                    client,
                    cli.install_crds,
                    &cli.run,
                    &cli.webhooks,
                    async move {
                        let _ = stopped.await;
                    },
                )
                .await
            });
            let _ = done.send(ran);
        });
        result.await.unwrap()
    })
    .await;
}
