//! Sharded operators (`Operator::sharding`) on a cluster: replicas share the parents, a replica joins during a
//! converge, one stops gracefully (SIGTERM's path) and one is killed (its task aborted mid-pass, SIGKILL's
//! path); after each, every parent converges under the members then alive, its children follow it, and no
//! two replicas ever ran passes of one parent at the same time.
//!
//! Each pass records when it started and when its context was dropped (after its last write, or when its
//! replica was killed), with the shard label its parent carried: the check is on those intervals.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::FutureExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::{Client, ResourceExt};
use kubewright::sharding::{DRAIN_LABEL, SHARD_LABEL, Sharding, owner};
use kubewright::{
    ChildReconciler, Context, Operator, Outcome, Reconciler, RunError, StashKey, SyncReconciler,
};
use serde_json::json;

use crate::priority_scenario::{Backlog, install_parents};

/// One pass: the replica that ran it, its parent, the parent's shard label then, and when it ran.
#[derive(Debug, Clone)]
pub struct Pass {
    pub replica: String,
    pub parent: String,
    pub shard: Option<String>,
    pub start: Instant,
    pub end: Option<Instant>,
}

/// Every pass of every replica.
pub type Passes = Arc<Mutex<Vec<Pass>>>;

/// Marks its pass ended when the pass's context is dropped.
#[derive(Debug)]
struct Running {
    passes: Passes,
    index: usize,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(mut passes) = self.passes.lock() {
            passes[self.index].end = Some(Instant::now());
        }
    }
}

const RUNNING: StashKey<Running> = StashKey::new("running");

/// The note a parent's child holds.
fn desired_note(parent: &Backlog, _: &mut Context) -> kubewright::Result<Option<ConfigMap>> {
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some(format!("{}-note", parent.name_any()));
    cm.data = Some(BTreeMap::from([("note".into(), parent.spec.note.clone())]));
    Ok(Some(cm))
}

/// The reconciler each replica runs: records its pass (held a few milliseconds, as an await on an outside
/// system would), then writes the child.
fn reconciler(replica: &str, passes: Passes) -> Reconciler<Backlog> {
    let replica = replica.to_string();
    Reconciler::new("backlog-sharded")
        .concurrency(4)
        .step(SyncReconciler::new_async(
            "record",
            move |b: &mut Backlog, cx: &mut Context| {
                let index = {
                    let mut all = passes.lock().unwrap();
                    all.push(Pass {
                        replica: replica.clone(),
                        parent: b.name_any(),
                        shard: b.labels().get(SHARD_LABEL).cloned(),
                        start: Instant::now(),
                        end: None,
                    });
                    all.len() - 1
                };
                cx.stash_mut().store(
                    &RUNNING,
                    Running {
                        passes: passes.clone(),
                        index,
                    },
                );
                async move {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    Ok(Outcome::Continue)
                }
                .boxed()
            },
        ))
        .step(ChildReconciler::new("note", desired_note))
}

/// A replica running in this process.
pub struct Replica {
    pub id: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<(), RunError>>,
}

/// The sharding settings of the scenario's group in `ns`: short Leases so that a killed member's parents move
/// within seconds.
pub fn sharding(ns: &str, id: &str) -> Sharding {
    Sharding::new(format!("backlog-{ns}"), ns)
        .identity(id)
        .lease_duration(Duration::from_secs(3))
        .renew_deadline(Duration::from_secs(2))
        .retry_period(Duration::from_millis(500))
}

/// Starts replica `id` of the group in `ns`.
pub fn start(client: &Client, ns: &str, id: &str, passes: &Passes) -> Replica {
    let operator = Operator::for_namespaces(client.clone(), [ns])
        .controller(reconciler(id, passes.clone()))
        .sharding(sharding(ns, id));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(operator.run_until(async move {
        let _ = stopped.await;
    }));
    Replica {
        id: id.to_string(),
        stop: Some(stop),
        task,
    }
}

impl Replica {
    /// Stops gracefully: passes in flight end, then its Lease is released.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let ended = tokio::time::timeout(Duration::from_secs(60), self.task)
            .await
            .expect("the replica stops within a minute")
            .expect("the replica's task");
        assert!(ended.is_ok(), "replica {} stopped with {ended:?}", self.id);
    }

    /// Stops at once, mid-pass, its Lease left to expire.
    pub fn kill(self) {
        self.task.abort();
    }
}

/// Sets every parent's note to `note`.
async fn change_all(client: &Client, ns: &str, note: &str) {
    let backlogs: Api<Backlog> = Api::namespaced(client.clone(), ns);
    for b in backlogs.list(&ListParams::default()).await.unwrap() {
        backlogs
            .patch(
                &b.name_any(),
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"note": note}})),
            )
            .await
            .unwrap();
    }
}

