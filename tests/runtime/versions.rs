//! A kind with two versions on the embedded cluster (`examples::notes`): the operator registers its
//! conversion webhook in-process and installs the merged CRD pointed at it; kubectl reads and writes Notes at
//! both versions as on kube-apiserver (`tests::notes_scenario`, also run by `tests/envtest/versions.rs`).

use std::path::Path;
use std::time::Duration;

use tests::kubectl::{Kubectl, kubectl_binary};

async fn wait_for_file(path: &Path) {
    for _ in 0..400 {
        if std::fs::read_to_string(path).is_ok_and(|s| s.contains("current-context")) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{} was never written", path.display());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_reads_and_writes_both_versions_on_the_embedded_cluster() {
    let Some(bin) = kubectl_binary() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let app = examples::notes::app();
    let cli = app
        .try_parse_from([
            "note-operator",
            "--listen",
            "127.0.0.1:0",
            "--write-kubeconfig",
            kubeconfig.to_str().unwrap(),
        ])
        .unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(app.run_with(cli, async move {
        let _ = stopped.await;
    }));
    wait_for_file(&kubeconfig).await;
    let k = Kubectl {
        bin,
        kubeconfig: kubeconfig.clone(),
    };
    k.ok(&["create", "namespace", "notes"]).await;
    let client = kubewright::cli::from_kubeconfig(&kubeconfig).await.unwrap();
    tests::notes_scenario::converts_both_ways(&k, &client, "notes").await;
    let _ = stop.send(());
    running.await.unwrap().unwrap();
}
