//! The runtime's behaviours that depend on the API server, on a real kube-apiserver: optimistic concurrency
//! on status writes, generation and the status subresource, server-side apply field ownership, finalizers,
//! and watches that survive an API server restart.
//!
//! Each test runs its own operator on its own control plane (an operator watches every namespace).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kube::{CustomResource, CustomResourceExt, ResourceExt};
use kubewright::metrics::Metrics;
use kubewright::testing::envtest::ControlPlane;
use kubewright::{
    ChildReconciler, Context, Operator, Outcome, Reconciler, ReconcilerStatus, Sequence,
    SyncReconciler, WithFinalizer,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::support::{Exchange, eventually, recording_client, sample_value};
use kubewright::testing::envtest::assets_or_skip;

#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "envtest.example.dev",
    version = "v1",
    kind = "Memo",
    namespaced,
    status = "MemoStatus"
)]
pub struct MemoSpec {
    pub text: String,
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

const CONTROLLER: &str = "memo-controller";
const FINALIZER: &str = "envtest.example.dev/cleanup";

fn desired(memo: &Memo, _: &mut Context) -> kubewright::Result<Option<ConfigMap>> {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(memo.name_any());
    cm.data = Some([("text".to_string(), memo.spec.text.clone())].into());
    Ok(Some(cm))
}

/// Memo → ConfigMap, guarded by a finalizer whose cleanup is counted; `hook` runs first on every pass.
fn reconciler(
    cleanups: Arc<AtomicUsize>,
    hook: impl Fn(&Memo) + Send + Sync + 'static,
) -> Reconciler<Memo> {
    reconciler_named(CONTROLLER, cleanups, hook)
}

/// [`reconciler`] under another controller name (its own series of the process-wide metrics).
fn reconciler_named(
    name: &str,
    cleanups: Arc<AtomicUsize>,
    hook: impl Fn(&Memo) + Send + Sync + 'static,
) -> Reconciler<Memo> {
    Reconciler::new(name).step(WithFinalizer::new(
        FINALIZER,
        Sequence::new("memo")
            .step(
                SyncReconciler::new("hook", move |memo: &mut Memo, _: &mut Context| {
                    hook(memo);
                    Ok(Outcome::Continue)
                })
                .finalize(move |_: &mut Memo, _: &mut Context| {
                    cleanups.fetch_add(1, Ordering::SeqCst);
                    Ok(Outcome::Continue)
                }),
            )
            .step(ChildReconciler::new("configmap", desired)),
    ))
}

/// A control plane with the Memo CRD, a namespace, and an operator running `reconciler` through a recording
/// client.
struct Setup {
    cp: ControlPlane,
    memos: Api<Memo>,
    configmaps: Api<ConfigMap>,
    log: Arc<std::sync::Mutex<Vec<Exchange>>>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    operator: Option<tokio::task::JoinHandle<Result<(), kubewright::RunError>>>,
}

impl Setup {
    async fn start(name: &str, reconciler: Reconciler<Memo>) -> Option<Setup> {
        assets_or_skip(name)?;
        let cp = ControlPlane::builder().name(name).start().await.unwrap();
        cp.install_crds([Memo::crd()]).await.unwrap();
        let ns = cp.namespace().await.unwrap();
        let client = cp.client().unwrap();
        let (recording, log) = recording_client(&cp);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let operator = tokio::spawn(Operator::new(recording).controller(reconciler).run_until(
            async move {
                let _ = stopped.await;
            },
        ));
        Some(Setup {
            memos: Api::namespaced(client.clone(), &ns),
            configmaps: Api::namespaced(client, &ns),
            cp,
            log,
            stop: Some(stop),
            operator: Some(operator),
        })
    }

    async fn create(&self, name: &str, text: &str) -> Memo {
        self.memos
            .create(
                &PostParams::default(),
                &Memo::new(
                    name,
                    MemoSpec {
                        text: text.to_string(),
                    },
                ),
            )
            .await
            .unwrap()
    }

