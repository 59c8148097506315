//! Running reconcilers on `kube_runtime::Controller`: triggers, backoff, shared caches, graceful shutdown.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::{BoxFuture, FutureExt};
use futures::stream::{self, BoxStream, StreamExt};
use kube::runtime::controller::{Action, Config as ControllerConfig, Controller};
use kube::runtime::reflector::ObjectRef;
use kube::{Client, ResourceExt};
use tokio::sync::watch;
use tracing::Instrument;

use crate::cache::{Caches, Change};
use crate::command::{ApiDispatcher, Dispatcher};
use crate::error::Error;
use crate::leader::{Elector, LeaderElection, LeaderElectionError};
use crate::outcome::Outcome;
use crate::reconciler::{ParentKind, Reconciler, controller_parents};
use crate::reconcilers::Changed;
use crate::tracker::Tracker;

/// Exponential backoff per object after errors.
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
    reconciler: Reconciler<P>,
    caches: Caches,
    dispatcher: Arc<dyn Dispatcher>,
    tracker: Arc<Tracker<P>>,
    failures: Mutex<HashMap<ObjectRef<P>, u32>>,
    backoff: Backoff,
    /// Set once every cache holds its first list.
    synced: tokio::sync::OnceCell<()>,
    /// The operator's shutdown signal, set when the controller starts.
    stop: std::sync::OnceLock<watch::Receiver<bool>>,
    /// Why each parent is due for a pass, from the triggers that queued it (see [`Why`]).
    why: Arc<Why<P>>,
}

/// How many reasons are kept per queued parent (a burst of changes to its children is summed up).
const REASONS: usize = 4;

/// Why parents are due for a pass: the triggers record the change that queued a parent, the pass takes it.
struct Why<P: kube::Resource<DynamicType = ()>> {
    queued: Mutex<HashMap<ObjectRef<P>, Vec<String>>>,
    requeued: Mutex<std::collections::HashSet<ObjectRef<P>>>,
}

impl<P: kube::Resource<DynamicType = ()>> Default for Why<P> {
    fn default() -> Self {
        Self {
            queued: Mutex::default(),
            requeued: Mutex::default(),
        }
    }
}

impl<P: kube::Resource<DynamicType = ()>> Why<P> {
    fn record(&self, parent: &ObjectRef<P>, why: &str) {
        let mut queued = self.queued.lock().unwrap_or_else(|e| e.into_inner());
        let reasons = queued.entry(parent.clone()).or_default();
        if reasons.len() < REASONS && !reasons.iter().any(|r| r == why) {
            reasons.push(why.to_string());
        } else if reasons.len() == REASONS && !reasons.iter().any(|r| r == "…") {
            reasons.push("…".into());
        }
    }

    /// Why `parent` runs now: the recorded changes, a requeue, a retry after an error, or its own change.
    fn take(&self, parent: &ObjectRef<P>, retrying: bool) -> String {
        let reasons = self
            .queued
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(parent);
        let requeued = self
            .requeued
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(parent);
        match reasons {
            Some(r) if !r.is_empty() => r.join("; "),
            _ if retrying => "retry after an error".into(),
            _ if requeued => "requeue".into(),
            _ => "the parent changed".into(),
        }
    }

    fn requeue(&self, parent: &ObjectRef<P>) {
        self.requeued
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(parent.clone());
    }

    fn forget(&self, parent: &ObjectRef<P>) {
        self.queued
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(parent);
        self.requeued
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(parent);
    }
}

impl<P: ParentKind> Shared<P> {
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
        let uids: std::collections::HashSet<String> = cache
            .store()
            .state()
            .iter()
            .filter_map(|p| p.uid())
            .collect();
        self.reconciler.retain(|uid| uids.contains(uid));
    }
}

