//! The manifests an example prints deploy on a fresh cluster with `kubectl apply -f -` (the Namespace comes
//! with them), and the operator then runs as their Deployment runs it (its arguments: leader election,
//! probes, metrics, the namespaces it watches) under its own service account, from a kubeconfig holding that
//! account's token, with no forbidden request: it reads no CRD unless told to install them
//! (`--install-crds`, whose RBAC only `manifests --install-crds` grants). Its probes and metrics answer
//! meanwhile. A namespace-scoped installation (`manifests --namespace`) has no ClusterRole at all, and its
//! operator converges its namespace and leaves another alone.

use std::sync::{Arc, Mutex};

use examples::database::{Database, SAMPLE_NAME, app, installation, sample};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
use kube::api::{Api, PostParams};
use kube::config::AuthInfo;
use kubewright::manifests::Manifests;
use kubewright::testing::envtest::{ControlPlane, assets_or_skip};

use crate::support::{
    Exchange, eventually, free_address, http_get, recording_client_for, sample_value,
};

const NAMESPACE: &str = "database-system";
const ACCOUNT: &str = "database-operator";

/// The manifests applied with kubectl on a fresh control plane, and the operator running as their
/// Deployment would, under their service account.
struct Deployed {
    cp: ControlPlane,
    kubectl: tests::kubectl::Kubectl,
    yaml: String,
    warnings: String,
    flags: kubewright::cli::RunFlags,
    operator_client: kube::Client,
    log: Arc<Mutex<Vec<Exchange>>>,
}

/// Applies `manifests` (after creating `namespaces`) on a control plane of its own (an operator that watches
/// every namespace must not meet another test's Databases); `None` when there are no control-plane binaries
/// or no kubectl (skipped).
async fn deploy(name: &str, manifests: Manifests, namespaces: &[&str]) -> Option<Deployed> {
    assets_or_skip(name)?;
    let cp = ControlPlane::builder().name(name).start().await.unwrap();
    let bin = tests::kubectl::kubectl_binary()?;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    cp.write_kubeconfig(&kubeconfig).unwrap();
    // The kubeconfig must outlive this function: keep the directory.
    let _ = dir.keep();
    let kubectl = tests::kubectl::Kubectl { bin, kubeconfig };
    let admin = cp.client().unwrap();
    for namespace in namespaces {
        let ns: Api<Namespace> = Api::all(admin.clone());
        let mut object = Namespace::default();
        object.metadata.name = Some(namespace.to_string());
        ns.create(&PostParams::default(), &object).await.unwrap();
    }

    // As a user would: the Deployment is created too (no kubelet runs it here).
    let yaml = manifests.to_yaml().unwrap();
    let (applied, _, warnings) = kubectl.run(&["apply", "-f", "-"], Some(&yaml)).await;
    assert!(applied, "kubectl apply failed: {warnings}");

    // The operator's flags are its Deployment's arguments; it runs here from a kubeconfig instead of
    // `--in-cluster`, and serves its probes and metrics on free local ports.
    let deployment = manifests.deployment();
    let args = deployment
        .spec
        .and_then(|s| s.template.spec)
        .map(|p| p.containers[0].args.clone().unwrap_or_default())
        .unwrap_or_default();
    let args = std::iter::once("database".to_string())
        .chain(args.into_iter().filter(|a| a != "--in-cluster"));
    let mut flags = app().try_parse_from(args).unwrap().run;
    flags.health_probe_bind_address = kubewright::cli::BindAddress(Some(free_address()));
    flags.metrics_bind_address = kubewright::cli::BindAddress(Some(free_address()));

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
    // In its pod the client's namespace is the pod's: the Lease goes there.
    config.default_namespace = NAMESPACE.into();
    let (operator_client, log) = recording_client_for(config);
    Some(Deployed {
        cp,
        kubectl,
        yaml,
        warnings,
        flags,
        operator_client,
        log,
    })
}

impl Deployed {
    /// Runs the operator until `stop` is sent.
    fn run(
        &self,
    ) -> (
        tokio::sync::oneshot::Sender<()>,
        tokio::task::JoinHandle<Result<(), kubewright::cli::CliError>>,
    ) {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (client, flags) = (self.operator_client.clone(), self.flags.clone());
        let running = tokio::spawn(async move {
            let webhooks = kubewright::cli::WebhookFlags::default();
            app()
                .run_on_cluster(client, false, &flags, &webhooks, async move {
                    let _ = stopped.await;
                })
                .await
        });
        (stop, running)
    }

    /// Creates the sample Database in `namespace`.
    async fn create_database(&self, namespace: &str) -> Api<Database> {
        let dbs: Api<Database> = Api::namespaced(self.cp.client().unwrap(), namespace);
        let mut db = sample(SAMPLE_NAME, "16");
        db.metadata.namespace = Some(namespace.to_string());
        dbs.create(&PostParams::default(), &db).await.unwrap();
        dbs
    }

    /// The requests the operator made, after it found none forbidden and no CRD read.
    fn exchanges_checked(&self) -> Vec<Exchange> {
        let exchanges = self.log.lock().unwrap().clone();
        let forbidden: Vec<_> = exchanges.iter().filter(|e| e.status == 403).collect();
        assert!(forbidden.is_empty(), "forbidden requests: {forbidden:#?}");
        assert!(
            !exchanges
                .iter()
                .any(|e| e.path.contains("customresourcedefinitions")),
            "the operator read CRDs without --install-crds: {exchanges:#?}"
        );
        exchanges
    }
}

