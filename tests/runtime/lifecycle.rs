//! Operator lifecycle: shared caches across controllers, graceful shutdown with a deadline, no task left.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::{BoxFuture, FutureExt};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{Api, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use kube::{CustomResource, CustomResourceExt, ResourceExt};
use kubewright::testing::ApiServer;
use kubewright::{
    ChildReconciler, Context, Operator, Outcome, Reconciler, ReconcilerStatus, SubReconciler,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::smoke::{Note, NoteSpec};

#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "example.dev",
    version = "v1",
    kind = "Memo",
    namespaced,
    status = "MemoStatus"
)]
pub struct MemoSpec {
    pub body: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct MemoStatus {
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub conditions: Vec<Condition>,
}

impl ReconcilerStatus for MemoStatus {
    fn conditions(&self) -> &[Condition] {
        &self.conditions
    }
    fn conditions_mut(&mut self) -> &mut Vec<Condition> {
        &mut self.conditions
    }
    fn observed_generation(&self) -> Option<i64> {
        self.observed_generation
    }
    fn set_observed_generation(&mut self, g: Option<i64>) {
        self.observed_generation = g;
    }
}

pub(crate) async fn install<K: CustomResourceExt>(client: &kube::Client) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd = K::crd();
    let name = crd.name_any();
    crds.create(&PostParams::default(), &crd).await.unwrap();
    await_condition(crds, &name, conditions::is_crd_established())
        .await
        .unwrap();
}

fn memo_configmap(m: &Memo, _: &mut Context) -> kubewright::Result<Option<ConfigMap>> {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(format!("memo-{}", m.name_any()));
    cm.data = Some([("body".to_string(), m.spec.body.clone())].into());
    Ok(Some(cm))
}

fn note_configmap(n: &Note, _: &mut Context) -> kubewright::Result<Option<ConfigMap>> {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(format!("note-{}", n.name_any()));
    cm.data = Some([("text".to_string(), n.spec.text.clone())].into());
    Ok(Some(cm))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controllers_share_one_cache_per_kind() {
    let server = ApiServer::new();
    let client = server.client();
    install::<Note>(&client).await;
    install::<Memo>(&client).await;
    let op = Operator::new(client.clone())
        .controller(
            Reconciler::<Note>::new("notes").step(ChildReconciler::new("cm", note_configmap)),
        )
        .controller(
            Reconciler::<Memo>::new("memos").step(ChildReconciler::new("cm", memo_configmap)),
        );
    assert_eq!(op.caches().kinds(), ["ConfigMap", "Memo", "Note"]);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(op.run_until(async move {
        let _ = stopped.await;
    }));
    Api::<Note>::namespaced(client.clone(), "default")
        .create(
            &PostParams::default(),
            &Note::new("a", NoteSpec { text: "t".into() }),
        )
        .await
        .unwrap();
    Api::<Memo>::namespaced(client.clone(), "default")
        .create(
            &PostParams::default(),
            &Memo::new("b", MemoSpec { body: "m".into() }),
        )
        .await
        .unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    for _ in 0..200 {
        if cms.get_opt("note-a").await.unwrap().is_some()
            && cms.get_opt("memo-b").await.unwrap().is_some()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(cms.get_opt("note-a").await.unwrap().is_some());
    assert!(cms.get_opt("memo-b").await.unwrap().is_some());
    // One watch per kind, however many controllers read it.
    assert_eq!(server.watcher_count(), 3);
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("stopped")
        .unwrap()
        .unwrap();
    for _ in 0..100 {
        if server.watcher_count() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        server.watcher_count(),
        0,
        "no watch is left open after shutdown"
    );
}

/// A step that takes a long time, to be caught in flight by a shutdown.
struct Slow {
    started: Arc<AtomicUsize>,
    finished: Arc<AtomicUsize>,
    takes: Duration,
}

impl SubReconciler<Note> for Slow {
    fn name(&self) -> &str {
        "slow"
    }
    fn reconcile<'a>(
        &'a self,
        _: &'a mut Note,
        _: &'a mut Context,
    ) -> BoxFuture<'a, kubewright::Result<Outcome>> {
        async move {
            self.started.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(self.takes).await;
            self.finished.fetch_add(1, Ordering::SeqCst);
            Ok(Outcome::Continue)
        }
        .boxed()
    }
}

