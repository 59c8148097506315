//! Running a reconciler: triggers and why each pass runs, the work queue (`queue.rs`), backoff, forgetting
//! deleted parents, the controller's metrics.
//!
//! **Priority.** Parents due for a change run before parents due only because a list replayed them, as
//! controller-runtime's priority queue orders them. A pass is due at the low priority when nothing asked for it
//! but the first list of a cache (every object was there before the operator started), a re-list after a lost
//! watch (an object whose `resourceVersion` is at most the highest the cache had seen before the re-list: it
//! did not change while the watch was down), a trigger stream that lagged and reconciles everything, or a
//! periodic resync ([`Reconciler::resync_every`]), or an update of one of its children that kept the child's
//! spec (the same `metadata.generation` and owners, no deletion begun: a workload controller writing the
//! child's status); at the normal priority for anything else (a change to the parent, to its children's specs,
//! a child's deletion, a change to the objects it watches or references, an external trigger, a requeue the
//! pass asked for, a retry). A parent due at the low priority that a change asks for again moves up.
//!
//! Unlike controller-runtime, which runs every update first, a child's status update waits with the replays:
//! when an operator starts on thousands of parents, the passes that create their children go before the passes
//! that report on children already made, and a Deployment's first status updates by kube-controller-manager
//! (two in its first seconds) are read in one pass rather than one pass each. With no backlog, such an update
//! runs at once, as any change. The rule reads resourceVersions as etcd's increasing numbers; with a server
//! whose versions are opaque, every pass is due at the normal priority.
//!
//! **Retries.** A failed pass (an error, a `409 Conflict`) runs again after the later of its parent's
//! [`Backoff`] and a token of the controller's [`RetryRate`] bucket.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::{BoxFuture, FutureExt};
use futures::stream::{self, BoxStream, StreamExt};
use kube::runtime::reflector::ObjectRef;
use kube::{Client, ResourceExt};
use tokio::sync::watch;
use tracing::Instrument;

use crate::cache::{Caches, Change};
use crate::command::{ApiDispatcher, Dispatcher};
use crate::error::Error;
use crate::metrics::Metrics;
use crate::outcome::Outcome;
use crate::owners::controller_parents;
use crate::probes::Health;
use crate::reconciler::{ParentKind, Reconciler};
use crate::reconcilers::Changed;
use crate::sharding::{Admit, Gate};
use crate::tracker::Tracker;
use crate::triggers::NextPass;

mod queue;
mod rate;
mod why;
pub(crate) use queue::Priority;
pub use rate::RetryRate;
use why::Why;

/// How long a parent whose spec is invalid ([`Error::invalid_spec`]) waits for a pass when nothing changes: only
/// a change can fix such a spec, and the change queues the parent at once.
pub const INVALID_SPEC_RECHECK: Duration = Duration::from_secs(10 * 60);

/// How long a pass that met a `409 Conflict` waits before it runs again (or longer, for the retry bucket).
const CONFLICT_RETRY: Duration = Duration::from_millis(200);

/// Exponential backoff per object after errors (not after an invalid spec, which waits for a change).
#[derive(Debug, Clone, Copy)]
pub struct Backoff {
    /// The first delay.
    pub initial: Duration,
    /// The longest delay.
    pub max: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(500),
            max: Duration::from_secs(300),
        }
    }
}

impl Backoff {
    /// The delay after `failures` consecutive failures.
    pub fn delay(&self, failures: u32) -> Duration {
        let factor = 2u32.saturating_pow(failures.saturating_sub(1).min(20));
        self.initial.saturating_mul(factor).min(self.max)
    }
}

struct Shared<P: ParentKind> {
    reconciler: Arc<Reconciler<P>>,
    caches: Caches,
    dispatcher: Arc<dyn Dispatcher>,
    tracker: Arc<Tracker<P>>,
    failures: Mutex<HashMap<ObjectRef<P>, u32>>,
    /// The invalid-spec error last logged for each parent whose spec is invalid, so each is logged once.
    invalid: Mutex<HashMap<ObjectRef<P>, String>>,
    backoff: Backoff,
    /// The overall rate of retries, beside `backoff`.
    retries: Mutex<rate::Bucket>,
    /// The operator's shutdown signal, set when the controller starts.
    stop: std::sync::OnceLock<watch::Receiver<bool>>,
    /// Why each parent is due for a pass, from the triggers that queued it (see [`Why`]).
    why: Arc<Why<P>>,
    /// Queues a parent whose changes, held while its pass ran, were not all echoes of that pass.
    held_changed: futures::channel::mpsc::UnboundedSender<ObjectRef<P>>,
    /// The operator's health, told of every pass in flight (a pass that never ends fails the liveness probe).
    health: Health,
}