impl Deployed {
    /// Waits (about 60 s) until the Database in `dbs` is Ready; on timeout, panics with the operator's
    /// failed requests.
    async fn ready(&self, dbs: &Api<Database>) {
        for _ in 0..600 {
            let ready = dbs
                .get(SAMPLE_NAME)
                .await
                .ok()
                .and_then(|db| db.status)
                .is_some_and(|s| {
                    s.conditions
                        .iter()
                        .any(|c| c.type_ == "Ready" && c.status == "True")
                });
            if ready {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let failed: Vec<Exchange> = self
            .log
            .lock()
            .unwrap()
            .iter()
            .filter(|e| e.status >= 400)
            .cloned()
            .collect();
        panic!(
            "the Database not Ready under the operator's own account; failed requests: {failed:#?}"
        );
    }
}

/// The runtime's metrics live in one registry per process (as a Prometheus exporter serves them), and both
/// tests here run a `database-controller` with a leader Lease in this process: one at a time, so one test's
/// operator stopping does not change the figures the other reads.
static ONE_OPERATOR_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_printed_manifests_deploy_and_the_operator_runs_under_its_own_account() {
    let _one = ONE_OPERATOR_AT_A_TIME.lock().await;
    let Some(deployed) = deploy("deploy-manifests", installation(), &[]).await else {
        return;
    };
    let (yaml, warnings, kubectl) = (&deployed.yaml, &deployed.warnings, &deployed.kubectl);
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
        kubectl
            .ok(&[
                "get",
                "service",
                "database-operator-metrics",
                "-n",
                NAMESPACE
            ])
            .await
            .contains("8080")
    );
    assert!(
        !yaml.contains("customresourcedefinitions"),
        "the operator's role grants CRDs without --install-crds"
    );
    assert!(
        deployed.flags.leader_elect,
        "the Deployment elects a leader"
    );

    let admin = deployed.cp.client().unwrap();
    let namespace = deployed.cp.namespace().await.unwrap();
    let workloads = tests::workload_controllers::play(admin.clone());
    let (stop, running) = deployed.run();
    let dbs = deployed.create_database(&namespace).await;
    deployed.ready(&dbs).await;
    // Synced, running and leading: the probes answer 200 and the metrics say so.
    let probes = deployed.flags.health_probe_bind_address.0.unwrap();
    let metrics = deployed.flags.metrics_bind_address.0.unwrap();
    let status = |addr, path| async move { http_get(addr, path).await.map(|(s, _)| s) };
    eventually("/readyz 200", async || {
        (status(probes, "/readyz").await == Some(200)).then_some(())
    })
    .await;
    assert_eq!(status(probes, "/healthz").await, Some(200));
    assert_eq!(status(probes, "/metrics").await, Some(404));
    let (_, exposition) = http_get(metrics, "/metrics").await.unwrap();
    assert_eq!(
        sample_value(
            &exposition,
            r#"leader_election_master_status{name="database-controller-leader"}"#
        ),
        Some(1.0),
        "{exposition}"
    );
    let _ = stop.send(());
    running.await.unwrap().unwrap();
    workloads.abort();
    assert_eq!(
        status(probes, "/healthz").await,
        None,
        "the probes outlive the operator"
    );

    let exchanges = deployed.exchanges_checked();
    assert!(
        exchanges
            .iter()
            .any(|e| e.method == "POST" && e.path.contains("/statefulsets")),
        "the operator wrote no StatefulSet itself: {exchanges:#?}"
    );
    assert!(
        exchanges
            .iter()
            .any(|e| e.method == "PUT"
                && e.path.contains(&format!("/namespaces/{NAMESPACE}/leases/"))),
        "the operator renewed no Lease in its namespace: {exchanges:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_scoped_operator_needs_no_cluster_role_and_leaves_other_namespaces_alone() {
    let _one = ONE_OPERATOR_AT_A_TIME.lock().await;
    let manifests = installation().watch_namespaces(["team-a"]);
    let Some(deployed) = deploy("deploy-namespaced", manifests, &["team-a", "team-b"]).await else {
        return;
    };
    assert!(
        !deployed.yaml.contains("kind: ClusterRole"),
        "{}",
        deployed.yaml
    );
    assert_eq!(deployed.flags.namespaces, ["team-a"]);

    let admin = deployed.cp.client().unwrap();
    let workloads = tests::workload_controllers::play(admin.clone());
    let (stop, running) = deployed.run();
    let other = deployed.create_database("team-b").await;
    let mine = deployed.create_database("team-a").await;
    deployed.ready(&mine).await;
    // By then the Database of the other namespace would have its children had the operator seen it.
    let sets: Api<StatefulSet> = Api::namespaced(admin.clone(), "team-b");
    assert!(sets.get_opt(SAMPLE_NAME).await.unwrap().is_none());
    assert!(other.get(SAMPLE_NAME).await.unwrap().status.is_none());
    let _ = stop.send(());
    running.await.unwrap().unwrap();
    workloads.abort();

    let exchanges = deployed.exchanges_checked();
    assert!(
        exchanges.iter().all(|e| !e.path.contains("team-b")),
        "the operator touched the other namespace: {exchanges:#?}"
    );
    assert!(
        exchanges.iter().any(|e| e
            .path
            .starts_with("/apis/example.dev/v1/namespaces/team-a/databases")),
        "{exchanges:#?}"
    );
}