    /// Waits until the memo's status reports generation `generation` reconciled and Ready, and its
    /// ConfigMap holds `text`.
    async fn converged(&self, name: &str, generation: i64, text: &str) -> (Memo, ConfigMap) {
        eventually(
            &format!("{name} converged at generation {generation}"),
            async || {
                let memo = self.memos.get_opt(name).await.unwrap()?;
                let status = memo.status.as_ref()?;
                let ready = status
                    .conditions
                    .iter()
                    .any(|c| c.type_ == "Ready" && c.status == "True");
                let cm = self.configmaps.get_opt(name).await.unwrap()?;
                let cm_text = cm.data.as_ref()?.get("text")?.clone();
                (status.observed_generation == Some(generation) && ready && cm_text == text)
                    .then_some((memo, cm))
            },
        )
        .await
    }

    fn exchanges(&self, method: &str, path_contains: &str) -> Vec<Exchange> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|e| e.method == method && e.path.contains(path_contains))
            .cloned()
            .collect()
    }

    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(operator) = self.operator.take() {
            tokio::time::timeout(Duration::from_secs(30), operator)
                .await
                .expect("the operator stops")
                .unwrap()
                .unwrap();
        }
    }
}

fn managers(cm: &ConfigMap) -> Vec<(String, String)> {
    cm.metadata
        .managed_fields
        .iter()
        .flatten()
        .map(|f| {
            (
                f.manager.clone().unwrap_or_default(),
                f.operation.clone().unwrap_or_default(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generation_moves_with_the_spec_and_status_goes_through_the_subresource() {
    let Some(setup) = Setup::start("generation", reconciler(Arc::default(), |_| {})).await else {
        return;
    };
    setup.create("memo", "one").await;
    let (memo, _) = setup.converged("memo", 1, "one").await;
    // The status write (and the finalizer patch) did not move the generation.
    assert_eq!(memo.metadata.generation, Some(1));
    assert_eq!(memo.finalizers(), [FINALIZER]);

    // A metadata-only change does not move the generation either.
    setup
        .memos
        .patch(
            "memo",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"touched": "yes"}}})),
        )
        .await
        .unwrap();
    let memo = setup.memos.get("memo").await.unwrap();
    assert_eq!(memo.metadata.generation, Some(1));

    setup
        .memos
        .patch(
            "memo",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"text": "two"}})),
        )
        .await
        .unwrap();
    let (memo, _) = setup.converged("memo", 2, "two").await;
    assert_eq!(memo.metadata.generation, Some(2));

    // Status was only ever written through /status, under the controller's field manager.
    let status_writes = setup.exchanges("PATCH", "/memos/memo/status");
    assert!(!status_writes.is_empty());
    assert!(
        setup
            .exchanges("PUT", "/memos/memo")
            .iter()
            .all(|e| !e.path.contains("status")),
    );
    let status_manager = memo
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .find(|f| f.subresource.as_deref() == Some("status"))
        .and_then(|f| f.manager.clone());
    assert_eq!(status_manager.as_deref(), Some(CONTROLLER));
    setup.stop().await;
}

