//! Passes no change in the cluster asks for (`kubewright::triggers`): a resync period, external streams, the
//! polling of an outside system, the explorer's external trigger; and the pass timeout.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::SignedDuration;
use kube::api::{Api, PostParams};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::wait::{await_condition, conditions};
use kube::{Client, CustomResource, CustomResourceExt, ResourceExt};
use kubewright::testing::ApiServer;
use kubewright::testing::explore::{Explore, Scenario};
use kubewright::{Operator, Outcome, Reconciler, ReconcilerStatus, SyncReconciler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "example.dev",
    version = "v1",
    kind = "Site",
    namespaced,
    status = "SiteStatus"
)]
pub struct SiteSpec {
    pub bucket: String,
}

#[derive(
    Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, ReconcilerStatus,
)]
#[serde(rename_all = "camelCase")]
pub struct SiteStatus {
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// The hour of the server's clock at the last pass (the explorer's test).
    pub hour: Option<i64>,
}

type Passes = Arc<Mutex<HashMap<String, usize>>>;

/// Counts passes per Site and writes nothing but its conditions.
fn counting(passes: Passes) -> Reconciler<Site> {
    Reconciler::new("site-controller").step(SyncReconciler::new("count", move |s: &mut Site, _| {
        *passes.lock().unwrap().entry(s.name_any()).or_default() += 1;
        Ok(Outcome::Continue)
    }))
}

fn count(passes: &Passes, name: &str) -> usize {
    passes.lock().unwrap().get(name).copied().unwrap_or(0)
}

async fn eventually(what: &str, f: impl Fn() -> bool) {
    for _ in 0..400 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting for {what}");
}

fn site(name: &str, bucket: &str) -> Site {
    let mut s = Site::new(
        name,
        SiteSpec {
            bucket: bucket.into(),
        },
    );
    s.metadata.namespace = Some("default".into());
    s
}

/// A server with the Site CRD and the Sites `names` (bucket `bucket-<name>`).
async fn cluster(names: &[&str]) -> (ApiServer, Client) {
    let server = ApiServer::new();
    let client = server.client();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &Site::crd())
        .await
        .unwrap();
    await_condition(crds, "sites.example.dev", conditions::is_crd_established())
        .await
        .unwrap();
    let sites: Api<Site> = Api::namespaced(client.clone(), "default");
    for name in names {
        sites
            .create(
                &PostParams::default(),
                &site(name, &format!("bucket-{name}")),
            )
            .await
            .unwrap();
    }
    (server, client)
}

/// Runs `operator` until the returned sender is dropped or sent to.
fn run(operator: Operator) -> tokio::sync::oneshot::Sender<()> {
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(operator.run_until(async move {
        let _ = stop_rx.await;
    }));
    stop_tx
}