impl<P: ParentKind> Shared<P> {
    /// Takes a token of the controller's retry bucket: how long a retry must wait for it.
    fn retry_wait(&self) -> Duration {
        self.retries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .reserve()
    }

    fn parent_exists(&self, parent: &ObjectRef<P>) -> bool {
        self.caches
            .get::<P>()
            .is_some_and(|c| c.get(parent.namespace.as_deref(), &parent.name).is_some())
    }

    /// Frees everything kept about a parent that was deleted: what it tracked, its failure count, the
    /// reconciler's memory of its writes.
    fn forget(&self, parent: &ObjectRef<P>, uid: Option<&str>) {
        self.tracker.forget(parent);
        self.why.forget(parent);
        self.failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(parent);
        self.invalid
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(parent);
        if let Some(uid) = uid {
            self.reconciler.forget(uid);
        }
    }

    /// Forgets every parent the cache no longer holds.
    fn sweep(&self) {
        let Some(cache) = self.caches.get::<P>() else {
            return;
        };
        for parent in self.tracker.parents() {
            if !self.parent_exists(&parent) {
                self.tracker.forget(&parent);
            }
        }
        self.failures
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|parent, _| {
                cache
                    .get(parent.namespace.as_deref(), &parent.name)
                    .is_some()
            });
        self.invalid
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|parent, _| {
                cache
                    .get(parent.namespace.as_deref(), &parent.name)
                    .is_some()
            });
        let uids: std::collections::HashSet<String> =
            cache.state().iter().filter_map(|p| p.uid()).collect();
        self.reconciler.retain(|uid| uids.contains(uid));
    }
}

/// Forgets each parent the cache sees deleted, so per-parent state does not grow with churn. Runs until the
/// cache goes away (then waits forever: the controller beside it decides when the runner ends).
async fn forget_deleted<P: ParentKind>(
    mut changes: crate::cache::Changes<P>,
    shared: Arc<Shared<P>>,
) {
    use crate::cache::RecvError;
    loop {
        match changes.recv().await {
            Ok(Change::Deleted(parent)) => {
                let obj_ref = ObjectRef::from_obj(parent.as_ref());
                // A parent deleted and created again under the same name before this ran is not forgotten.
                if !shared.parent_exists(&obj_ref) {
                    shared.forget(&obj_ref, parent.uid().as_deref());
                }
            }
            Ok(Change::Applied(_)) => {}
            Err(RecvError::Lagged(missed)) => {
                // Deletions were missed: forget every parent the cache no longer holds.
                tracing::debug!(missed, "deletion stream lagged; sweeping per-parent state");
                shared.sweep();
            }
            Err(RecvError::Closed) => break,
        }
    }
    std::future::pending::<()>().await
}

/// A controller's run, to start when the operator runs: it takes the shutdown signal.
pub(crate) type Runner = Box<dyn FnOnce(watch::Receiver<bool>) -> BoxFuture<'static, ()> + Send>;