/// What is not converged yet: each parent must carry the owner the ring names among `live` and no drain
/// label, have its status observed at its generation, and a child holding `note` with its parent's shard
/// label. Empty when all is.
async fn not_converged(client: &Client, ns: &str, note: &str, live: &[String]) -> Vec<String> {
    let backlogs: Api<Backlog> = Api::namespaced(client.clone(), ns);
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let children: BTreeMap<String, ConfigMap> = config_maps
        .list(&ListParams::default())
        .await
        .unwrap()
        .into_iter()
        .map(|c| (c.name_any(), c))
        .collect();
    let mut missing = Vec::new();
    for b in backlogs.list(&ListParams::default()).await.unwrap() {
        let key = format!("{ns}/{}", b.name_any());
        let shard = b.labels().get(SHARD_LABEL).cloned();
        if shard.as_deref() != owner(&key, live) || b.labels().contains_key(DRAIN_LABEL) {
            missing.push(format!("{key}: labels {:?}", b.labels()));
            continue;
        }
        let observed = b.status.as_ref().and_then(|s| s.observed_generation);
        if observed != b.metadata.generation {
            missing.push(format!("{key}: observed {observed:?}"));
            continue;
        }
        let child = children.get(&format!("{}-note", b.name_any()));
        let child_note = child.and_then(|c| c.data.as_ref()?.get("note").cloned());
        let child_shard = child.and_then(|c| c.labels().get(SHARD_LABEL).cloned());
        if child_note.as_deref() != Some(note) || child_shard != shard {
            missing.push(format!("{key}: child {child_note:?} {child_shard:?}"));
        }
    }
    missing
}

/// Waits until everything converged (see [`not_converged`]).
async fn converge(client: &Client, ns: &str, note: &str, live: &[&str]) {
    let live: Vec<String> = live.iter().map(|s| s.to_string()).collect();
    let mut left = Vec::new();
    for _ in 0..600 {
        left = not_converged(client, ns, note, &live).await;
        if left.is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!(
        "not converged on {note:?} with members {live:?} after two minutes: {} parents, e.g. {:?}",
        left.len(),
        &left[..left.len().min(5)]
    );
}

/// Pairs of passes of one parent by two replicas whose times overlap, and passes whose replica was not the
/// parent's owner by its label.
pub fn two_writers(passes: &[Pass]) -> Vec<String> {
    let mut found = Vec::new();
    let mut by_parent: BTreeMap<&str, Vec<&Pass>> = BTreeMap::new();
    for p in passes {
        if p.shard.as_deref() != Some(p.replica.as_str()) {
            found.push(format!(
                "{} ran a pass of {} labelled {:?}",
                p.replica, p.parent, p.shard
            ));
        }
        by_parent.entry(&p.parent).or_default().push(p);
    }
    let far = Instant::now() + Duration::from_secs(3600);
    for (parent, runs) in by_parent {
        for (i, a) in runs.iter().enumerate() {
            for b in &runs[i + 1..] {
                if a.replica == b.replica {
                    continue;
                }
                let (a_end, b_end) = (a.end.unwrap_or(far), b.end.unwrap_or(far));
                if a.start < b_end && b.start < a_end {
                    found.push(format!(
                        "{parent}: passes of {} and {} overlap",
                        a.replica, b.replica
                    ));
                }
            }
        }
    }
    found
}

/// Runs the scenario with `parents` parents in `ns` (the Backlog CRD installed).
pub async fn replicas_share_join_leave_and_die(client: &Client, ns: &str, parents: usize) {
    install_parents(client, ns, parents).await;
    let passes: Passes = Passes::default();
    let a = start(client, ns, "a", &passes);
    let b = start(client, ns, "b", &passes);
    converge(client, ns, "old", &["a", "b"]).await;

    // A member joins during a converge: its parents are handed over by their owners.
    change_all(client, ns, "v2").await;
    let c = start(client, ns, "c", &passes);
    converge(client, ns, "v2", &["a", "b", "c"]).await;
    let handed = kubewright::metrics::Metrics::global()
        .encode()
        .lines()
        .find_map(|l| {
            l.strip_prefix("operator_shard_handovers_total{controller=\"backlog-sharded\"} ")
                .and_then(|n| n.trim().parse::<u64>().ok())
        })
        .unwrap_or(0);
    assert!(handed > 0, "the join moved parents by hand-over");

    // A member stops gracefully: its parents move once it released its Lease.
    b.stop().await;
    change_all(client, ns, "v3").await;
    converge(client, ns, "v3", &["a", "c"]).await;

    // A member is killed mid-pass: its parents move once its Lease expired.
    change_all(client, ns, "v4").await;
    tokio::time::sleep(Duration::from_millis(30)).await;
    c.kill();
    converge(client, ns, "v4", &["a"]).await;
    a.stop().await;

    let passes = passes.lock().unwrap().clone();
    for id in ["a", "b", "c"] {
        assert!(
            passes.iter().any(|p| p.replica == id),
            "replica {id} ran passes"
        );
    }
    let found = two_writers(&passes);
    assert!(
        found.is_empty(),
        "{} violations in {} passes: {:?}",
        found.len(),
        passes.len(),
        &found[..found.len().min(10)]
    );
}