/// Forgets each parent the cache sees deleted, so per-parent state does not grow with churn. Runs until the
/// cache goes away (then waits forever: the controller beside it decides when the runner ends).
async fn forget_deleted<P: ParentKind>(
    mut changes: tokio::sync::broadcast::Receiver<Change<P>>,
    shared: Arc<Shared<P>>,
) {
    use tokio::sync::broadcast::error::RecvError;
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

type Runner = Box<dyn FnOnce(watch::Receiver<bool>) -> BoxFuture<'static, ()> + Send>;

/// Runs any number of controllers over one set of shared caches until shutdown.
///
/// ```no_run
/// # use operator::{Operator, Reconciler};
/// # async fn run<P: operator::ParentKind>(client: kube::Client, reconciler: Reconciler<P>) {
/// Operator::new(client).controller(reconciler).run_until_signal().await.unwrap();
/// # }
/// ```
pub struct Operator {
    client: Client,
    caches: Caches,
    runners: Vec<Runner>,
    deadline: Duration,
    backoff: Backoff,
    health: crate::probes::Health,
    leader: Option<LeaderElection>,
    names: Vec<String>,
}

impl std::fmt::Debug for Operator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Operator")
            .field("caches", &self.caches)
            .field("controllers", &self.runners.len())
            .finish_non_exhaustive()
    }
}

impl Operator {
    /// An operator talking to the cluster through `client`.
    pub fn new(client: Client) -> Self {
        Self {
            caches: Caches::new(client.clone()),
            client,
            runners: Vec::new(),
            deadline: Duration::from_secs(30),
            backoff: Backoff::default(),
            health: crate::probes::Health::default(),
            leader: None,
            names: Vec::new(),
        }
    }

    /// The shared caches.
    pub fn caches(&self) -> &Caches {
        &self.caches
    }

    /// What the health probes report about this operator ([`crate::probes`]): ready once every cache holds
    /// its first list, alive while it runs with all its controllers.
    pub fn health(&self) -> crate::probes::Health {
        self.health.clone()
    }

    /// How long in-flight passes may take to finish after shutdown starts (default 30s).
    pub fn shutdown_deadline(mut self, d: Duration) -> Self {
        self.deadline = d;
        self
    }