/// The run of a controller for `P` over `caches`, writing through `client`, and its planner (the same
/// reconciler's passes as dry runs, [`crate::plan`]); `None` (logged) when the parent's cache already started,
/// so no trigger could reach the controller.
pub(crate) fn runner<P: ParentKind>(
    client: &Client,
    caches: &Caches,
    reconciler: Reconciler<P>,
    backoff: Backoff,
    retry_rate: RetryRate,
    health: Health,
    gate: Gate,
) -> Option<(Runner, crate::plan::Planner)> {
    let caches = caches.clone();
    let parent_cache = caches.ensure::<P>();
    let Some(parent_stream) = parent_cache.subscribe() else {
        tracing::error!(kind = %<P as kube::Resource>::kind(&()), "the parent cache already started; controller not added");
        return None;
    };
    let wiring = reconciler.wiring();
    // What a sharded member relabels when it hands a parent over: the parent and its children.
    let parents_resource = kube::api::ApiResource::erase::<P>(&());
    let children_resources: Vec<kube::api::ApiResource> = wiring
        .kinds()
        .iter()
        .filter(|k| k.role == crate::reconcilers::Role::Owned)
        .map(crate::reconcilers::WiredKind::api_resource)
        .collect();
    let tracker = Tracker::<P>::new();
    let mut changes: Vec<BoxStream<'static, (Changed, Priority)>> = Vec::new();
    for kind in wiring.kinds() {
        let kind_changes = (kind.changes)(&caches);
        // Events that replay a list, and updates of a child that kept its spec, queue their parents behind the
        // changes (`queue::Priority`).
        let replayed = caches
            .replayed_of(&kind.api_version, &kind.kind)
            .unwrap_or_default();
        let child = kind.role == crate::reconcilers::Role::Owned;
        changes.push(
            kind_changes
                .map(move |changed| {
                    let priority = match &changed {
                        Changed::Object { meta, .. } => {
                            let version = meta.resource_version.as_deref();
                            Priority::replay_if(
                                replayed.replays(version)
                                    || (child && replayed.spec_kept().kept(version)),
                            )
                        }
                        Changed::Lagged => Priority::Low,
                    };
                    (changed, priority)
                })
                .boxed(),
        );
    }
    let mapped: Vec<BoxStream<'static, crate::reconciler::Mapped<P>>> = reconciler
        .mappers
        .iter()
        .chain(&reconciler.external)
        .map(|m| m(&caches))
        .collect();
    // The work queue looks each parent up in the parent kind's reflector store: the parent's cache is typed.
    let store = parent_cache.store().clone();
    let deletions = parent_cache.changes();
    let why: Arc<Why<P>> = Arc::new(Why::new(reconciler.name(), reconciler.echoes()));
    let parent_why = why.clone();
    let trigger_why = why.clone();
    let mapped_why = why.clone();
    let trigger_tracker = tracker.clone();
    let trigger_written = reconciler.written();
    let trigger_store = store.clone();
    let triggers = stream::select_all(changes)
        .flat_map(move |(changed, priority)| {
            let refs: Vec<ObjectRef<P>> = match changed {
                Changed::Object {
                    api_version,
                    kind,
                    meta,
                } => {
                    // Named only for a parent it queues (most events of a busy controller are echoes).
                    let name = || match &meta.namespace {
                        Some(ns) => {
                            format!("{ns}/{}", meta.name.as_deref().unwrap_or_default())
                        }
                        None => meta.name.clone().unwrap_or_default(),
                    };
                    if let (Some(uid), Some(version)) = (&meta.uid, &meta.resource_version) {
                        trigger_written.seen_version(uid, version);
                    }
                    // The echo of a write of its controller's own pass queues nothing: that pass reported the
                    // child from the API's answer; a change during the owner's pass is held until it ends
                    // (`Why::record_change`).
                    let writer = meta
                        .owner_references
                        .iter()
                        .flatten()
                        .find(|r| r.controller == Some(true))
                        .map(|r| r.uid.as_str());
                    let mut owners = controller_parents::<P>(&api_version, &kind, &meta);
                    owners.retain(|r| {
                        trigger_why.record_change(
                            r,
                            writer,
                            || format!("child {kind} {} changed", name()),
                            &meta,
                        )
                    });
                    let tracking = trigger_tracker.parents_of_meta(&api_version, &kind, &meta);
                    if !tracking.is_empty() {
                        let tracked = format!("tracked {kind} {} changed", name());
                        for r in &tracking {
                            trigger_why.record(r, &tracked);
                        }
                    }
                    owners.into_iter().chain(tracking).collect()
                }
                Changed::Lagged => {
                    let all: Vec<ObjectRef<P>> = trigger_store
                        .state()
                        .iter()
                        .map(|p| ObjectRef::from_obj(p.as_ref()))
                        .collect();
                    for r in &all {
                        trigger_why.record(r, "changes were missed; reconciling everything");
                    }
                    all
                }
            };
            stream::iter(refs.into_iter().map(move |r| (r, priority)))
        })
        .chain(stream::pending());
    let mapped = stream::select_all(mapped)
        .flat_map(move |(reason, refs, priority)| {
            for r in &refs {
                mapped_why.record(r, &reason);
            }
            stream::iter(refs.into_iter().map(move |r| (r, priority)))
        })
        .chain(stream::pending());
    let triggers = stream::select(triggers, mapped);
    let (concurrency, debounce) = (reconciler.concurrency, reconciler.debounce);
    let dispatcher: Arc<dyn Dispatcher> =
        Arc::new(ApiDispatcher::new(client.clone(), reconciler.name()));
    // The parents whose changes, held while their pass ran, were not its echoes.
    let (held_changed, held) = futures::channel::mpsc::unbounded();
    let reconciler = Arc::new(reconciler);
    let planner = crate::plan::planner(reconciler.clone(), client.clone(), caches.clone());
    let shared = Arc::new(Shared {
        reconciler,
        caches,
        dispatcher,
        tracker,
        failures: Mutex::default(),
        invalid: Mutex::default(),
        backoff,
        retries: Mutex::new(rate::Bucket::new(retry_rate)),
        stop: std::sync::OnceLock::new(),
        why,
        held_changed,
        health,
    });
    let runner: Runner = Box::new(move |mut stop: watch::Receiver<bool>| {
        let name = shared.reconciler.name().to_string();
        let _ = shared.stop.set(stop.clone());
        let signal = async move {
            let _ = stop.wait_for(|s| *s).await;
        };
        let forgetting = forget_deleted(deletions, shared.clone());
        Metrics::global().controller_started(&name, concurrency);
        let parent_shared = shared.clone();
        let parent_replayed = parent_shared.caches.ensure::<P>().replayed().clone();
        let parent_stream = parent_stream.filter_map(move |p| {
            parent_shared.reconciler.observed(&p);
            // The echo of its own pass's status write queues nothing.
            let obj_ref = ObjectRef::from_obj(p.as_ref());
            let queued = parent_why.record_change(
                &obj_ref,
                p.meta().uid.as_deref(),
                || "the parent changed".into(),
                p.meta(),
            );
            let priority =
                Priority::replay_if(parent_replayed.replays(p.meta().resource_version.as_deref()));
            std::future::ready(queued.then_some((obj_ref, priority)))
        });
        let held = held.map(|r| (r, Priority::Normal));
        let requests = stream::select(parent_stream, stream::select(triggers, held));
        // No pass before every cache holds its first list: on a half-filled cache a child not listed yet looks
        // absent (a needless write) and a tracked object not listed yet looks missing (a false invalid spec). The
        // queue itself waits, not each pass: a pass that started once the parent's list was in waited for the
        // others inside it, and the children's list events that came meanwhile ran its parent again after it
        // (on every restart, as many second passes as the controller's concurrency).
        let ready_store = store.clone();
        let ready_shared = shared.clone();
        let ready = async move {
            let _ = ready_store.wait_until_ready().await;
            caches_synced(&ready_shared.caches, ready_shared.reconciler.name()).await;
        };
        let start = move |obj_ref: ObjectRef<P>| {
            let Some(parent) = store.get(&obj_ref) else {
                tracing::debug!(parent = %obj_ref, "deleted since it was queued; no pass");
                return None;
            };
            // A sharded member runs only its own parents, and hands one over instead when asked.
            let hand_over = match gate.admit(parent.meta()) {
                Admit::Pass => None,
                Admit::Skip(why) => {
                    tracing::debug!(parent = %obj_ref, why, "no pass");
                    return None;
                }
                Admit::HandOver { to } => Some(to),
            };
            let shared = shared.clone();
            let (gate, parents, children) = (
                gate.clone(),
                parents_resource.clone(),
                children_resources.clone(),
            );
            Some(async move {
                if let Some(to) = hand_over {
                    return match gate
                        .hand_over(&shared.caches, &parents, &children, parent.meta(), &to)
                        .await
                    {
                        Ok(_) => {
                            Metrics::global().handed_over(shared.reconciler.name());
                            None
                        }
                        Err(e) => {
                            tracing::warn!(parent = %ObjectRef::from_obj(parent.as_ref()), error = %e, "cannot hand the parent over yet; retrying");
                            Some((CONFLICT_RETRY.max(shared.retry_wait()), Priority::Normal))
                        }
                    };
                }
                match reconcile(parent.clone(), shared.clone()).await {
                    Ok(next) => next,
                    Err(e) => Some((error_policy(parent, &e, shared), Priority::Normal)),
                }
            })
        };
        let controller = queue::run(requests, debounce, concurrency, ready, signal, start);
        async move {
            tokio::select! {
                _ = controller => {},
                _ = forgetting => {},
            }
            tracing::info!(controller = %name, "stopped");
        }
        .boxed()
    });
    Some((runner, planner))
}