async fn shutdown_with(takes: Duration, deadline: Duration) -> (usize, usize) {
    let server = ApiServer::new();
    let client = server.client();
    install::<Note>(&client).await;
    Api::<Note>::namespaced(client.clone(), "default")
        .create(
            &PostParams::default(),
            &Note::new("slow", NoteSpec { text: "t".into() }),
        )
        .await
        .unwrap();
    let started = Arc::new(AtomicUsize::new(0));
    let finished = Arc::new(AtomicUsize::new(0));
    let step = Slow {
        started: started.clone(),
        finished: finished.clone(),
        takes,
    };
    let op = Operator::new(client)
        .shutdown_deadline(deadline)
        .controller(Reconciler::<Note>::new("slow").step(step));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(op.run_until(async move {
        let _ = stopped.await;
    }));
    while started.load(Ordering::SeqCst) == 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(20), task)
        .await
        .expect("run_until returned")
        .unwrap()
        .unwrap();
    for _ in 0..100 {
        if server.watcher_count() == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        server.watcher_count(),
        0,
        "no watch is left open after shutdown"
    );
    (
        started.load(Ordering::SeqCst),
        finished.load(Ordering::SeqCst),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_lets_in_flight_passes_finish() {
    let (started, finished) =
        shutdown_with(Duration::from_millis(300), Duration::from_secs(10)).await;
    assert_eq!(
        (started, finished),
        (1, 1),
        "the pass in flight completed before shutdown returned"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_aborts_passes_past_the_deadline() {
    let (started, finished) =
        shutdown_with(Duration::from_secs(60), Duration::from_millis(200)).await;
    assert_eq!(
        (started, finished),
        (1, 0),
        "the pass past the deadline was aborted"
    );
}

fn note_with_optional_key(n: &Note, _: &mut Context) -> kubewright::Result<Option<ConfigMap>> {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(format!("opt-{}", n.name_any()));
    let mut data: std::collections::BTreeMap<String, String> =
        [("text".to_string(), "t".to_string())].into();
    if n.spec.text == "with-extra" {
        data.insert("extra".into(), "yes".into());
    }
    cm.data = Some(data);
    Ok(Some(cm))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_field_the_desired_state_stops_setting_is_removed() {
    let server = ApiServer::new();
    let client = server.client();
    install::<Note>(&client).await;
    let op = Operator::new(client.clone()).controller(
        Reconciler::<Note>::new("opt").step(ChildReconciler::new("cm", note_with_optional_key)),
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(op.run_until(async move {
        let _ = stopped.await;
    }));
    let notes: Api<Note> = Api::namespaced(client.clone(), "default");
    notes
        .create(
            &PostParams::default(),
            &Note::new(
                "n",
                NoteSpec {
                    text: "with-extra".into(),
                },
            ),
        )
        .await
        .unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let mut seen = false;
    for _ in 0..400 {
        if let Some(cm) = cms.get_opt("opt-n").await.unwrap()
            && cm.data.as_ref().is_some_and(|d| d.contains_key("extra"))
        {
            seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(seen, "the child got the extra key");
    let patch = serde_json::json!({"spec": {"text": "plain"}});
    notes
        .patch(
            "n",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(patch),
        )
        .await
        .unwrap();
    let mut removed = false;
    for _ in 0..400 {
        let cm = cms.get("opt-n").await.unwrap();
        if !cm.data.as_ref().is_some_and(|d| d.contains_key("extra")) {
            removed = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(
        removed,
        "server-side apply removed the key the desired state stopped setting"
    );
    // Created with a POST, the child's fields moved from the controller's Update entry into its Apply entry
    // at the first apply, so the Apply entry alone owns them now.
    let entries: Vec<(String, String)> = cms
        .get("opt-n")
        .await
        .unwrap()
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .map(|e| {
            (
                e.manager.unwrap_or_default(),
                e.operation.unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(entries, [("opt".to_string(), "Apply".to_string())]);
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("stopped")
        .unwrap()
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panicking_step_fails_its_pass_and_the_controller_goes_on() {
    let server = ApiServer::new();
    let client = server.client();
    install::<Memo>(&client).await;
    let boom = |m: &Memo, cx: &mut Context| -> kubewright::Result<Option<ConfigMap>> {
        if m.spec.body == "boom" {
            panic!("body must not be boom");
        }
        memo_configmap(m, cx)
    };
    let op = Operator::new(client.clone())
        .controller(Reconciler::<Memo>::new("memos").step(ChildReconciler::new("cm", boom)));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(op.run_until(async move {
        let _ = stopped.await;
    }));
    let memos: Api<Memo> = Api::namespaced(client.clone(), "default");
    memos
        .create(
            &PostParams::default(),
            &Memo::new(
                "bad",
                MemoSpec {
                    body: "boom".into(),
                },
            ),
        )
        .await
        .unwrap();
    // The panic is the pass's error: Ready=False with its message.
    let mut ready = None;
    for _ in 0..400 {
        ready = memos
            .get("bad")
            .await
            .unwrap()
            .status
            .and_then(|s| s.conditions.into_iter().find(|c| c.type_ == "Ready"));
        if ready.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let ready = ready.expect("a Ready condition on the panicking memo");
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "ReconcileError")
    );
    assert!(
        ready
            .message
            .contains("a step panicked: body must not be boom"),
        "{ready:?}"
    );
    // Parents created after the panic are still reconciled.
    memos
        .create(
            &PostParams::default(),
            &Memo::new(
                "good",
                MemoSpec {
                    body: "fine".into(),
                },
            ),
        )
        .await
        .unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let mut found = None;
    for _ in 0..400 {
        found = cms.get_opt("memo-good").await.unwrap();
        if found.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(found.is_some(), "the controller stopped after the panic");
    let events: Api<k8s_openapi::api::events::v1::Event> = Api::namespaced(client, "default");
    let warnings: Vec<_> = events
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| e.type_.as_deref() == Some("Warning"))
        .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("bad"))
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("stopped")
        .unwrap()
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_step_that_waits_stops_on_the_shutdown_signal_instead_of_the_deadline() {
    use futures::FutureExt;
    use kubewright::SyncReconciler;
    let server = ApiServer::new();
    let client = server.client();
    install::<Memo>(&client).await;
    let waiting = Arc::new(AtomicUsize::new(0));
    let entered = waiting.clone();
    // A step that waits for something that never comes, but listens for shutdown.
    let step = SyncReconciler::new_async("wait", move |_: &mut Memo, cx: &mut Context| {
        let entered = entered.clone();
        async move {
            entered.fetch_add(1, Ordering::SeqCst);
            tokio::select! {
                _ = cx.shutting_down() => Ok(Outcome::Halt),
                _ = std::future::pending::<()>() => Ok(Outcome::Continue),
            }
        }
        .boxed()
    });
    let op = Operator::new(client.clone())
        .shutdown_deadline(Duration::from_secs(120))
        .controller(Reconciler::<Memo>::new("memos").step(step));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(op.run_until(async move {
        let _ = stopped.await;
    }));
    Api::<Memo>::namespaced(client.clone(), "default")
        .create(
            &PostParams::default(),
            &Memo::new("m", MemoSpec { body: "x".into() }),
        )
        .await
        .unwrap();
    for _ in 0..400 {
        if waiting.load(Ordering::SeqCst) > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(waiting.load(Ordering::SeqCst), 1, "the step is waiting");
    let _ = stop.send(());
    // Well before the 120 s deadline: the step returned when told the operator is stopping.
    tokio::time::timeout(Duration::from_secs(60), task)
        .await
        .expect("the operator stops when its waiting step hears the shutdown")
        .unwrap()
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_that_never_ends_fails_the_liveness_probe_until_it_does() {
    use futures::FutureExt;
    use kubewright::SyncReconciler;
    use kubewright::probes::Unhealthy;
    let server = ApiServer::new();
    let client = server.client();
    install::<Memo>(&client).await;
    let (release, released) = tokio::sync::watch::channel(false);
    // A step awaiting something that does not come until the test says so.
    let step = SyncReconciler::new_async("hang", move |_: &mut Memo, _: &mut Context| {
        let mut released = released.clone();
        async move {
            let _ = released.wait_for(|r| *r).await;
            Ok(Outcome::Continue)
        }
        .boxed()
    });
    let op = Operator::new(client.clone())
        .stuck_after(Duration::from_millis(300))
        .controller(Reconciler::<Memo>::new("memos").step(step));
    let health = op.health();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(op.run_until(async move {
        let _ = stopped.await;
    }));
    Api::<Memo>::namespaced(client.clone(), "default")
        .create(
            &PostParams::default(),
            &Memo::new("m", MemoSpec { body: "x".into() }),
        )
        .await
        .unwrap();
    let mut stuck = None;
    for _ in 0..400 {
        // (Before the operator runs, the probe fails as not running.)
        if let Err(why @ Unhealthy::Stuck { .. }) = health.liveness() {
            stuck = Some(why);
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    match stuck {
        Some(Unhealthy::Stuck {
            controller, parent, ..
        }) => {
            assert_eq!(
                (controller.as_str(), parent.as_str()),
                ("memos", "default/m")
            );
        }
        other => panic!("the hanging pass did not fail the probe: {other:?}"),
    }
    // Once the pass ends, the controller is alive again.
    release.send(true).unwrap();
    for _ in 0..400 {
        if health.is_alive() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(health.liveness(), Ok(()));
    let _ = stop.send(());
    task.await.unwrap().unwrap();
}
