//! kubectl against the served endpoint: the outside client that proves the server behaves like Kubernetes.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use kube::CustomResourceExt;
use kubewright::testing::ApiServer;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

use crate::crd::WebApp;
use tests::kubectl::{Kubectl, kubectl_binary};

fn write(dir: &Path, name: &str, content: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, content).unwrap();
    p
}

const DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    app: web
spec:
  replicas: 1
  selector:
    matchLabels:
      app: web
  template:
    metadata:
      labels:
        app: web
    spec:
      containers:
      - name: app
        image: nginx:1.27
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_works_against_the_served_endpoint() {
    let Some(bin) = kubectl_binary() else { return };
    let server = ApiServer::new();
    let serving = server.serve("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    serving.write_kubeconfig(&kubeconfig).unwrap();
    // kube::Config accepts the same kubeconfig.
    let kc = kube::config::Kubeconfig::read_from(&kubeconfig).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    let client = kube::Client::try_from(config).unwrap();
    let version = client.apiserver_version().await.unwrap();
    assert_eq!(version.major, "1");
    let k = Kubectl { bin, kubeconfig };

    let out = k.ok(&["get", "namespaces", "-o", "name"]).await;
    assert!(out.contains("namespace/default"), "{out}");
    let out = k.ok(&["get", "namespaces"]).await;
    assert!(out.contains("NAME") && out.contains("kube-system"), "{out}");

    // Typed generators send protobuf, which the server decodes for the kinds they create.
    k.ok(&["create", "configmap", "generated", "--from-literal=a=b"])
        .await;
    let out = k
        .ok(&["get", "configmap", "generated", "-o", "jsonpath={.data.a}"])
        .await;
    assert_eq!(out, "b");
    k.ok(&["delete", "configmap", "generated"]).await;
    // They ask for protobuf answers first and get them for built-in kinds; kubectl prints what it decoded.
    let (ok, _, log) = k
        .run(
            &[
                "create",
                "configmap",
                "answered",
                "--from-literal=a=b",
                "-v=8",
            ],
            None,
        )
        .await;
    let response = log.split("Response Headers:").nth(1).unwrap_or_default();
    assert!(
        ok && response.contains("Content-Type: application/vnd.kubernetes.protobuf"),
        "{log}"
    );
    let out = k
        .ok(&[
            "create",
            "deployment",
            "pbweb",
            "--image=nginx:1",
            "--replicas=2",
            "-o",
            "json",
        ])
        .await;
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["spec"]["replicas"], 2, "{out}");
    assert_eq!(
        json["spec"]["strategy"]["rollingUpdate"]["maxSurge"], "25%",
        "{out}"
    );
    assert_eq!(
        json["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1"
    );
    let out = k
        .ok(&[
            "create",
            "secret",
            "generic",
            "pbsecret",
            "--from-literal=k=v",
            "-o",
            "jsonpath={.data.k}",
        ])
        .await;
    assert_eq!(out, "dg==");
    k.ok(&["scale", "deployment", "pbweb", "--replicas=3"])
        .await;
    let out = k
        .ok(&[
            "get",
            "deployment",
            "pbweb",
            "-o",
            "jsonpath={.spec.replicas}",
        ])
        .await;
    assert_eq!(out, "3");
    k.ok(&["delete", "deployment", "pbweb"]).await;
    k.ok(&["delete", "secret", "pbsecret"]).await;
    k.ok(&["delete", "configmap", "answered"]).await;
    // Kinds without a per-kind mapping are read by their generated messages.
    k.ok(&["create", "ingress", "web", "--rule=web.example.dev/=web:80"])
        .await;
    let out = k
        .ok(&[
            "get",
            "ingress",
            "web",
            "-o",
            "jsonpath={.spec.rules[0].host}",
        ])
        .await;
    assert_eq!(out, "web.example.dev");
    k.ok(&["delete", "ingress", "web"]).await;
    let settings =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  color: blue\n";
    k.ok_with(&["create", "-f", "-"], Some(settings)).await;
    let out = k
        .ok(&[
            "get",
            "configmap",
            "settings",
            "-o",
            "jsonpath={.data.color}",
        ])
        .await;
    assert_eq!(out, "blue");
    k.ok(&["label", "configmap", "settings", "team=red"]).await;
    let out = k
        .ok(&["get", "configmaps", "-l", "team=red", "-o", "name"])
        .await;
    assert_eq!(out.trim(), "configmap/settings");
    k.ok(&[
        "patch",
        "configmap",
        "settings",
        "-p",
        r#"{"data":{"color":"green"}}"#,
    ])
    .await;
    let out = k.ok(&["get", "cm", "settings", "-o", "yaml"]).await;
    assert!(out.contains("color: green"), "{out}");
    let out = k.ok(&["get", "cm", "settings", "-o", "json"]).await;
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(json["metadata"]["labels"]["team"], "red");

    let deploy = write(dir.path(), "deploy.yaml", DEPLOYMENT);
    k.ok(&["apply", "--server-side", "-f", deploy.to_str().unwrap()])
        .await;
    let out = k
        .ok(&[
            "get",
            "deployment",
            "web",
            "-o",
            "jsonpath={.metadata.managedFields[0].manager}",
        ])
        .await;
    assert_eq!(out, "kubectl");
    k.ok(&["scale", "deployment", "web", "--replicas=3"]).await;
    let out = k
        .ok(&[
            "get",
            "deploy",
            "web",
            "-o",
            "jsonpath={.spec.replicas} {.metadata.generation}",
        ])
        .await;
    assert_eq!(out, "3 2");
    // Applying again (the file says 1 replica) conflicts with kubectl-scale's ownership, as on a real cluster.
    let (ok, _, err) = k
        .run(
            &["apply", "--server-side", "-f", deploy.to_str().unwrap()],
            None,
        )
        .await;
    assert!(!ok && err.contains("conflict"), "{err}");

    // Custom resources after their CRD.
    let crd = serde_yaml::to_string(&WebApp::crd()).unwrap();
    k.ok_with(&["apply", "--server-side", "-f", "-"], Some(&crd))
        .await;
    k.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/webapps.example.dev",
        "--timeout=10s",
    ])
    .await;
    let app = "apiVersion: example.dev/v1\nkind: WebApp\nmetadata:\n  name: shop\nspec:\n  image: nginx\n";
    k.ok_with(&["create", "-f", "-"], Some(app)).await;
    let out = k.ok(&["get", "webapps"]).await;
    assert!(out.contains("shop"), "{out}");
    let out = k
        .ok(&["get", "wa", "shop", "-o", "jsonpath={.spec.replicas}"])
        .await;
    assert_eq!(out, "1", "schema default applied");
    let bad = "apiVersion: example.dev/v1\nkind: WebApp\nmetadata:\n  name: bad\nspec:\n  image: nginx\n  replicas: -2\n";
    let (ok, _, err) = k.run(&["create", "-f", "-"], Some(bad)).await;
    assert!(
        !ok && err.contains("should be greater than or equal to 0"),
        "{err}"
    );

    // get -w sees a change made while it watches.
    let mut watch = Command::new(&k.bin)
        .arg("--kubeconfig")
        .arg(&k.kubeconfig)
        .args(["get", "configmaps", "-w", "-o", "name"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(watch.stdout.take().unwrap()).lines();
    let first = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first.as_deref(), Some("configmap/settings"));
    k.ok_with(
        &["create", "-f", "-"],
        Some("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: late\n"),
    )
    .await;
    let mut saw_late = false;
    while let Ok(Ok(Some(line))) =
        tokio::time::timeout(Duration::from_secs(20), lines.next_line()).await
    {
        if line == "configmap/late" {
            saw_late = true;
            break;
        }
    }
    assert!(saw_late, "kubectl get -w saw the new configmap");
    watch.kill().await.unwrap();

    k.ok(&["delete", "configmap", "settings"]).await;
    let (ok, _, err) = k.run(&["get", "configmap", "settings"], None).await;
    assert!(!ok && err.contains("NotFound"), "{err}");
    serving.shutdown(Duration::from_secs(5)).await;
}