/// Waits until the counts stop moving for half a second; answers them.
async fn settled(passes: &Passes, names: &[&str]) -> Vec<usize> {
    eventually("a first pass over every Site", || {
        names.iter().all(|n| count(passes, n) >= 1)
    })
    .await;
    loop {
        let before: Vec<usize> = names.iter().map(|n| count(passes, n)).collect();
        tokio::time::sleep(Duration::from_millis(500)).await;
        let after: Vec<usize> = names.iter().map(|n| count(passes, n)).collect();
        if before == after {
            return after;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resync_period_reconciles_every_parent_with_no_change() {
    let (_server, client) = cluster(&["a", "b"]).await;
    let passes = Passes::default();
    let reconciler = counting(passes.clone()).resync_every(Duration::from_millis(300));
    let _stop = run(Operator::new(client.clone()).controller(reconciler));
    eventually("three resyncs of each Site", || {
        count(&passes, "a") >= 4 && count(&passes, "b") >= 4
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_resync_period_a_quiet_parent_has_no_pass() {
    let (_server, client) = cluster(&["a"]).await;
    let passes = Passes::default();
    let _stop = run(Operator::new(client.clone()).controller(counting(passes.clone())));
    let settled = settled(&passes, &["a"]).await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(count(&passes, "a"), settled[0]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operators_sync_period_applies_to_controllers_that_set_none() {
    let (_server, client) = cluster(&["a"]).await;
    let passes = Passes::default();
    let operator = Operator::new(client.clone())
        .resync_every(Some(Duration::from_millis(300)))
        .controller(counting(passes.clone()));
    let _stop = run(operator);
    eventually("resyncs", || count(&passes, "a") >= 4).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_external_stream_reconciles_the_parents_it_names_and_ignores_the_others() {
    let (_server, client) = cluster(&["a", "b"]).await;
    let passes = Passes::default();
    let (tx, rx) = futures::channel::mpsc::unbounded::<ObjectRef<Site>>();
    let reconciler = counting(passes.clone()).reconcile_on(rx);
    let _stop = run(Operator::new(client.clone()).controller(reconciler));
    let before = settled(&passes, &["a", "b"]).await;

    tx.unbounded_send(ObjectRef::new("ghost").within("default"))
        .unwrap();
    tx.unbounded_send(ObjectRef::new("a").within("default"))
        .unwrap();
    eventually("a reconciled", || count(&passes, "a") > before[0]).await;
    let after = settled(&passes, &["a", "b"]).await;
    assert_eq!(after, [before[0] + 1, before[1]], "one pass, over a only");
    assert_eq!(count(&passes, "ghost"), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_matching_stream_reconciles_every_parent_an_item_concerns() {
    let (_server, client) = cluster(&["a", "b", "c"]).await;
    let passes = Passes::default();
    let (tx, rx) = futures::channel::mpsc::unbounded::<String>();
    // An item is a bucket; a Site uses one.
    let reconciler = counting(passes.clone())
        .reconcile_on_matching(rx, |bucket: &String, s: &Site| &s.spec.bucket == bucket);
    let _stop = run(Operator::new(client.clone()).controller(reconciler));
    let before = settled(&passes, &["a", "b", "c"]).await;

    tx.unbounded_send("bucket-b".into()).unwrap();
    eventually("b reconciled", || count(&passes, "b") > before[1]).await;
    let after = settled(&passes, &["a", "b", "c"]).await;
    assert_eq!(after, [before[0], before[1] + 1, before[2]]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn polling_reconciles_the_parents_whose_inputs_changed() {
    let (_server, client) = cluster(&["a", "b"]).await;
    let passes = Passes::default();
    // The outside system: a version per bucket.
    let buckets: Arc<Mutex<HashMap<String, u64>>> = Arc::new(Mutex::new(HashMap::from([
        ("bucket-a".to_string(), 1),
        ("bucket-b".to_string(), 1),
    ])));
    let fetched = Arc::new(Mutex::new(0usize));
    let (source, calls) = (buckets.clone(), fetched.clone());
    let reconciler = counting(passes.clone()).poll(
        "buckets",
        Duration::from_millis(100),
        move || {
            let state = source.lock().unwrap().clone();
            *calls.lock().unwrap() += 1;
            async move { Ok::<_, std::io::Error>(state) }
        },
        |s: &Site, bucket: &String| &s.spec.bucket == bucket,
    );
    let _stop = run(Operator::new(client.clone()).controller(reconciler));
    let before = settled(&passes, &["a", "b"]).await;
    // Polls with nothing changed reconcile nothing.
    assert!(*fetched.lock().unwrap() >= 3);
    assert_eq!(settled(&passes, &["a", "b"]).await, before);

    buckets.lock().unwrap().insert("bucket-b".into(), 2);
    eventually("b reconciled", || count(&passes, "b") > before[1]).await;
    let after = settled(&passes, &["a", "b"]).await;
    assert_eq!(after, [before[0], before[1] + 1]);

    // A bucket that goes concerns its Site too.
    buckets.lock().unwrap().remove("bucket-a");
    eventually("a reconciled", || count(&passes, "a") > before[0]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_past_its_timeout_is_cancelled_named_by_its_step_and_retried() {
    let (_server, client) = cluster(&["a"]).await;
    let passes = Passes::default();
    let counted = passes.clone();
    let reconciler = Reconciler::new("site-controller")
        .step(SyncReconciler::new("count", move |s: &mut Site, _| {
            *counted.lock().unwrap().entry(s.name_any()).or_default() += 1;
            Ok(Outcome::Continue)
        }))
        .step(SyncReconciler::new_async("upload", upload_forever))
        .timeout(Duration::from_millis(200));
    let _stop = run(Operator::new(client.clone()).controller(reconciler));
    let sites: Api<Site> = Api::namespaced(client.clone(), "default");
    let ready = |s: &Site| {
        s.status
            .as_ref()
            .and_then(|st| st.conditions.iter().find(|c| c.type_ == "Ready"))
            .cloned()
    };
    let mut condition = None;
    for _ in 0..200 {
        condition = ready(&sites.get("a").await.unwrap());
        if condition.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let condition = condition.expect("a Ready condition");
    assert_eq!(condition.status, "False");
    assert_eq!(condition.reason, "ReconcileTimeout");
    assert!(
        condition.message.contains("cancelled in step `upload`"),
        "{}",
        condition.message
    );
    // Retried with backoff (500 ms, then 1 s): the first step runs again.
    eventually("a retry", || count(&passes, "a") >= 2).await;
}

/// An outside call that never answers.
fn upload_forever<'a>(
    _: &'a mut Site,
    _: &'a mut kubewright::Context,
) -> futures::future::BoxFuture<'a, kubewright::Result<Outcome>> {
    Box::pin(async {
        std::future::pending::<()>().await;
        Ok(Outcome::Continue)
    })
}

#[test]
fn the_timeout_and_sync_period_flags_are_read_as_durations() {
    use clap::Parser;
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        run: kubewright::cli::RunFlags,
    }
    let cli = Cli::parse_from(["op", "--reconcile-timeout", "30s", "--sync-period", "10h"]);
    assert_eq!(cli.run.reconcile_timeout, Some(Duration::from_secs(30)));
    assert_eq!(cli.run.sync_period, Some(Duration::from_secs(36_000)));
    let none = Cli::parse_from(["op"]);
    assert_eq!(none.run.reconcile_timeout, None);
    assert_eq!(none.run.sync_period, None);
}

/// Writes the hour of the clock into the status: state no watch shows, as an outside system's is.
fn hourly() -> Reconciler<Site> {
    Reconciler::new("site-controller").step(SyncReconciler::new("hour", |s: &mut Site, cx| {
        let hour = cx.now().as_second() / 3600;
        s.status.get_or_insert_with(Default::default).hour = Some(hour);
        Ok(Outcome::Continue)
    }))
}

fn hours_later(trigger: bool) -> Scenario {
    let scenario = Scenario::new()
        .apply(&site("a", "bucket-a"))
        .settle()
        .advance(SignedDuration::from_hours(2));
    if trigger {
        scenario.trigger::<Site>(Some("default"), "a")
    } else {
        scenario
    }
}

#[tokio::test]
async fn the_explorer_plays_an_external_trigger_from_the_scenario() {
    let explored = Explore::new(hourly)
        .crd(Site::crd())
        .scenario(hours_later(true))
        .run()
        .await
        .unwrap();
    let status_writes = explored
        .writes
        .iter()
        .filter(|w| w.contains("status Site default/a"))
        .count();
    assert_eq!(status_writes, 2, "{explored:#}");

    // Without the trigger, nothing makes the Site due after the clock moved: the pass over every parent
    // finds the write the operator left undone.
    let missed = Explore::new(hourly)
        .crd(Site::crd())
        .scenario(hours_later(false))
        .run()
        .await
        .unwrap_err();
    assert!(
        missed
            .to_string()
            .contains("the unperturbed run already breaks the oracle"),
        "{missed}"
    );
}
