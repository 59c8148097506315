//! The WebApp example's command line driven from outside: it serves the embedded cluster, and kubectl reads,
//! applies and waits on it as on a real cluster.

use std::path::Path;
use std::time::Duration;

use examples::webapp::CONFIG_MAP_NOT_FOUND;
use examples::webapp::cli::{Cli, SAMPLE_CONFIG_MAP, SAMPLE_NAME, run};
use tests::kubectl::{Kubectl, kubectl_binary};
use tokio::sync::oneshot;

async fn wait_for_file(path: &Path) {
    for _ in 0..400 {
        if std::fs::read_to_string(path).is_ok_and(|s| s.contains("current-context")) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{} was never written", path.display());
}

const READY: &str = r#"jsonpath={.status.conditions[?(@.type=="Ready")].status}"#;
const READY_REASON: &str = r#"jsonpath={.status.conditions[?(@.type=="Ready")].reason}"#;
const HASH: &str = r#"jsonpath={.spec.template.metadata.annotations.example\.dev/config-hash}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_runs_the_embedded_cluster_for_kubectl() {
    let Some(bin) = kubectl_binary() else {
        return;
    };
    let _ = tracing_subscriber::fmt()
        .with_env_filter("info")
        .with_test_writer()
        .try_init();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let cli = <Cli as clap::Parser>::try_parse_from([
        "webapp-by-hand",
        "--listen",
        "127.0.0.1:0",
        "--write-kubeconfig",
        kubeconfig.to_str().unwrap(),
    ])
    .unwrap();
    let (stop, stopped) = oneshot::channel::<()>();
    let example = tokio::spawn(run(cli, async move {
        let _ = stopped.await;
    }));
    wait_for_file(&kubeconfig).await;
    let k = Kubectl { bin, kubeconfig };

    // The sample the example installs converges.
    k.wait_for(&["get", "webapp", SAMPLE_NAME, "-o", READY], "True")
        .await;
    k.wait_for(
        &[
            "get",
            "deployment",
            SAMPLE_NAME,
            "-o",
            "jsonpath={.spec.replicas}",
        ],
        "2",
    )
    .await;
    let owner = k
        .ok(&[
            "get",
            "service",
            SAMPLE_NAME,
            "-o",
            "jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}",
        ])
        .await;
    assert_eq!(owner.trim(), format!("WebApp/{SAMPLE_NAME}"));
    let listed = k.ok(&["get", "webapps"]).await;
    assert!(listed.contains(SAMPLE_NAME), "{listed}");

    // The CRD's rule refuses more than 50 replicas at `kubectl apply` (as on a real cluster, see
    // tests/envtest/webapp_rules.rs).
    tests::webapp_rules::kubectl_apply_is_refused_with_the_rule_message(&k, "default", "rules")
        .await;

    // Scale with kubectl.
    k.ok(&[
        "patch",
        "webapp",
        SAMPLE_NAME,
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"scale":{"replicas":3}}}"#,
    ])
    .await;
    k.wait_for(
        &[
            "get",
            "deployment",
            SAMPLE_NAME,
            "-o",
            "jsonpath={.spec.replicas}",
        ],
        "3",
    )
    .await;

    // Edit the ConfigMap: the template's hash changes.
    let before = k.ok(&["get", "deployment", SAMPLE_NAME, "-o", HASH]).await;
    assert!(!before.trim().is_empty());
    k.ok(&[
        "patch",
        "configmap",
        SAMPLE_CONFIG_MAP,
        "--type",
        "merge",
        "-p",
        r#"{"data":{"index.html":"<h1>edited with kubectl</h1>"}}"#,
    ])
    .await;
    let mut changed = false;
    for _ in 0..100 {
        let now = k.ok(&["get", "deployment", SAMPLE_NAME, "-o", HASH]).await;
        if now.trim() != before.trim() && !now.trim().is_empty() {
            changed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(changed, "the config hash never changed");

    // A new WebApp from a manifest, defaults applied by the server.
    k.ok_with(
        &["apply", "-f", "-"],
        Some(
            "apiVersion: example.dev/v1\nkind: WebApp\nmetadata:\n  name: second\nspec:\n  image: busybox:1.36\n",
        ),
    )
    .await;
    k.wait_for(&["get", "webapp", "second", "-o", READY], "True")
        .await;
    k.wait_for(
        &[
            "get",
            "service",
            "second",
            "-o",
            "jsonpath={.spec.ports[0].port}",
        ],
        "8080",
    )
    .await;

    // Invalid input is refused by the server.
    let (ok, _, err) = k
        .run(
            &["apply", "-f", "-"],
            Some(
                "apiVersion: example.dev/v1\nkind: WebApp\nmetadata:\n  name: negative\nspec:\n  image: x\n  replicas: -1\n",
            ),
        )
        .await;
    assert!(!ok, "replicas -1 must be rejected");
    assert!(err.contains("replicas"), "{err}");

    // A missing ConfigMap is reported in the status.
    k.ok(&[
        "patch",
        "webapp",
        "second",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"configMap":"nowhere"}}"#,
    ])
    .await;
    k.wait_for(
        &["get", "webapp", "second", "-o", READY_REASON],
        CONFIG_MAP_NOT_FOUND,
    )
    .await;

    // Deleting the WebApp takes its children with it.
    k.ok(&["delete", "webapp", SAMPLE_NAME]).await;
    k.wait_for(
        &[
            "get",
            "deployments",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ],
        "second",
    )
    .await;

    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(15), example)
        .await
        .expect("the example shuts down in time")
        .unwrap()
        .unwrap();
}

/// Polling on top of the shared kubectl helper.
trait WaitFor {
    async fn wait_for(&self, args: &[&str], want: &str);
}

impl WaitFor for Kubectl {
    /// Polls `kubectl get ... -o jsonpath=...` until it prints `want`.
    async fn wait_for(&self, args: &[&str], want: &str) {
        let mut last = String::new();
        for _ in 0..100 {
            let (ok, out, err) = self.run(args, None).await;
            if ok && out.trim() == want {
                return;
            }
            last = format!("{out}{err}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!(
            "kubectl {} never printed {want:?}; last: {last}",
            args.join(" ")
        );
    }
}