    /// The error backoff for every controller added after this call.
    pub fn backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// Adds a controller for `P`.
    pub fn controller<P: ParentKind>(mut self, reconciler: Reconciler<P>) -> Self {
        let caches = self.caches.clone();
        let parent_cache = caches.ensure::<P>();
        let Some(parent_stream) = parent_cache.subscribe() else {
            tracing::error!(kind = %<P as kube::Resource>::kind(&()), "the parent cache already started; controller not added");
            return self;
        };
        self.names.push(reconciler.name().to_string());
        let wiring = reconciler.wiring();
        let tracker = Tracker::<P>::new();
        let mut changes: Vec<BoxStream<'static, Changed>> = Vec::new();
        for kind in wiring.kinds() {
            changes.push((kind.changes)(&caches));
        }
        let mapped: Vec<BoxStream<'static, (String, Vec<ObjectRef<P>>)>> =
            reconciler.mappers.iter().map(|m| m(&caches)).collect();
        let store = parent_cache.store().clone();
        let deletions = parent_cache.changes();
        let why: Arc<Why<P>> = Arc::default();
        let trigger_why = why.clone();
        let mapped_why = why.clone();
        let trigger_tracker = tracker.clone();
        let trigger_store = store.clone();
        let triggers = stream::select_all(changes)
            .flat_map(move |changed| {
                let refs: Vec<ObjectRef<P>> = match changed {
                    Changed::Object {
                        api_version,
                        kind,
                        meta,
                    } => {
                        let name = match &meta.namespace {
                            Some(ns) => {
                                format!("{ns}/{}", meta.name.as_deref().unwrap_or_default())
                            }
                            None => meta.name.clone().unwrap_or_default(),
                        };
                        let owners = controller_parents::<P>(&api_version, &kind, &meta);
                        let child = format!("child {kind} {name} changed");
                        for r in &owners {
                            trigger_why.record(r, &child);
                        }
                        let tracking = trigger_tracker.parents_of_meta(&api_version, &kind, &meta);
                        let tracked = format!("tracked {kind} {name} changed");
                        for r in &tracking {
                            trigger_why.record(r, &tracked);
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
                stream::iter(refs)
            })
            .chain(stream::pending());
        let mapped = stream::select_all(mapped)
            .flat_map(move |(reason, refs)| {
                for r in &refs {
                    mapped_why.record(r, &reason);
                }
                stream::iter(refs)
            })
            .chain(stream::pending());
        let triggers = stream::select(triggers, mapped);
        let config = ControllerConfig::default()
            .concurrency(reconciler.concurrency)
            .debounce(reconciler.debounce);
        let dispatcher: Arc<dyn Dispatcher> =
            Arc::new(ApiDispatcher::new(self.client.clone(), reconciler.name()));
        let shared = Arc::new(Shared {
            reconciler,
            caches,
            dispatcher,
            tracker,
            failures: Mutex::default(),
            backoff: self.backoff,
            synced: tokio::sync::OnceCell::new(),
            stop: std::sync::OnceLock::new(),
            why,
        });
        let deadline = self.deadline;
        self.runners
            .push(Box::new(move |mut stop: watch::Receiver<bool>| {
                let name = shared.reconciler.name().to_string();
                let _ = shared.stop.set(stop.clone());
                let signal = async move {
                    let _ = stop.wait_for(|s| *s).await;
                };
                let forgetting = forget_deleted(deletions, shared.clone());
                let controller = Controller::for_shared_stream(parent_stream, store)
                    .with_config(config)
                    .reconcile_on(triggers)
                    .graceful_shutdown_on(signal)
                    .run(reconcile::<P>, error_policy::<P>, shared)
                    .for_each(|res| async move {
                        if let Err(e) = res {
                            tracing::debug!(error = %e, "controller event");
                        }
                    });
                async move {
                    tokio::select! {
                        _ = controller => {},
                        _ = forgetting => {},
                    }
                    tracing::info!(controller = %name, "stopped");
                    let _ = deadline;
                }
                .boxed()
            }));
        self
    }

    /// Elects a leader before running the controllers ([`crate::leader`]): caches fill on every replica,
    /// only the one holding the Lease reconciles.
    pub fn leader_election(mut self, election: LeaderElection) -> Self {
        self.leader = Some(election);
        self
    }

    /// The names of the controllers added so far.
    pub fn controller_names(&self) -> &[String] {
        &self.names
    }

    /// A Lease name for this operator's leader election, from its controllers' names (sorted, joined by
    /// `-`, with `-leader`; at most 63 characters), so replicas of one operator agree on it.
    pub fn lease_name(&self) -> String {
        let mut names = self.names.clone();
        names.sort();
        names.dedup();
        let base = if names.is_empty() {
            "operator".to_string()
        } else {
            names.join("-")
        };
        let mut base: String = base
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .take(63 - "-leader".len())
            .collect();
        while base.ends_with(['-', '.']) {
            base.pop();
        }
        format!("{base}-leader")
    }

    /// The client the operator talks through.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Runs until Ctrl-C (SIGINT) or SIGTERM, then shuts down gracefully (see [`Operator::run_until`]).
    pub async fn run_until_signal(self) -> Result<(), RunError> {
        self.run_until(shutdown_signal()).await
    }

    /// Runs until `shutdown` resolves: then stops taking work, lets in-flight passes finish within the
    /// deadline, stops every watch, releases the Lease if it leads, and returns with no task left running.
    ///
    /// With [leader election](Operator::leader_election) the caches fill at once and the controllers start
    /// when this replica takes the Lease. Losing it stops every controller at once (no pass finishes) and
    /// returns [`RunError::LeadershipLost`]: the process should exit, as controller-runtime's does, and
    /// start again as a standby.
    pub async fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<(), RunError> {
        let Operator {
            client,
            caches,
            runners,
            deadline,
            health,
            leader,
            ..
        } = self;
        let mut elector = match leader {
            Some(election) => {
                election.validate()?;
                Some(Elector::new(client, election))
            }
            None => None,
        };
        let mut watches = tokio::task::JoinSet::new();
        for w in caches.take_watches() {
            watches.spawn(w);
        }
        {
            let (caches, health) = (caches.clone(), health.clone());
            watches.spawn(
                async move {
                    caches.ready().await;
                    health.set_synced();
                }
                .boxed(),
            );
        }
        health.set_running(true);
        tracing::info!(kinds = ?caches.kinds(), "operator started");
        let stopped = |mut watches: tokio::task::JoinSet<()>, health: crate::probes::Health| async move {
            watches.abort_all();
            while watches.join_next().await.is_some() {}
            health.set_running(false);
            tracing::info!("operator stopped");
        };
        let mut shutdown = std::pin::pin!(shutdown);
        if let Some(elector) = &mut elector {
            tokio::select! {
                _ = &mut shutdown => {
                    tracing::info!("shutdown requested before this replica led");
                    stopped(watches, health).await;
                    return Ok(());
                }
                _ = elector.acquire() => health.set_leader(true),
            }
        }
        let (stop_tx, stop_rx) = watch::channel(false);
        let mut tasks = tokio::task::JoinSet::new();
        let controllers = runners.len();
        for runner in runners {
            tasks.spawn(runner(stop_rx.clone()));
        }
        let lost = tokio::select! {
            _ = &mut shutdown => {
                tracing::info!("shutdown requested");
                None
            }
            lost = hold(&mut elector) => Some(lost),
            _ = async {
                if controllers == 0 {
                    std::future::pending::<()>().await;
                }
                while tasks.join_next().await.is_some() {
                    // Before shutdown a controller ends only on a fatal error: the liveness probe says so.
                    if health.is_alive() {
                        tracing::error!("a controller ended; the liveness probe now fails");
                    }
                    health.set_failed();
                }
            } => None,
        };
        let lost = match lost {
            Some(lost) => Some(lost),
            None => {
                let _ = stop_tx.send(true);
                // The Lease is renewed while in-flight passes finish, so no standby writes beside them.
                tokio::select! {
                    drained = tokio::time::timeout(deadline, async {
                        while tasks.join_next().await.is_some() {}
                    }) => {
                        if drained.is_err() {
                            tracing::warn!(deadline = ?deadline, "in-flight reconciles did not finish in time; aborting them");
                        }
                        None
                    }
                    lost = hold(&mut elector) => Some(lost),
                }
            }
        };
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
        health.set_leader(false);
        let result = match (lost, &mut elector) {
            (Some(lost), Some(elector)) => {
                tracing::error!(lease = %elector.config().name(), reason = %lost, "leadership lost; stopped every controller");
                Err(RunError::LeadershipLost {
                    lease: format!(
                        "{}/{}",
                        elector.config().namespace(),
                        elector.config().name()
                    ),
                    reason: lost.to_string(),
                })
            }
            (_, Some(elector)) => {
                elector.release().await;
                Ok(())
            }
            (_, None) => Ok(()),
        };
        stopped(watches, health).await;
        result
    }
}

/// Renews the Lease while this replica leads; without leader election, never resolves.
async fn hold(elector: &mut Option<Elector>) -> crate::leader::Lost {
    match elector {
        Some(elector) => elector.hold().await,
        None => std::future::pending().await,
    }
}

/// Why [`Operator::run_until`] returned other than by the shutdown it was given.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The leader election's settings cannot elect safely.
    #[error("leader election: {0}")]
    LeaderElection(#[from] LeaderElectionError),
    /// This replica led and lost its Lease; every controller stopped at once.
    #[error("lost the lease {lease} ({reason}); every controller stopped")]
    LeadershipLost {
        /// The Lease, as `namespace/name`.
        lease: String,
        /// Why it was lost.
        reason: String,
    },
}

/// Waits until every cache holds its first list, warning while it takes long (e.g. a kind that cannot be
/// listed), naming the kinds not synced and what the server answered their watches.
async fn caches_synced(caches: &Caches, controller: &str) {
    let started = std::time::Instant::now();
    while let Err(e) = caches.ready_within(Duration::from_secs(30)).await {
        tracing::warn!(controller, waited = ?started.elapsed(), error = %e, "caches not synced yet; reconciles wait");
    }
}

async fn reconcile<P: ParentKind>(parent: Arc<P>, shared: Arc<Shared<P>>) -> Result<Action, Error> {
    let obj_ref = ObjectRef::from_obj(parent.as_ref());
    // No pass before every cache holds its first list: on a half-filled cache a child not listed yet looks
    // absent (a needless write) and a tracked object not listed yet looks missing (a false invalid spec).
    let parent = if shared.synced.initialized() {
        parent
    } else {
        shared
            .synced
            .get_or_init(|| caches_synced(&shared.caches, shared.reconciler.name()))
            .await;
        // The parent may have changed (or gone) while the caches filled.
        let latest = shared
            .caches
            .get::<P>()
            .and_then(|c| c.get(obj_ref.namespace.as_deref(), &obj_ref.name));
        match latest {
            Some(p) => p,
            None => return Ok(Action::await_change()),
        }
    };
    let retrying = shared
        .failures
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .contains_key(&obj_ref);
    let why = shared.why.take(&obj_ref, retrying);
    // Every log line of the pass says which parent and why it runs.
    let span = tracing::info_span!("pass", parent = %obj_ref, why = %why);
    tracing::debug!(parent = %obj_ref, why = %why, "reconciling");
    let pass = shared
        .reconciler
        .run_pass_until(
            parent.as_ref(),
            &shared.caches,
            shared.dispatcher.clone(),
            shared.stop.get().cloned(),
        )
        .instrument(span)
        .await;
    if shared.parent_exists(&obj_ref) {
        shared
            .tracker
            .set(obj_ref.clone(), pass.context.tracks().to_vec());
    } else {
        // Deleted while the pass ran: what it tracked would never be forgotten.
        shared.forget(&obj_ref, parent.uid().as_deref());
        return Ok(Action::await_change());
    }
    let action = match pass.result {
        Ok(Outcome::Continue) | Ok(Outcome::Halt) => Action::await_change(),
        Ok(Outcome::RequeueAfter(d)) => {
            shared.why.requeue(&obj_ref);
            Action::requeue(d)
        }
        Err(Error::Yield) => {
            shared.why.requeue(&obj_ref);
            Action::requeue(Duration::ZERO)
        }
        Err(e) if e.is_conflict() => {
            tracing::debug!(object = %obj_ref, "conflict; requeueing");
            shared.why.requeue(&obj_ref);
            Action::requeue(Duration::from_millis(200))
        }
        Err(e) => return Err(e),
    };
    shared
        .failures
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&obj_ref);
    Ok(action)
}

fn error_policy<P: ParentKind>(parent: Arc<P>, error: &Error, shared: Arc<Shared<P>>) -> Action {
    let obj_ref = ObjectRef::from_obj(parent.as_ref());
    let failures = {
        let mut map = shared.failures.lock().unwrap_or_else(|e| e.into_inner());
        let n = map.entry(obj_ref.clone()).or_insert(0);
        *n += 1;
        *n
    };
    let delay = shared.backoff.delay(failures);
    match error {
        Error::InvalidSpec { .. } => {
            tracing::info!(object = %obj_ref, error = %error, retry_in = ?delay, "spec cannot be realised")
        }
        _ => {
            tracing::warn!(object = %obj_ref, error = %error, failures, retry_in = ?delay, "reconcile failed")
        }
    }
    Action::requeue(delay)
}

/// Resolves on Ctrl-C (SIGINT) or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_says_why_it_runs() {
        use k8s_openapi::api::core::v1::ConfigMap;
        let why = Why::<ConfigMap>::default();
        let a = ObjectRef::new("a").within("default");
        why.record(&a, "child Deployment default/a changed");
        why.record(&a, "child Deployment default/a changed");
        why.record(&a, "watched ConfigMap default/settings changed");
        assert_eq!(
            why.take(&a, false),
            "child Deployment default/a changed; watched ConfigMap default/settings changed"
        );
        assert_eq!(why.take(&a, false), "the parent changed", "taken once");
        why.requeue(&a);
        assert_eq!(why.take(&a, false), "requeue");
        assert_eq!(why.take(&a, true), "retry after an error");
        for i in 0..10 {
            why.record(&a, &format!("child Service default/s{i} changed"));
        }
        let many = why.take(&a, false);
        assert_eq!(many.matches("changed").count(), REASONS, "{many}");
        assert!(many.ends_with("…"), "{many}");
        why.record(&a, "x");
        why.forget(&a);
        assert_eq!(why.take(&a, false), "the parent changed");
    }

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
