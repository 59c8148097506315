//! A change to one parent is served while thousands of parents that a list replayed wait for their passes
//! (the work queue's priority rule, `kubewright::controller` docs): run on the embedded cluster (a re-list
//! after a lost watch, and a start on many parents) and on kube-apiserver (a start on many parents).
//!
//! The measure is a count, not a time: how many other passes started between the change's answer from the
//! API server and the changed parent's pass. Without the rule the changed parent waits behind the rest of
//! the list, thousands of passes; with it, behind the passes in flight and the few the cache had already
//! handed to the queue.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{FutureExt, StreamExt};
use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, ObjectMeta};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use kube::{Client, CustomResource, CustomResourceExt, ResourceExt};
use kubewright::{
    ChildReconciler, Context, Operator, Outcome, Reconciler, ReconcilerStatus, SyncReconciler,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// A parent that holds a note and nothing else.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "priority.example.dev",
    version = "v1",
    kind = "Backlog",
    namespaced,
    status = "BacklogStatus"
)]
pub struct BacklogSpec {
    pub note: String,
}

/// The runtime's status: observedGeneration and conditions.
#[derive(
    Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, ReconcilerStatus,
)]
#[serde(rename_all = "camelCase")]
pub struct BacklogStatus {
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub conditions: Vec<Condition>,
}

/// The passes started, in order: each parent's name and its note then.
pub type Passes = Arc<Mutex<Vec<(String, String)>>>;

/// How long each pass takes, in milliseconds (the test may change it while the operator runs).
pub type Pace = Arc<AtomicU64>;

/// A reconciler named `name` that records each pass and takes `pace` over it (an await, as a call to an
/// outside system would), two passes at a time.
pub fn reconciler(name: &str, passes: Passes, pace: Pace) -> Reconciler<Backlog> {
    Reconciler::new(name)
        .concurrency(2)
        .step(SyncReconciler::new_async(
            "record",
            move |b: &mut Backlog, _| {
                passes
                    .lock()
                    .unwrap()
                    .push((b.name_any(), b.spec.note.clone()));
                let pace = Duration::from_millis(pace.load(Ordering::Relaxed));
                async move {
                    tokio::time::sleep(pace).await;
                    Ok(Outcome::Continue)
                }
                .boxed()
            },
        ))
}

/// [`reconciler`] with a child: a Deployment named after its parent, as a workload controller would report on.
pub fn reconciler_with_child(name: &str, passes: Passes, pace: Pace) -> Reconciler<Backlog> {
    reconciler(name, passes, pace).step(ChildReconciler::new("deployment", desired_deployment))
}

fn desired_deployment(parent: &Backlog, _: &mut Context) -> kubewright::Result<Option<Deployment>> {
    let labels = BTreeMap::from([("app".to_string(), parent.name_any())]);
    Ok(Some(Deployment {
        metadata: ObjectMeta {
            name: Some(parent.name_any()),
            ..Default::default()
        },
        spec: Some(DeploymentSpec {
            replicas: Some(1),
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "app".into(),
                        image: Some("nginx:1.27".into()),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        }),
        ..Default::default()
    }))
}

/// Installs the CRD and creates `count` parents in `ns` (see [`install_parents`]).
pub async fn install(client: &Client, ns: &str, count: usize) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &Backlog::crd())
        .await
        .expect("create the CRD");
    await_condition(
        crds,
        "backlogs.priority.example.dev",
        conditions::is_crd_established(),
    )
    .await
    .expect("the CRD is established");
    install_parents(client, ns, count).await;
}

/// Creates `count` parents in `ns`, named `p-00000`… so that a list returns the one changed,
/// `p-<count - 1>`, last.
pub async fn install_parents(client: &Client, ns: &str, count: usize) {
    let backlogs: Api<Backlog> = Api::namespaced(client.clone(), ns);
    futures::stream::iter(0..count)
        .map(|i| {
            let backlogs = backlogs.clone();
            async move {
                let mut b = Backlog::new(&name(i), BacklogSpec { note: "old".into() });
                b.metadata.namespace = None;
                backlogs
                    .create(&PostParams::default(), &b)
                    .await
                    .expect("create a parent");
            }
        })
        .buffer_unordered(16)
        .collect::<Vec<()>>()
        .await;
}

/// The name of parent `i`.
pub fn name(i: usize) -> String {
    format!("p-{i:05}")
}

/// Whether a change whose pass came `overtook` passes after it, with `backlog` passes still to run, was
/// served before the backlog: within the passes in flight and those the event's way through the cache let
/// start meanwhile (a few, more on a loaded machine), and far ahead of the backlog.
pub fn served_first(overtook: usize, backlog: usize) -> bool {
    overtook <= 50.max(backlog / 20)
}