/// Waits until every cache holds its first list, warning while it takes long (e.g. a kind that cannot be
/// listed), naming the kinds not synced and what the server answered their watches.
async fn caches_synced(caches: &Caches, controller: &str) {
    let started = std::time::Instant::now();
    while let Err(e) = caches.ready_within(Duration::from_secs(30)).await {
        tracing::warn!(controller, waited = ?started.elapsed(), error = %e, "caches not synced yet; reconciles wait");
    }
}

async fn reconcile<P: ParentKind>(
    parent: Arc<P>,
    shared: Arc<Shared<P>>,
) -> Result<Option<(Duration, Priority)>, Error> {
    let obj_ref = ObjectRef::from_obj(parent.as_ref());
    let retrying = shared
        .failures
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains_key(&obj_ref);
    let uid = parent.uid();
    let due = shared.why.take(&obj_ref, uid.as_deref(), retrying);
    if due.echoes_only {
        // The pass would start from what the last one wrote and find nothing to do.
        tracing::debug!(parent = %obj_ref, why = %due.why, "only echoes of the last pass's writes; no pass");
        return Ok(None);
    }
    let (why, waited) = (due.why, due.waited);
    let metrics = Metrics::global();
    let controller = shared.reconciler.name();
    metrics.pass_started(controller, waited.map(|w| w.as_secs_f64()));
    let started = Instant::now();
    let parent_name = match &obj_ref.namespace {
        Some(ns) => format!("{ns}/{}", obj_ref.name),
        None => obj_ref.name.clone(),
    };
    let in_flight = shared.health.pass_started(controller, parent_name);
    let running = Running::new(&shared.why, &obj_ref);
    let (result, action) = pass(parent, &obj_ref, &why, &shared).await;
    if let Some(uid) = &uid
        && running.ended(uid)
    {
        let _ = shared.held_changed.unbounded_send(obj_ref.clone());
    }
    drop(in_flight);
    metrics.pass_ended(controller, started.elapsed().as_secs_f64(), result);
    if result == "requeue" {
        metrics.retried(controller);
    }
    action
}