/// A pass's own writes (the finalizer, the ConfigMap, the status) come back as watch events that queue no
/// second pass; a change by anyone else does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_is_not_woken_by_its_own_writes() {
    let passes = Arc::new(AtomicUsize::new(0));
    let counted = passes.clone();
    let hook = move |_: &Memo| {
        counted.fetch_add(1, Ordering::SeqCst);
    };
    let controller = "memo-echoes";
    let Some(setup) =
        Setup::start("echoes", reconciler_named(controller, Arc::default(), hook)).await
    else {
        return;
    };
    // Events of a write arrive within milliseconds; a second of quiet shows any pass they queued.
    let settled = async || {
        tokio::time::sleep(Duration::from_secs(1)).await;
        passes.load(Ordering::SeqCst)
    };
    setup.create("quiet", "one").await;
    setup.converged("quiet", 1, "one").await;
    assert_eq!(
        settled().await,
        1,
        "one pass creates and reports everything"
    );
    assert_eq!(setup.exchanges("PATCH", "/memos/quiet/status").len(), 1);
    // Nor do they queue it: the creation queued the Memo once, and the echoes of the finalizer's, the
    // ConfigMap's and the status's writes none, whether they came before the answers to those writes (held
    // until the pass ended) or after (told when they arrived).
    assert_eq!(
        metric(&format!("workqueue_adds_total{{name=\"{controller}\"}}")),
        Some(1),
        "the pass's three writes queued the Memo again"
    );
    let without_writes =
        format!("operator_passes_without_writes_total{{controller=\"{controller}\"}}");
    assert_eq!(metric(&without_writes), Some(0), "the first pass wrote");

    // Another client's change (a label) is not an echo.
    setup
        .memos
        .patch(
            "quiet",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"touched": "yes"}}})),
        )
        .await
        .unwrap();
    eventually("a pass for the label", async || {
        (passes.load(Ordering::SeqCst) == 2).then_some(())
    })
    .await;
    // It finds everything as desired, and writes nothing.
    eventually("the label's pass counted as writing nothing", async || {
        (metric(&without_writes) == Some(1)).then_some(())
    })
    .await;
    // Neither is a change to the child by another manager, which the next pass takes back.
    setup
        .configmaps
        .patch(
            "quiet",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"text": "edited"}})),
        )
        .await
        .unwrap();
    setup.converged("quiet", 1, "one").await;
    assert_eq!(settled().await, 3, "one pass for each change by others");
    assert_eq!(
        metric(&without_writes),
        Some(1),
        "the pass that took the ConfigMap back wrote"
    );
    setup.stop().await;
}

