//! A kind with two versions on the real kube-apiserver: the operator installs the merged CRD pointed at its
//! conversion webhook (`--install-crds --webhook-bind-address`), and kubectl reads and writes the Notes at both
//! versions (`tests::notes_scenario`).

use kubewright::testing::envtest::ControlPlane;

#[tokio::test]
async fn kubectl_reads_and_writes_both_versions_through_the_operators_conversion_webhook() {
    let Some(cp) = ControlPlane::shared_or_skip("conversion webhooks on kube-apiserver").await else {
        return;
    };
    let Some(bin) = tests::kubectl::kubectl_binary() else {
        return;
    };
    let ns = cp.namespace().await.unwrap();
    let client = cp.client().unwrap();
    let app = examples::notes::app();
    let cli = app
        .try_parse_from([
            "note-operator",
            "--install-crds",
            "--namespace",
            &ns,
            "--webhook-bind-address",
            "127.0.0.1:0",
        ])
        .unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let operator_client = client.clone();
    let running = tokio::spawn(async move {
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
    });
    // The CRD is installed by the operator: wait until kubectl can use it at both versions.
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    cp.write_kubeconfig(&kubeconfig).unwrap();
    let k = tests::kubectl::Kubectl { bin, kubeconfig };
    crate::support::eventually("the Note CRD served at v1", async || {
        let (ok, _, _) = k
            .run(&["get", "notes.v1.versions.example.dev", "-n", &ns], None)
            .await;
        ok.then_some(())
    })
    .await;

    tests::notes_scenario::converts_both_ways(&k, &client, &ns).await;

    let _ = stop.send(());
    running.await.unwrap().unwrap();
}
