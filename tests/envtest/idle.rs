//! A converged operator writes nothing, idle or restarted, as the real kube-apiserver counts it: the write
//! requests of `apiserver_request_total` (every verb but GET, LIST and WATCH) do not move; and, asked to, its
//! caches fill from streamed watches, with no LIST.

use std::collections::BTreeMap;
use std::time::Duration;

use examples::webapp::{WebApp, reconciler, sample, sample_config_map};
use kube::api::{Api, PostParams};
use kube::{Client, CustomResourceExt};
use kubewright::Operator;
use kubewright::testing::envtest::metrics::{is_write, requests, scrape};
use kubewright::testing::envtest::{ControlPlane, assets_or_skip};

use crate::support::eventually;

/// Write requests the API server has served to the operator's resources, by verb and resource, from its own
/// metrics.
async fn writes(client: &Client) -> BTreeMap<String, u64> {
    served(client, is_write).await
}

/// LIST requests the API server has served for the operator's resources, by resource.
async fn lists(client: &Client) -> BTreeMap<String, u64> {
    served(client, |verb| verb == "LIST").await
}

/// Requests with a verb `verb` admits that the API server has served for the operator's resources, keyed
/// `verb resource`, from its own metrics.
async fn served(client: &Client, verb: impl Fn(&str) -> bool) -> BTreeMap<String, u64> {
    let page = scrape(client).await.expect("/metrics");
    requests(&page, verb)
        .into_iter()
        .map(|((v, resource), n)| (format!("{v} {resource}"), n))
        .collect()
}

fn start(
    client: Client,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<Result<(), kubewright::RunError>>,
) {
    start_with(client, |o| o.controller(reconciler()))
}

fn start_with(
    client: Client,
    controller: fn(Operator) -> Operator,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<Result<(), kubewright::RunError>>,
) {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    // Caches stream their first lists by default.
    let operator = Operator::new(client);
    let running = tokio::spawn(controller(operator).run_until(async move {
        let _ = stopped.await;
    }));
    (stop, running)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_converged_operator_makes_no_write_idle_or_restarted() {
    let name = "idle-writes";
    if assets_or_skip(name).is_none() {
        return;
    }
    let cp = ControlPlane::builder().name(name).start().await.unwrap();
    cp.install_crds([WebApp::crd()]).await.unwrap();
    let client = cp.client().unwrap();
    // No kube-controller-manager here: the test plays the Deployment controller.
    let workloads = tests::workload_controllers::play(client.clone());
    Api::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &sample_config_map("sample-config"))
        .await
        .unwrap();
    let apps: Api<WebApp> = Api::namespaced(client.clone(), "default");
    apps.create(
        &PostParams::default(),
        &sample("sample", Some("sample-config")),
    )
    .await
    .unwrap();
    let (stop, running) = start(client.clone());
    eventually("the WebApp Ready", async || {
        let app = apps.get("sample").await.ok()?;
        let ready = app
            .status?
            .conditions
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True");
        ready.then_some(())
    })
    .await;
    // Let the last events and status writes land.
    tokio::time::sleep(Duration::from_secs(3)).await;

    let converged = writes(&client).await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(writes(&client).await, converged, "writes while idle");

    let _ = stop.send(());
    running.await.unwrap().unwrap();
    // kube-apiserver 1.35 streams a watch's initial objects: the restarted operator's caches fill with no LIST.
    assert_eq!(
        kubewright::cache::probe_list_strategy::<WebApp>(&client, None).await,
        kubewright::ListStrategy::Streaming
    );
    let listed = lists(&client).await;
    let (stop, running) = start(client.clone());
    // The restarted operator reads everything again and reconciles the WebApp again.
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(writes(&client).await, converged, "writes after a restart");
    assert_eq!(
        lists(&client).await,
        listed,
        "LIST requests of the restarted operator"
    );
    let _ = stop.send(());
    running.await.unwrap().unwrap();
    workloads.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_converged_database_operator_makes_no_write_idle_or_restarted() {
    use examples::database::{Database, app, sample};
    let controller = |o| app().operator(o);
    let name = "idle-writes-database";
    if assets_or_skip(name).is_none() {
        return;
    }
    let cp = ControlPlane::builder().name(name).start().await.unwrap();
    cp.install_crds([Database::crd()]).await.unwrap();
    let client = cp.client().unwrap();
    // No kube-controller-manager here: the test plays the StatefulSet controller.
    let workloads = tests::workload_controllers::play(client.clone());
    let dbs: Api<Database> = Api::namespaced(client.clone(), "default");
    dbs.create(&PostParams::default(), &sample("sample", "16"))
        .await
        .unwrap();
    let (stop, running) = start_with(client.clone(), controller);
    eventually("the Database Ready", async || {
        let db = dbs.get("sample").await.ok()?;
        let status = db.status?;
        let ready = status.observed_generation == db.metadata.generation
            && status
                .conditions
                .iter()
                .any(|c| c.type_ == "Ready" && c.status == "True");
        ready.then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(3)).await;

    let converged = writes(&client).await;
    assert!(
        converged.keys().any(|k| k.contains("secrets")),
        "the operator's writes were not counted: {converged:?}"
    );
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(writes(&client).await, converged, "writes while idle");

    let _ = stop.send(());
    running.await.unwrap().unwrap();
    let (stop, running) = start_with(client.clone(), controller);
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(writes(&client).await, converged, "writes after a restart");
    let _ = stop.send(());
    running.await.unwrap().unwrap();
    workloads.abort();
}