/// The value of the series `series` (a metric's name and labels) the process's registry holds now.
fn metric(series: &str) -> Option<u64> {
    sample_value(&Metrics::global().encode(), series).map(|v| v as u64)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_status_computed_from_a_stale_parent_conflicts_and_is_retried() {
    // On its first pass the hook changes the memo behind the operator's back (a label, as another client
    // might), so the status that pass computed carries a stale resourceVersion.
    let cp_client: Arc<std::sync::OnceLock<Api<Memo>>> = Arc::default();
    let interfered = Arc::new(AtomicUsize::new(0));
    let hook = {
        let api = cp_client.clone();
        let interfered = interfered.clone();
        move |memo: &Memo| {
            if memo.finalizers().is_empty() || interfered.fetch_add(1, Ordering::SeqCst) > 0 {
                return;
            }
            let api = api.get().expect("set before the memo exists").clone();
            let name = memo.name_any();
            tokio::task::block_in_place(|| {
                tokio::runtime::Handle::current().block_on(async move {
                    api.patch(
                        &name,
                        &PatchParams::default(),
                        &Patch::Merge(json!({"metadata": {"labels": {"interfered": "yes"}}})),
                    )
                    .await
                    .unwrap();
                })
            });
        }
    };
    let Some(setup) = Setup::start("conflict", reconciler(Arc::default(), hook)).await else {
        return;
    };
    let _ = cp_client.set(setup.memos.clone());
    setup.create("memo", "one").await;
    let (memo, _) = setup.converged("memo", 1, "one").await;
    assert_eq!(
        memo.labels().get("interfered").map(String::as_str),
        Some("yes")
    );
    let statuses: Vec<u16> = setup
        .exchanges("PATCH", "/memos/memo/status")
        .iter()
        .map(|e| e.status)
        .collect();
    assert!(
        statuses.contains(&409),
        "the stale status write was refused: {statuses:?}"
    );
    assert_eq!(statuses.last(), Some(&200), "then retried: {statuses:?}");
    setup.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_side_apply_takes_back_its_fields_and_leaves_others_alone() {
    let Some(setup) = Setup::start("ownership", reconciler(Arc::default(), |_| {})).await else {
        return;
    };
    setup.create("memo", "one").await;
    let (_, cm) = setup.converged("memo", 1, "one").await;
    // Created with a POST, which creates only: the fields are the controller's, under its Update entry.
    assert_eq!(
        managers(&cm),
        [(CONTROLLER.to_string(), "Update".to_string())]
    );

    // Someone else overwrites the operator's field and adds one of their own.
    setup
        .configmaps
        .patch(
            "memo",
            &PatchParams {
                field_manager: Some("intruder".into()),
                ..PatchParams::default()
            },
            &Patch::Merge(json!({"data": {"text": "hijacked", "note": "mine"}})),
        )
        .await
        .unwrap();
    let cm = eventually("the operator restores its field", async || {
        let cm = setup.configmaps.get("memo").await.unwrap();
        (cm.data.as_ref()?.get("text")? == "one").then_some(cm)
    })
    .await;
    let data = cm.data.clone().unwrap();
    assert_eq!(data.get("note").map(String::as_str), Some("mine"));
    let fields = |manager: &str| {
        cm.metadata
            .managed_fields
            .iter()
            .flatten()
            .find(|f| f.manager.as_deref() == Some(manager))
            .and_then(|f| serde_json::to_value(&f.fields_v1).ok())
            .unwrap_or_default()
    };
    assert!(
        fields(CONTROLLER).pointer("/f:data/f:text").is_some(),
        "{:#?}",
        cm.metadata.managed_fields
    );
    assert!(fields("intruder").pointer("/f:data/f:text").is_none());
    assert!(fields("intruder").pointer("/f:data/f:note").is_some());
    // Taking its field back was the first apply: the creation's fields then moved into the Apply entry (the
    // writes after the apply that restored the field).
    let expected = [
        (CONTROLLER.to_string(), "Apply".to_string()),
        ("intruder".to_string(), "Update".to_string()),
    ];
    eventually("the creation's fields in the Apply entry", async || {
        let cm = setup.configmaps.get("memo").await.unwrap();
        (managers(&cm) == expected).then_some(())
    })
    .await;
    setup.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finalizer_holds_the_memo_until_its_cleanup_ran_once() {
    let cleanups = Arc::new(AtomicUsize::new(0));
    let Some(setup) = Setup::start("finalizer", reconciler(cleanups.clone(), |_| {})).await else {
        return;
    };
    setup.create("memo", "one").await;
    setup.converged("memo", 1, "one").await;
    setup
        .memos
        .delete("memo", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the memo is gone", async || {
        setup
            .memos
            .get_opt("memo")
            .await
            .unwrap()
            .is_none()
            .then_some(())
    })
    .await;
    assert_eq!(cleanups.load(Ordering::SeqCst), 1);
    // The finalizer was removed by a patch from the controller. The API server deletes the memo as it
    // answers that patch, so the answer may reach the recording client after the memo is seen gone.
    eventually("the finalizer's removal is recorded", async || {
        let finalizer_patches = setup.exchanges("PATCH", "/memos/memo?");
        (finalizer_patches.iter().filter(|e| e.status == 200).count() >= 2).then_some(())
    })
    .await;
    setup.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_resume_after_the_apiserver_restarts() {
    let Some(setup) = Setup::start("restart", reconciler(Arc::default(), |_| {})).await else {
        return;
    };
    setup.create("before", "one").await;
    let (_, cm_before) = setup.converged("before", 1, "one").await;
    let watches_before = setup.exchanges("GET", "watch=true").len();

    setup.cp.restart_apiserver().await.unwrap();

    // Changes made after the restart reach the operator through new watches.
    setup.create("after", "two").await;
    setup.converged("after", 1, "two").await;
    setup
        .memos
        .patch(
            "before",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"text": "three"}})),
        )
        .await
        .unwrap();
    let (_, cm_after) = setup.converged("before", 2, "three").await;
    assert_ne!(
        cm_before.metadata.resource_version,
        cm_after.metadata.resource_version
    );
    let watches_after = setup.exchanges("GET", "watch=true").len();
    assert!(
        watches_after > watches_before,
        "the watches were re-established ({watches_before} → {watches_after})"
    );
    setup.stop().await;
}