/// Runs `operator` until the returned sender is dropped.
pub fn run(operator: Operator) -> tokio::sync::oneshot::Sender<()> {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(operator.run_until(async move {
        let _ = stopped.await;
    }));
    stop
}

/// Waits until at least `n` passes started, for up to [`PASSES_WITHIN`].
pub async fn passes_reach(passes: &Passes, n: usize) {
    let deadline = tokio::time::Instant::now() + PASSES_WITHIN;
    while tokio::time::Instant::now() < deadline {
        if passes.lock().unwrap().len() >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!(
        "only {} passes started in {PASSES_WITHIN:?}, waiting for {n}",
        passes.lock().unwrap().len()
    );
}

/// How long [`passes_reach`] waits: a bound on liveness, not on speed. The 10,000 passes of the priority test
/// take about a minute in the debug profile on two cores with nothing else running, and longer beside other
/// tests (with twice as many test threads as cores, 8,006 had started after 60 s).
pub const PASSES_WITHIN: Duration = Duration::from_secs(300);

/// Waits until all `count` parents in `ns` carry the status their first pass wrote, so that no first pass
/// is still between its start and its write (a re-list taken then would make that parent due twice, rightly).
pub async fn statuses_written(client: &Client, ns: &str, count: usize) {
    let backlogs: Api<Backlog> = Api::namespaced(client.clone(), ns);
    let mut written = 0;
    for _ in 0..600 {
        written = backlogs
            .list(&Default::default())
            .await
            .expect("list the parents")
            .items
            .iter()
            .filter(|b| {
                b.status
                    .as_ref()
                    .is_some_and(|s| s.observed_generation.is_some())
            })
            .count();
        if written >= count {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("only {written} of {count} parents have a status");
}

/// Changes the note of parent `name` in `ns` while passes run; answers how many passes started between the
/// change's request and the changed parent's pass that saw it, and how many were still to run then (the
/// backlog the change overtook).
pub async fn change_overtakes(
    client: &Client,
    ns: &str,
    parent: &str,
    passes: &Passes,
    total: usize,
) -> (usize, usize) {
    let backlogs: Api<Backlog> = Api::namespaced(client.clone(), ns);
    // Counted from before the change is sent: its pass may start before the answer reaches this task.
    let changed_at = passes.lock().unwrap().len();
    backlogs
        .patch(
            parent,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"note": "new"}})),
        )
        .await
        .expect("change the parent");
    for _ in 0..2400 {
        {
            let seen = passes.lock().unwrap();
            if let Some(at) = seen[changed_at..]
                .iter()
                .position(|(n, note)| n == parent && note == "new")
            {
                return (at, total.saturating_sub(changed_at));
            }
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("the changed parent {parent} had no pass");
}

/// Waits until the Deployments of `parents` in `ns` exist.
pub async fn deployments_exist(client: &Client, ns: &str, parents: &[String]) {
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns);
    for parent in parents {
        let mut found = false;
        for _ in 0..600 {
            if deployments
                .get_opt(parent)
                .await
                .expect("read a Deployment")
                .is_some()
            {
                found = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(found, "the Deployment of {parent} was not created");
    }
}

/// Merges `patch` into the Deployment of parent `parent` in `ns` (into its status when `status`, as its
/// controller would; else into its spec, as another writer would) while passes run; answers how many passes
/// started between the write and the parent's next pass, and how many were still to run then.
pub async fn child_write_overtakes(
    client: &Client,
    ns: &str,
    parent: &str,
    status: bool,
    patch: serde_json::Value,
    passes: &Passes,
    total: usize,
) -> (usize, usize) {
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns);
    let changed_at = passes.lock().unwrap().len();
    let params = PatchParams::default();
    if status {
        deployments
            .patch_status(parent, &params, &Patch::Merge(patch))
            .await
            .expect("write the child's status");
    } else {
        deployments
            .patch(parent, &params, &Patch::Merge(patch))
            .await
            .expect("change the child's spec");
    }
    for _ in 0..12_000 {
        {
            let seen = passes.lock().unwrap();
            if let Some(at) = seen[changed_at..].iter().position(|(n, _)| n == parent) {
                return (at, total.saturating_sub(changed_at));
            }
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!(
        "the parent {parent} had no pass after its child's write ({} passes since)",
        passes.lock().unwrap().len() - changed_at
    );
}

/// The value of the metric `metric{name="<controller>"}` the process's registry holds now.
pub fn workqueue_metric(metric: &str, controller: &str) -> Option<u64> {
    kubewright::metrics::Metrics::global()
        .encode()
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{metric}{{name=\"{controller}\"}} ")))
        .and_then(|n| n.trim().parse::<u64>().ok())
}
