//! The manifests an example prints deploy on a fresh cluster with `kubectl apply -f -` (the Namespace comes
//! with them), and the operator then runs under its own service account, from a kubeconfig holding that
//! account's token, with no forbidden request: it reads no CRD unless told to install them
//! (`--install-crds`, whose RBAC only `manifests --install-crds` grants). Its health probes answer meanwhile.

use examples::database::{Database, SAMPLE_NAME, example, installation, sample};
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::ServiceAccount;
use kube::api::{Api, PostParams};
use kube::config::AuthInfo;
use operator::testing::envtest::{ControlPlane, assets_or_skip};

use crate::support::{eventually, recording_client_for};

const NAMESPACE: &str = "database-system";
const ACCOUNT: &str = "database-operator";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_printed_manifests_deploy_and_the_operator_runs_under_its_own_account() {
    // Its own control plane: an operator that watches every namespace must not meet another test's Databases.
    let name = "deploy-manifests";
    if assets_or_skip(name).is_none() {
        return;
    }
    let cp = ControlPlane::builder().name(name).start().await.unwrap();
    let Some(bin) = tests::kubectl::kubectl_binary() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    cp.write_kubeconfig(&kubeconfig).unwrap();
    let kubectl = tests::kubectl::Kubectl { bin, kubeconfig };

    // What `database manifests` prints, applied as a user would: the Deployment is created too (no kubelet
    // runs it here).
    let yaml = installation().to_yaml().unwrap();
    let (applied, _, warnings) = kubectl.run(&["apply", "-f", "-"], Some(&yaml)).await;
    assert!(applied, "kubectl apply failed: {warnings}");
    // The Namespace enforces the `restricted` Pod Security Standard, and the Deployment's pod meets it:
    // kube-apiserver's PodSecurity admission warns at apply time about a template that would be refused.
    assert!(!warnings.contains("PodSecurity"), "{warnings}");
    // The check above can fail: a pod template with no security context is warned about in that namespace.
    let loose = serde_json::json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "loose", "namespace": NAMESPACE},
        "spec": {
            "selector": {"matchLabels": {"app": "loose"}},
            "template": {
                "metadata": {"labels": {"app": "loose"}},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    })
    .to_string();
    let (_, _, loose_warnings) = kubectl.run(&["apply", "-f", "-"], Some(&loose)).await;
    assert!(loose_warnings.contains("PodSecurity"), "{loose_warnings}");
    assert!(
        kubectl
            .ok(&["get", "namespace", NAMESPACE])
            .await
            .contains(NAMESPACE)
    );
    assert!(
        !yaml.contains("customresourcedefinitions"),
        "the operator's role grants CRDs without --install-crds"
    );

    let admin = cp.client().unwrap();
    let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), NAMESPACE);
    let request = TokenRequest {
        spec: TokenRequestSpec {
            audiences: Vec::new(),
            expiration_seconds: Some(3600),
            ..Default::default()
        },
        ..Default::default()
    };
    let token = accounts
        .create_token_request(ACCOUNT, &PostParams::default(), &request)
        .await
        .unwrap()
        .status
        .expect("a token")
        .token;
    let mut config = cp.config().clone();
    config.auth_info = AuthInfo {
        token: Some(token.into()),
        ..Default::default()
    };
    let (operator_client, log) = recording_client_for(config);

    let namespace = cp.namespace().await.unwrap();
    let workloads = tests::workload_controllers::play(admin.clone());
    // The probes on a free port, as `--health-probe-bind-address 127.0.0.1:PORT` would serve them.
    let probes = {
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        free.local_addr().unwrap()
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(async move {
        examples::cli::run_on_cluster(
            &example(),
            operator_client,
            false,
            &examples::cli::RunFlags {
                health_probe_bind_address: examples::cli::BindAddress(Some(probes)),
                ..Default::default()
            },
            async move {
                let _ = stopped.await;
            },
        )
        .await
    });
    let dbs: Api<Database> = Api::namespaced(admin.clone(), &namespace);
    let mut db = sample(SAMPLE_NAME, "16");
    db.metadata.namespace = Some(namespace.clone());
    dbs.create(&PostParams::default(), &db).await.unwrap();
    eventually(
        "the Database Ready under the operator's own account",
        async || {
            let db = dbs.get(SAMPLE_NAME).await.ok()?;
            let status = db.status?;
            status
                .conditions
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True")
                .then_some(())
        },
    )
    .await;
    // Synced and running: both probes answer 200 while it converges and after.
    eventually("/readyz 200", async || {
        (probe(probes, "/readyz").await == Some(200)).then_some(())
    })
    .await;
    assert_eq!(probe(probes, "/healthz").await, Some(200));
    assert_eq!(probe(probes, "/metrics").await, Some(404));
    let _ = stop.send(());
    running.await.unwrap().unwrap();
    workloads.abort();
    assert_eq!(
        probe(probes, "/healthz").await,
        None,
        "the probes outlive the operator"
    );

    let exchanges = log.lock().unwrap().clone();
    assert!(
        exchanges
            .iter()
            .any(|e| e.method == "PATCH" && e.path.contains("/statefulsets/")),
        "the operator wrote no StatefulSet itself: {exchanges:#?}"
    );
    let forbidden: Vec<_> = exchanges.iter().filter(|e| e.status == 403).collect();
    assert!(forbidden.is_empty(), "forbidden requests: {forbidden:#?}");
    assert!(
        !exchanges
            .iter()
            .any(|e| e.path.contains("customresourcedefinitions")),
        "the operator read CRDs without --install-crds: {exchanges:#?}"
    );
}

/// The status code of `GET path` on the probe server, `None` when nothing answers.
async fn probe(addr: std::net::SocketAddr, path: &str) -> Option<u16> {
    crate::support::http_get(addr, path)
        .await
        .map(|(status, _)| status)
}
