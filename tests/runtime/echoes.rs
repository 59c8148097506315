//! Echoes that never hide a change: a write no status reflection saw queues the next pass, and an invalid spec
//! waits for a change instead of being retried with backoff.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{CustomResource, Resource, ResourceExt};
use kubewright::testing::ApiServer;
use kubewright::{
    Command, Context, Error, Operator, Outcome, Reconciler, ReconcilerStatus, SyncReconciler,
    Target,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "example.dev",
    version = "v1",
    kind = "Tally",
    namespaced,
    status = "TallyStatus"
)]
pub struct TallySpec {
    /// How many ConfigMaps the tally keeps; below zero is an invalid spec.
    pub want: i64,
}

#[derive(
    Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, ReconcilerStatus,
)]
#[serde(rename_all = "camelCase")]
pub struct TallyStatus {
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// How many of its ConfigMaps the pass found in the cache.
    pub count: Option<i64>,
}

/// Written in controller-runtime's order: the status from the listed children, then the missing child (as a
/// `#[sync]` step writes it, with `Context::execute`).
fn tally_step(passes: Arc<AtomicUsize>) -> SyncReconciler<Tally> {
    SyncReconciler::new_async("tally", move |t: &mut Tally, cx: &mut Context| {
        passes.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            if t.spec.want < 0 {
                return Err(Error::invalid_spec(
                    "InvalidWant",
                    "spec.want must not be negative",
                ));
            }
            // The children it controls, from the cache (untracked: only their own events bring the parent back).
            let uid = t.uid().unwrap_or_default();
            let have = cx.cache::<ConfigMap>()?.owned_by(&uid).len() as i64;
            t.status.get_or_insert_with(Default::default).count = Some(have);
            if have < t.spec.want {
                let mut cm = ConfigMap::default();
                cm.metadata.name = Some(format!("{}-{have}", t.name_any()));
                cm.metadata.namespace = t.namespace();
                cm.metadata.labels = Some([("tally".to_string(), t.name_any())].into());
                cm.metadata.owner_references = t.controller_owner_ref(&()).map(|r| vec![r]);
                cx.execute(Command::Create {
                    target: Target::of(&cm),
                    object: serde_json::to_value(&cm)?,
                    field_manager: None,
                })
                .await?;
            }
            Ok(Outcome::Continue)
        })
    })
    .wiring(|w| w.owns::<ConfigMap>())
}

struct Running {
    _server: ApiServer,
    client: kube::Client,
    passes: Arc<AtomicUsize>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), kubewright::RunError>>,
}

impl Running {
    async fn start(planted: bool) -> Self {
        let server = ApiServer::new();
        let client = server.client();
        crate::lifecycle::install::<Tally>(&client).await;
        let passes = Arc::new(AtomicUsize::new(0));
        let mut reconciler = Reconciler::<Tally>::new("tally").step(tally_step(passes.clone()));
        if planted {
            reconciler = reconciler.echo_every_write();
        }
        let op = Operator::new(client.clone()).controller(reconciler);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(op.run_until(async move {
            let _ = stopped.await;
        }));
        Self {
            _server: server,
            client,
            passes,
            stop: Some(stop),
            task,
        }
    }

    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = tokio::time::timeout(Duration::from_secs(10), self.task).await;
    }
}

/// The count the status shows once the operator has had time to settle: the pass after the create must run.
async fn settled_count(client: &kube::Client, name: &str) -> Option<i64> {
    let tallies: Api<Tally> = Api::namespaced(client.clone(), "default");
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    // Until the child exists and the operator had time for the pass its creation queues (or hid).
    for _ in 0..400 {
        let created = cms.get_opt(&format!("{name}-0")).await.ok().flatten();
        let count = tallies
            .get(name)
            .await
            .ok()
            .and_then(|t| t.status)
            .and_then(|s| s.count);
        if created.is_some() && count == Some(1) {
            return count;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    tallies.get(name).await.ok()?.status?.count
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_created_by_a_sync_step_after_its_status_was_computed_queues_the_next_pass() {
    let op = Running::start(false).await;
    Api::<Tally>::namespaced(op.client.clone(), "default")
        .create(
            &PostParams::default(),
            &Tally::new("t", TallySpec { want: 1 }),
        )
        .await
        .unwrap();
    // The first pass counted 0 and created one; the creation's event must bring a second pass that counts it.
    assert_eq!(settled_count(&op.client, "t").await, Some(1));
    op.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_planted_echo_rule_leaves_the_status_stale() {
    // The rule before the fix took the sync step's create for an echo: no second pass, `count` stays 0.
    let op = Running::start(true).await;
    Api::<Tally>::namespaced(op.client.clone(), "default")
        .create(
            &PostParams::default(),
            &Tally::new("t", TallySpec { want: 1 }),
        )
        .await
        .unwrap();
    assert_eq!(settled_count(&op.client, "t").await, Some(0));
    assert_eq!(op.passes.load(Ordering::SeqCst), 1);
    op.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_spec_waits_for_a_change_instead_of_backing_off() {
    let op = Running::start(false).await;
    let tallies: Api<Tally> = Api::namespaced(op.client.clone(), "default");
    tallies
        .create(
            &PostParams::default(),
            &Tally::new("bad", TallySpec { want: -1 }),
        )
        .await
        .unwrap();
    let ready = |t: &Tally| {
        t.status
            .as_ref()
            .and_then(|s| s.conditions.iter().find(|c| c.type_ == "Ready"))
            .map(|c| (c.status.clone(), c.reason.clone()))
    };
    let mut seen = None;
    for _ in 0..400 {
        seen = tallies.get("bad").await.ok().as_ref().and_then(ready);
        if seen.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(seen, Some(("False".into(), "InvalidWant".into())));
    // With backoff it would run again after 0.5, 1 and 2 s; it waits for a change instead.
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(
        op.passes.load(Ordering::SeqCst),
        1,
        "no retry without a change"
    );
    // One Warning event, not one per retry.
    let events: Api<k8s_openapi::api::events::v1::Event> =
        Api::namespaced(op.client.clone(), "default");
    let warnings = events
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some("InvalidWant"))
        .count();
    assert_eq!(warnings, 1);
    // The change that fixes it is reconciled at once.
    tallies
        .patch(
            "bad",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"want": 0}})),
        )
        .await
        .unwrap();
    for _ in 0..400 {
        seen = tallies.get("bad").await.ok().as_ref().and_then(ready);
        if seen.as_ref().is_some_and(|(s, _)| s == "True") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(seen.map(|(s, _)| s), Some("True".into()));
    op.stop().await;
}