const GADGETS: &str = r#"{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "gadgets.example.dev"},
 "spec": {"group": "example.dev", "scope": "Namespaced",
  "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
  "versions": [{"name": "v1", "served": true, "storage": true,
   "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
   "additionalPrinterColumns": [
    {"name": "Ready", "type": "string", "jsonPath": ".status.conditions[?(@.type==\"Ready\")].status"},
    {"name": "Sizes", "type": "string", "jsonPath": ".spec.sizes[1:]", "priority": 1},
    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}]}]}}"#;

const GADGET: &str = r#"{"apiVersion": "example.dev/v1", "kind": "Gadget", "metadata": {"name": "g"},
 "spec": {"sizes": ["s", "m", "l"]},
 "status": {"conditions": [{"type": "Synced", "status": "False"}, {"type": "Ready", "status": "True"}]}}"#;

/// The words of each line of `kubectl get` output.
fn words(out: &str) -> Vec<Vec<String>> {
    out.lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_get_prints_kube_apiservers_columns() {
    let Some(bin) = kubectl_binary() else { return };
    let server = ApiServer::new();
    let serving = server.serve("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    serving.write_kubeconfig(&kubeconfig).unwrap();
    let k = Kubectl { bin, kubeconfig };

    k.ok_with(&["apply", "-f", "-"], Some(DEPLOYMENT)).await;
    // The played workload status makes it ready right after the write.
    let mut out = Vec::new();
    for _ in 0..50 {
        out = words(&k.ok(&["get", "deployment", "web", "-o", "wide"]).await);
        if out[1][1] == "1/1" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        out[0],
        [
            "NAME",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "AGE",
            "CONTAINERS",
            "IMAGES",
            "SELECTOR"
        ]
    );
    assert_eq!(out[1][..4], ["web", "1/1", "1", "1"], "{out:?}");
    assert_eq!(out[1][5..], ["app", "nginx:1.27", "app=web"], "{out:?}");

    k.ok_with(&["apply", "-f", "-"], Some(GADGETS)).await;
    k.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/gadgets.example.dev",
        "--timeout=10s",
    ])
    .await;
    k.ok_with(&["create", "-f", "-"], Some(GADGET)).await;
    let out = words(&k.ok(&["get", "gadgets", "-o", "wide"]).await);
    assert_eq!(out[0], ["NAME", "READY", "SIZES", "AGE"]);
    assert_eq!(out[1][..3], ["g", "True", "m"], "{out:?}");
    let out = words(&k.ok(&["get", "gadgets"]).await);
    assert_eq!(
        out[0],
        ["NAME", "READY", "AGE"],
        "the wide column is hidden"
    );
    serving.shutdown(Duration::from_secs(5)).await;
}
