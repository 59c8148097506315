//! A kind with two versions on the real kube-apiserver, as an upgrade meets it: a Note stored while the CRD
//! had only `v1`; the operator's new version installs the merged CRD (`v2` stored) pointed at its conversion
//! webhook (`--install-crds --webhook-bind-address`); kubectl reads and writes Notes at both versions
//! (`tests::notes_scenario`); and `migrate` moves the old Note to `v2` and drops `v1` from
//! `status.storedVersions`, then finds nothing to do the second time.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;
use kube::api::{Api, PostParams};
use kubewright::testing::envtest::ControlPlane;

#[tokio::test]
async fn kubectl_reads_and_writes_both_versions_through_the_operators_conversion_webhook() {
    let Some(cp) = ControlPlane::shared_or_skip("conversion webhooks on kube-apiserver").await
    else {
        return;
    };
    let Some(bin) = tests::kubectl::kubectl_binary() else {
        return;
    };
    let ns = cp.namespace().await.unwrap();
    let client = cp.client().unwrap();
    // Before the upgrade: v1 alone, and a Note stored at v1, in a namespace the operator does not watch (its
    // status writes would store the Note again, at v2).
    let unwatched = cp.namespace().await.unwrap();
    cp.install_crds([examples::notes::v1::Note::crd()])
        .await
        .unwrap();
    let old =
        examples::notes::v1::Note::new("old", examples::notes::v1::NoteSpec { text: "tea".into() });
    Api::<examples::notes::v1::Note>::namespaced(client.clone(), &unwatched)
        .create(&PostParams::default(), &old)
        .await
        .unwrap();

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

    // The old Note reads at v2 through the webhook.
    let (ok, out, err) = k
        .run(
            &[
                "get",
                "notes.v2.versions.example.dev",
                "old",
                "-n",
                &unwatched,
                "-o",
                "jsonpath={.spec.lines}",
            ],
            None,
        )
        .await;
    assert!(ok, "{err}");
    assert_eq!(out, r#"["tea"]"#);

    // Migration: the Note stored at v1 is written again, v1 leaves storedVersions.
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let stored = async || -> Vec<String> {
        crds.get("notes.versions.example.dev")
            .await
            .unwrap()
            .status
            .and_then(|s| s.stored_versions)
            .unwrap_or_default()
    };
    assert_eq!(stored().await, ["v1", "v2"]);
    let first = kubewright::conversion::migrate(&client, "notes.versions.example.dev")
        .await
        .unwrap();
    assert_eq!(
        (first.objects, first.rewritten, first.storage.as_str()),
        (2, 1, "v2"),
        "{first:?}"
    );
    assert_eq!(first.stored_before, ["v1", "v2"]);
    assert_eq!(stored().await, ["v2"]);
    // The subcommand, a second time: nothing left to rewrite.
    let second = kubewright::conversion::migrate(&client, "notes.versions.example.dev")
        .await
        .unwrap();
    assert_eq!((second.objects, second.rewritten), (2, 0), "{second:?}");
    let migrate = examples::notes::app();
    let cli = migrate
        .try_parse_from([
            "note-operator",
            "--kubeconfig",
            k.kubeconfig.to_str().unwrap(),
            "migrate",
        ])
        .unwrap();
    migrate.run_with(cli, std::future::pending()).await.unwrap();
    assert_eq!(stored().await, ["v2"]);

    let _ = stop.send(());
    running.await.unwrap().unwrap();
}