/// A pass in flight, for [`Why`] to hold the changes to its parent and children until it ends (also when
/// the pass is dropped at shutdown).
struct Running<'a, P: ParentKind> {
    why: &'a Why<P>,
    parent: &'a ObjectRef<P>,
    ended: bool,
}

impl<'a, P: ParentKind> Running<'a, P> {
    fn new(why: &'a Why<P>, parent: &'a ObjectRef<P>) -> Self {
        why.pass_started(parent);
        Self {
            why,
            parent,
            ended: false,
        }
    }

    /// Ends the pass of the parent whose uid is `uid`: whether a change held meanwhile was not its echo.
    fn ended(mut self, uid: &str) -> bool {
        self.ended = true;
        self.why.pass_ended(self.parent, uid)
    }
}

impl<P: ParentKind> Drop for Running<'_, P> {
    fn drop(&mut self) {
        if !self.ended {
            self.why.pass_dropped(self.parent);
        }
    }
}

/// One pass over `parent`, and its result as the metrics name it (`success`, `error`, `requeue`,
/// `requeue_after`).
async fn pass<P: ParentKind>(
    parent: Arc<P>,
    obj_ref: &ObjectRef<P>,
    why: &str,
    shared: &Arc<Shared<P>>,
) -> (&'static str, Result<Option<(Duration, Priority)>, Error>) {
    // Every log line of the pass says which parent and why it runs.
    let span = tracing::info_span!("pass", parent = %obj_ref, why = %why);
    tracing::debug!(parent = %obj_ref, why = %why, "reconciling");
    // What the pass tracks is tracked as it reads it, so that a change during the pass reaches the parent.
    let on_track: crate::context::TrackHook = {
        let (tracker, parent) = (shared.tracker.clone(), obj_ref.clone());
        Arc::new(move |key: &crate::tracker::TrackKey| tracker.add(&parent, key))
    };
    let pass = shared
        .reconciler
        .run_pass_until(
            parent.as_ref(),
            &shared.caches,
            shared.dispatcher.clone(),
            shared.stop.get().cloned(),
            Some(on_track),
        )
        .instrument(span)
        .await;
    if pass.result.is_ok() && pass.context.commands().is_empty() {
        Metrics::global().pass_wrote_nothing(shared.reconciler.name());
    }
    if shared.parent_exists(obj_ref) {
        shared
            .tracker
            .set(obj_ref.clone(), pass.context.tracks().to_vec());
    } else {
        // Deleted while the pass ran: what it tracked would never be forgotten.
        shared.forget(obj_ref, parent.uid().as_deref());
        return ("success", Ok(None));
    }
    let asked = |d: Option<Duration>| {
        let next = shared.reconciler.next_pass(obj_ref, d);
        match next {
            NextPass { resync: true, .. } => shared.why.resync(obj_ref),
            NextPass { after: Some(_), .. } => shared.why.requeue(obj_ref),
            NextPass { after: None, .. } => {}
        }
        // A resync runs after the changes; a requeue the pass asked for is as a change.
        let priority = Priority::replay_if(next.resync);
        next.after.map(|after| (after, priority))
    };
    let (result, action) = match pass.result {
        Ok(Outcome::Continue) | Ok(Outcome::Halt) => ("success", asked(None)),
        Ok(Outcome::RequeueAfter(d)) => ("requeue_after", asked(Some(d))),
        Err(Error::Yield) => {
            shared.why.requeue(obj_ref);
            ("requeue", Some((Duration::ZERO, Priority::Normal)))
        }
        Err(e) if e.is_conflict() => {
            let delay = CONFLICT_RETRY.max(shared.retry_wait());
            tracing::debug!(object = %obj_ref, retry_in = ?delay, "conflict; requeueing");
            shared.why.requeue(obj_ref);
            ("requeue", Some((delay, Priority::Normal)))
        }
        Err(e @ Error::InvalidSpec { .. }) => {
            // Only a change can fix it, and a change queues the parent: no backoff, one log line.
            let text = e.to_string();
            let mut invalid = shared.invalid.lock().unwrap_or_else(|p| p.into_inner());
            if invalid.get(obj_ref) != Some(&text) {
                tracing::info!(object = %obj_ref, error = %text, recheck_in = ?INVALID_SPEC_RECHECK, "spec cannot be realised; waiting for a change");
                invalid.insert(obj_ref.clone(), text);
            }
            drop(invalid);
            let recheck = asked(Some(INVALID_SPEC_RECHECK));
            shared
                .failures
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(obj_ref);
            return ("error", Ok(recheck));
        }
        Err(e) => return ("error", Err(e)),
    };
    shared
        .failures
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(obj_ref);
    shared
        .invalid
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(obj_ref);
    (result, Ok(action))
}

fn error_policy<P: ParentKind>(parent: Arc<P>, error: &Error, shared: Arc<Shared<P>>) -> Duration {
    let obj_ref = ObjectRef::from_obj(parent.as_ref());
    let failures = {
        let mut map = shared.failures.lock().unwrap_or_else(|e| e.into_inner());
        let n = map.entry(obj_ref.clone()).or_insert(0);
        *n += 1;
        *n
    };
    let delay = shared.backoff.delay(failures).max(shared.retry_wait());
    Metrics::global().retried(shared.reconciler.name());
    tracing::warn!(object = %obj_ref, error = %error, failures, retry_in = ?delay, "reconcile failed");
    delay
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_cap() {
        let b = Backoff {
            initial: Duration::from_secs(1),
            max: Duration::from_secs(10),
        };
        assert_eq!(b.delay(1), Duration::from_secs(1));
        assert_eq!(b.delay(2), Duration::from_secs(2));
        assert_eq!(b.delay(4), Duration::from_secs(8));
        assert_eq!(b.delay(9), Duration::from_secs(10));
    }
}
