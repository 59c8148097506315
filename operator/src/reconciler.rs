//! The root reconciler of one kind: reads the parent from the cache, runs the steps, writes status once.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use k8s_openapi::jiff::Timestamp;
use kube::core::object::HasStatus;
use kube::runtime::reflector::ObjectRef;
use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde_json::Value;

use crate::cache::{CachedKind, Caches, Change};
use crate::command::{Command, Dispatcher, Target};
use crate::conditions::{self, ConditionUpdate, READY, ReconcilerStatus};
use crate::context::{Context, Settings};
use crate::controller::Priority;
use crate::echoes::Echoes;
use crate::error::{Error, Result};
use crate::foreign::LastReady;
use crate::limits::{panic_message, timed_out, within};
use crate::outcome::Outcome;
use crate::own_status::OwnStatus;
use crate::own_status::{changed_status, with_removals};
use crate::pause::{self, Pause};
use crate::reconcilers::written::Written;
use crate::reconcilers::{Sequence, SubReconciler, Wiring, WiringFn};

/// What a parent kind must be: a cached, serializable resource whose status holds conditions.
pub trait ParentKind: CachedKind + Serialize + HasStatus<Status = Self::ParentStatus> {
    /// The status type.
    type ParentStatus: ReconcilerStatus;
}

impl<P> ParentKind for P
where
    P: CachedKind + Serialize + HasStatus,
    P::Status: ReconcilerStatus,
{
    type ParentStatus = P::Status;
}

/// How many parents a controller reconciles at once unless told otherwise. Unbounded, a burst (a restart, a
/// thousand new parents) runs every pass at once: each holds its objects and opens its own connection to the
/// API server (with its TLS buffers), which is where most of an operator's peak memory went.
pub const DEFAULT_CONCURRENCY: u16 = 16;

/// A `watches` mapper's triggers: why (the mapped object that changed) and which parents.
/// Parents a trigger names: why they are due, which, and with what priority.
pub(crate) type Mapped<P> = (String, Vec<ObjectRef<P>>, Priority);

/// A trigger stream of parents.
pub(crate) type Mapper<P> = Box<dyn Fn(&Caches) -> BoxStream<'static, Mapped<P>> + Send + Sync>;

/// The root reconciler of kind `P`: the steps, the wiring, and the controller settings.
///
/// See the `webapp-by-hand` example for a complete operator.
pub struct Reconciler<P: CachedKind> {
    pub(crate) settings: Settings,
    steps: Sequence<P>,
    extra: Vec<WiringFn>,
    pub(crate) mappers: Vec<Mapper<P>>,
    pub(crate) data: Option<Arc<dyn Any + Send + Sync>>,
    pub(crate) concurrency: u16,
    pub(crate) debounce: Duration,
    clock: Arc<dyn Fn() -> Timestamp + Send + Sync>,
    own_status: Arc<OwnStatus>,
    /// The writes of this reconciler's passes whose watch events have not arrived yet.
    echoes: Arc<Echoes>,
    /// Whether every write is taken for reflected (a planted bug, see [`Reconciler::echo_every_write`]).
    echo_every_write: bool,
    /// The children its passes wrote that the cache may not show yet.
    written: Arc<Written>,
    /// Triggers from outside the cluster ([`Reconciler::reconcile_on`], [`Reconciler::poll`]): the controller
    /// runs them, the explorer does not (its scenarios trigger parents themselves).
    pub(crate) external: Vec<Mapper<P>>,
    /// The longest a parent goes without a pass ([`Reconciler::resync_every`]).
    pub(crate) resync: Option<Duration>,
    /// The longest a pass may run ([`Reconciler::timeout`]).
    pub(crate) timeout: Option<Duration>,
    /// The `Ready` condition of each parent whose status is not written ([`crate::Foreign`]).
    pub(crate) last_ready: Arc<LastReady>,
    /// Which annotation pauses a parent, and whether a paused parent is finalized ([`crate::pause`]).
    pub(crate) pause: Pause,
}

impl<P: CachedKind> std::fmt::Debug for Reconciler<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reconciler")
            .field("settings", &self.settings)
            .field("steps", &self.steps)
            .finish_non_exhaustive()
    }
}

/// The result of one pass: what the steps decided and the context with everything they did.
#[derive(Debug)]
pub struct Pass {
    /// The steps' outcome, or the error that ended the pass.
    pub result: Result<Outcome>,
    /// The context: commands executed, tracks, stash.
    pub context: Context,
}

impl<P: CachedKind> Reconciler<P> {
    /// A reconciler for a controller named `name` (also its field manager and event reporter).
    pub fn new(name: impl Into<String>) -> Self {
        let name = name.into();
        Self {
            steps: Sequence::new(name.clone()),
            settings: Settings::new(name),
            extra: Vec::new(),
            mappers: Vec::new(),
            data: None,
            concurrency: DEFAULT_CONCURRENCY,
            debounce: Duration::ZERO,
            clock: Arc::new(Timestamp::now),
            own_status: Arc::default(),
            echoes: Arc::default(),
            echo_every_write: false,
            written: Arc::default(),
            external: Vec::new(),
            resync: None,
            timeout: None,
            last_ready: Arc::default(),
            pause: Pause::default(),
        }
    }

    /// A planted bug for testing the test tools: every write of a pass is taken for one its status reflected,
    /// a `#[sync]` step's too, so its watch event queues no pass (the echo rule before it was fixed, which left
    /// a status computed before the write stale). Never for an operator.
    #[cfg(feature = "testing")]
    #[doc(hidden)]
    pub fn echo_every_write(mut self) -> Self {
        self.echo_every_write = true;
        self
    }

    /// The children this reconciler's passes wrote that the cache may not show yet.
    pub(crate) fn written(&self) -> Arc<Written> {
        self.written.clone()
    }

    /// Forgets the status last written to `parent` if the cached `parent` shows it.
    pub(crate) fn observed(&self, parent: &P) {
        self.own_status.seen(parent);
    }

    /// The writes of this reconciler's passes whose watch events have not arrived yet (see [`Echoes`]).
    pub(crate) fn echoes(&self) -> Arc<Echoes> {
        self.echoes.clone()
    }

    /// Forgets what this reconciler keeps about the parent `uid` (it was deleted).
    pub(crate) fn forget(&self, uid: &str) {
        self.own_status.forget(uid);
        self.last_ready.forget(uid);
    }

    /// Forgets what this reconciler keeps about every parent whose uid `keep` rejects.
    pub(crate) fn retain(&self, keep: impl Fn(&str) -> bool) {
        self.own_status.retain(&keep);
        self.last_ready.retain(keep);
    }

    /// Appends a step; steps run in the order they are added.
    pub fn step(mut self, step: impl SubReconciler<P> + 'static) -> Self {
        self.steps.push(Box::new(step));
        self
    }

    /// Watches children of kind `C` that custom steps manage.
    pub fn owns<C: CachedKind>(mut self) -> Self {
        self.extra.push(Box::new(|w: &mut Wiring| w.owns::<C>()));
        self
    }

    /// Caches kind `K` so steps can read it through the context (tracked).
    pub fn tracks<K: CachedKind>(mut self) -> Self {
        self.extra.push(Box::new(|w: &mut Wiring| w.tracks::<K>()));
        self
    }

    /// Reconciles the parents `map` returns whenever an object of kind `K` changes.
    pub fn watches<K: CachedKind>(
        self,
        map: impl Fn(Arc<K>) -> Vec<ObjectRef<P>> + Send + Sync + 'static,
    ) -> Self {
        self.watches_with(move |object: Arc<K>, _: &Caches| map(object))
    }

    /// [`watches`](Self::watches) with a mapper that also reads the caches (for example a field index, see
    /// [`Cache::add_index`](crate::Cache::add_index)).
    pub fn watches_with<K: CachedKind>(
        mut self,
        map: impl Fn(Arc<K>, &Caches) -> Vec<ObjectRef<P>> + Send + Sync + 'static,
    ) -> Self {
        self.extra.push(Box::new(|w: &mut Wiring| w.watches::<K>()));
        let map = Arc::new(map);
        self.mappers.push(Box::new(move |caches: &Caches| {
            let map = map.clone();
            let caches = caches.clone();
            let parents = caches.ensure::<P>();
            let replayed = caches.ensure::<K>().replayed().clone();
            crate::reconcilers::typed_changes::<K>(&caches)
                .map(move |c: Option<Change<K>>| match c {
                    Some(c) => {
                        let object = c.object().clone();
                        let why = format!(
                            "watched {} {} changed",
                            K::kind(&()),
                            crate::command::display_name(object.as_ref())
                        );
                        let priority = Priority::replay_if(
                            replayed.replays(object.meta().resource_version.as_deref()),
                        );
                        (why, map(object, &caches), priority)
                    }
                    None => every_parent(&parents),
                })
                .boxed()
        }));
        self
    }

    /// Reconciles the parents that name an object of kind `K` whenever it changes: `names` returns the names
    /// a parent refers to (for example `spec.configMap`), in the parent's namespace when `K` is namespaced.
    /// The runtime files parents by those names in a field index of the parent's cache, so a change finds its
    /// parents without a scan and without a mapper; `K` is cached, and steps read it through the context.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # fn f<P: kubewright::ParentKind>(r: kubewright::Reconciler<P>, config_map: fn(&P) -> Option<String>) {
    /// let r = r.references::<ConfigMap>(move |p: &P| config_map(p).into_iter().collect());
    /// # }
    /// ```
    pub fn references<K: CachedKind>(
        mut self,
        names: impl Fn(&P) -> Vec<String> + Send + Sync + 'static,
    ) -> Self
    where
        K::Scope: 'static,
    {
        self.extra.push(Box::new(|w: &mut Wiring| w.watches::<K>()));
        let index = format!("references/{}/{}", K::api_version(&()), K::kind(&()));
        let cluster_scoped = crate::reconcilers::is_cluster_scoped::<K>();
        let names = Arc::new(names);
        self.mappers.push(Box::new(move |caches: &Caches| {
            let parents = caches.ensure::<P>();
            let names = names.clone();
            parents.add_index(
                &index,
                Arc::new(move |p: &P| {
                    let namespace = if cluster_scoped {
                        None
                    } else {
                        p.meta().namespace.as_deref()
                    };
                    names(p)
                        .iter()
                        .map(|n| crate::index::object_key(namespace, n))
                        .collect()
                }),
            );
            let index = index.clone();
            let replayed = caches.ensure::<K>().replayed().clone();
            crate::reconcilers::typed_changes::<K>(caches)
                .map(move |c: Option<Change<K>>| match c {
                    None => every_parent(&parents),
                    Some(c) => {
                        let object = c.object();
                        let key = crate::index::object_key(
                            object.meta().namespace.as_deref(),
                            &object.name_any(),
                        );
                        let why = format!(
                            "referenced {} {} changed",
                            K::kind(&()),
                            crate::command::display_name(object.as_ref())
                        );
                        let refs = parents
                            .indexed(&index, &key)
                            .iter()
                            .map(|p| ObjectRef::from_obj(p.as_ref()))
                            .collect();
                        let priority = Priority::replay_if(
                            replayed.replays(object.meta().resource_version.as_deref()),
                        );
                        (why, refs, priority)
                    }
                })
                .boxed()
        }));
        self
    }

    /// The field manager for server-side apply (default: the controller's name).
    pub fn field_manager(mut self, manager: impl Into<String>) -> Self {
        self.settings.field_manager = manager.into();
        self
    }

    /// At most one mutating command per pass, then requeue at once ("assess then act").
    pub fn one_action_per_pass(mut self, on: bool) -> Self {
        self.settings.one_action = on;
        self
    }

    /// How many parents are reconciled at once (0: unlimited; default [`DEFAULT_CONCURRENCY`]).
    pub fn concurrency(mut self, n: u16) -> Self {
        self.concurrency = n;
        self
    }

    /// Waits this long after a trigger before reconciling, to batch bursts of changes.
    pub fn debounce(mut self, d: Duration) -> Self {
        self.debounce = d;
        self
    }

    /// Cancels a pass that runs longer than `limit` (controller-runtime's `ReconciliationTimeout`; default:
    /// none, or what [`Operator::reconcile_timeout`](crate::Operator::reconcile_timeout) and the
    /// `--reconcile-timeout` flag set for every controller). The cut pass fails with [`Error::TimedOut`],
    /// naming the step that was running: `Ready=False` with reason `ReconcileTimeout`, a Warning event, and a
    /// retry with backoff.
    ///
    /// What a cut pass leaves: every write it sent is one request, which the API server applies whole or not
    /// at all; the writes it had not sent yet are not sent; its status write (the timeout's condition) is made
    /// after the cut, as for any error. The next pass starts again from the cluster's state, so it completes
    /// what the cut pass left undone. A write whose answer never came may have been applied: the next pass
    /// reads it from the cache like any other change.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # fn f<P: kubewright::ParentKind>(r: kubewright::Reconciler<P>) -> kubewright::Reconciler<P> {
    /// r.timeout(Duration::from_secs(30))
    /// # }
    /// ```
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.timeout = Some(limit);
        self
    }

    /// Data the steps read with [`Context::data`].
    pub fn data<T: Any + Send + Sync>(mut self, data: T) -> Self {
        self.data = Some(Arc::new(data));
        self
    }

    /// [`data`](Self::data) when there is some: with `None`, steps read `None` from [`Context::data`] (a
    /// binary that only prints manifests has no data to give).
    pub fn data_opt<T: Any + Send + Sync>(mut self, data: Option<T>) -> Self {
        if let Some(data) = data {
            self.data = Some(Arc::new(data));
        }
        self
    }

    /// The clock for condition times (fixed in table tests).
    pub fn clock(mut self, clock: impl Fn() -> Timestamp + Send + Sync + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// The controller's name.
    pub fn name(&self) -> &str {
        &self.settings.name
    }

    /// The kinds the steps and declarations need cached and watched.
    pub fn wiring(&self) -> Wiring {
        let mut w = Wiring::default();
        self.steps.wire(&mut w);
        for e in &self.extra {
            e(&mut w);
        }
        w
    }
}

impl<P: ParentKind> Reconciler<P> {
    /// Runs one pass over `parent` (as read from the cache; over the cache's copy instead when the cache holds a
    /// newer version of it by then): the steps (or their finalize halves while the parent is being deleted),
    /// then the status write if the status changed.
    pub async fn run_pass(
        &self,
        parent: &P,
        caches: &Caches,
        dispatcher: Arc<dyn Dispatcher>,
    ) -> Pass {
        self.run_pass_until(parent, caches, dispatcher, None, None)
            .await
    }

    /// [`run_pass`](Self::run_pass), with the operator's shutdown signal for steps that await
    /// ([`Context::shutting_down`]).
    pub(crate) async fn run_pass_until(
        &self,
        parent: &P,
        caches: &Caches,
        dispatcher: Arc<dyn Dispatcher>,
        shutdown: Option<tokio::sync::watch::Receiver<bool>>,
        on_track: Option<crate::context::TrackHook>,
    ) -> Pass {
        let now = (self.clock)();
        self.run_pass_at(parent, caches, dispatcher, shutdown, now, on_track)
            .await
    }

    /// [`run_pass_until`](Self::run_pass_until) at the time `now` instead of the reconciler's clock (the test
    /// environment's passes run on its server's clock).
    pub(crate) async fn run_pass_at(
        &self,
        parent: &P,
        caches: &Caches,
        dispatcher: Arc<dyn Dispatcher>,
        shutdown: Option<tokio::sync::watch::Receiver<bool>>,
        now: Timestamp,
        on_track: Option<crate::context::TrackHook>,
    ) -> Pass {
        // The parent's watch may have delivered a write since the pass was queued: the status the previous pass
        // wrote, say, whose event also cleared the memory of that write. The pass runs on the newest copy.
        let latest = caches
            .get::<P>()
            .and_then(|c| c.get(parent.namespace().as_deref(), &parent.name_any()))
            .filter(|l| is_newer(l.as_ref(), parent));
        let parent = latest.as_deref().unwrap_or(parent);
        let mut cx = Context::new(
            caches.clone(),
            dispatcher,
            Arc::new(self.settings.clone()),
            parent.object_ref(&()),
            now,
        )
        .with_data(self.data.clone())
        .with_shutdown(shutdown)
        .with_echoes(self.echoes.clone(), self.echo_every_write)
        .with_written(self.written.clone())
        .with_shard(crate::sharding::shard_of(parent.meta()).map(str::to_string))
        .with_on_track(on_track);
        let mut working = parent.clone();
        // The cache may not show the status the previous pass wrote yet: start from what was written.
        if let Some(written) = self.own_status.newer_than_cached(parent)
            && let Ok(mut value) = crate::json::convert::<Value>(parent)
        {
            value["status"] = written.status;
            value["metadata"]["resourceVersion"] = Value::String(written.resource_version);
            if let Ok(newer) = crate::json::convert(&value) {
                working = newer;
            }
        }
        let before = working.status().cloned().unwrap_or_default();
        if working.status_mut().is_none() {
            *working.status_mut() = Some(Default::default());
        }
        if parent.meta().deletion_timestamp.is_some() {
            // Cleanup runs only while one of our finalizers holds the object, so it runs once per deletion.
            let ours = self
                .wiring()
                .finalizers()
                .iter()
                .any(|f| parent.finalizers().contains(f));
            let paused = self.pause.paused(parent).is_some();
            let result = if ours && (!paused || self.pause.finalize) {
                let finalize = self.steps.finalize(&mut working, &mut cx);
                match within(self.timeout, finalize).await {
                    Ok(result) => result,
                    Err(after) => Err(timed_out(&cx, after)),
                }
            } else {
                Ok(Outcome::Halt)
            };
            cx.remember_echoes();
            return Pass {
                result,
                context: cx,
            };
        }
        let was_paused = pause::is_marked(before.conditions());
        if let Some(annotation) = self.pause.paused(parent) {
            // Already marked paused: nothing at all is written.
            if was_paused {
                return Pass {
                    result: Ok(Outcome::Halt),
                    context: cx,
                };
            }
            cx.set_condition(pause::condition(&annotation));
            let result = self
                .finish(parent, &mut working, &before, Ok(Outcome::Halt), &mut cx)
                .await;
            if result.is_ok() && <P::ParentStatus as ReconcilerStatus>::WRITTEN {
                let note = format!("paused by the annotation {annotation}");
                cx.event(false, pause::PAUSED, "Pause", note).await;
            }
            cx.remember_echoes();
            return Pass {
                result,
                context: cx,
            };
        }
        // A panic in a step fails this pass like an error (Ready=False, a Warning event, backoff) instead of
        // ending the controller's stream, which would stop every other parent of the kind.
        let steps = AssertUnwindSafe(self.steps.reconcile(&mut working, &mut cx)).catch_unwind();
        let result = match within(self.timeout, steps).await {
            Ok(Ok(result)) => result,
            Ok(Err(panic)) => {
                let message = panic_message(panic.as_ref());
                tracing::error!(parent = %parent.name_any(), panic = %message, "a step panicked");
                Err(Error::Panicked(message))
            }
            Err(after) => Err(timed_out(&cx, after)),
        };
        let result = self
            .finish(parent, &mut working, &before, result, &mut cx)
            .await;
        if was_paused && result.is_ok() {
            cx.event(false, "Resumed", "Pause", "the pause annotation is gone")
                .await;
        }
        cx.remember_echoes();
        Pass {
            result,
            context: cx,
        }
    }

    async fn finish(
        &self,
        parent: &P,
        working: &mut P,
        before: &P::ParentStatus,
        result: Result<Outcome>,
        cx: &mut Context,
    ) -> Result<Outcome> {
        let paused = cx.conditions().iter().any(|c| c.type_ == pause::PAUSED);
        let ready = match &result {
            // A paused pass reconciled nothing: Ready speaks of the generation last reconciled.
            Ok(_) if paused => {
                ConditionUpdate::false_(READY, pause::PAUSED, "reconciling is paused")
            }
            Ok(_) => conditions::ready_from(cx.conditions()),
            Err(Error::InvalidSpec { reason, message }) => {
                ConditionUpdate::false_(READY, reason, message)
            }
            // An incomplete pass (one-action mode, a conflict) says nothing new about readiness.
            Err(Error::Yield) => return result,
            Err(e) if e.is_conflict() => return result,
            Err(e) => ConditionUpdate::false_(READY, failure_reason(e), e.to_string()),
        };
        if !<P::ParentStatus as ReconcilerStatus>::WRITTEN {
            if !paused {
                self.tell_ready(parent, &ready, cx).await;
            }
            return result;
        }
        let generation = parent.meta().generation;
        let now = cx.now();
        let updates: Vec<ConditionUpdate> = cx.conditions().to_vec();
        let status = working.status_mut().get_or_insert_with(Default::default);
        for u in updates.iter().filter(|u| u.type_ != READY) {
            conditions::set_condition(status.conditions_mut(), u, now, generation);
        }
        let was_ready = before
            .conditions()
            .iter()
            .find(|c| c.type_ == READY)
            .cloned();
        if !paused || was_ready.is_none() {
            conditions::set_condition(status.conditions_mut(), &ready, now, generation);
        }
        if !paused {
            pause::clear(status.conditions_mut());
            if result.is_ok() || matches!(result, Err(Error::InvalidSpec { .. })) {
                status.set_observed_generation(generation);
            }
        }
        if let Some((stored, after)) = changed_status(before, &*status)? {
            let target = Target::of(parent);
            let write = cx
                .execute_reflected(Command::UpdateStatus {
                    target,
                    // The write is a merge patch: a field the computed status no longer has must be sent as
                    // `null`, or the stored status keeps it and every later pass writes again.
                    status: with_removals(&stored, after),
                    // Steps may have written the parent (a finalizer added): guard with its latest version.
                    resource_version: working.resource_version(),
                })
                .await;
            match write {
                Ok(answer) => {
                    if let (Some(uid), Some(answer)) = (parent.uid(), answer) {
                        self.own_status.wrote(&uid, &answer);
                    }
                }
                Err(e) if e.is_conflict() => {
                    tracing::debug!(parent = %parent.name_any(), "status write conflicted; requeueing");
                    return Err(e);
                }
                Err(e) => return Err(e),
            }
            // A failure is announced once, when the Ready condition starts saying so.
            let changed = was_ready
                .as_ref()
                .is_none_or(|c| c.reason != ready.reason || c.message != ready.message);
            if changed && result.is_err() {
                let warning_reason = match &result {
                    Err(Error::InvalidSpec { reason, .. }) => reason.clone(),
                    Err(e) => failure_reason(e).to_string(),
                    Ok(_) => "ReconcileError".to_string(),
                };
                cx.event(true, &warning_reason, "Reconcile", ready.message.clone())
                    .await;
            }
        }
        result
    }
}

/// The reason of the `Ready=False` condition (and the Warning event) of a pass that failed with `e`.
fn failure_reason(e: &Error) -> &'static str {
    match e {
        Error::TimedOut { .. } => "ReconcileTimeout",
        _ => "ReconcileError",
    }
}

/// Every parent in the cache, for a trigger stream that missed changes (its channel lagged): reconciling them
/// all is the only way not to miss the parents those changes concerned.
fn every_parent<P: CachedKind>(parents: &crate::cache::Cache<P>) -> Mapped<P> {
    tracing::warn!(kind = %P::kind(&()), "a mapped trigger stream lagged; reconciling every parent");
    let all = parents
        .state()
        .iter()
        .map(|p| ObjectRef::from_obj(p.as_ref()))
        .collect();
    (
        "changes were missed; reconciling everything".to_string(),
        all,
        Priority::Low,
    )
}

/// Whether `cached` is a newer version of `parent` (the same object, a `resourceVersion` past its). Opaque
/// versions are never taken for newer.
fn is_newer<P: Resource>(cached: &P, parent: &P) -> bool {
    let (c, p) = (cached.meta(), parent.meta());
    match (&c.resource_version, &p.resource_version) {
        (Some(cv), Some(pv)) if c.uid == p.uid && cv != pv => {
            crate::versions::at_least(cv, pv).unwrap_or(false)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::{changed_status, is_newer, with_removals};
    use serde_json::json;
    use serde_json::value::RawValue;

    #[test]
    fn a_status_changes_when_its_content_does_not_when_only_its_text_does() {
        let raw = |t: &str| RawValue::from_string(t.into()).unwrap();
        assert_eq!(
            changed_status(&raw(r#"{"a":1}"#), &raw(r#"{"a":1}"#)).unwrap(),
            None
        );
        // A map printed in another order.
        assert_eq!(
            changed_status(&raw(r#"{"a":1,"b":2}"#), &raw(r#"{"b":2,"a":1}"#)).unwrap(),
            None
        );
        assert_eq!(
            changed_status(&raw(r#"{"a":1}"#), &raw(r#"{"a":2}"#)).unwrap(),
            Some((json!({"a": 1}), json!({"a": 2})))
        );
    }

    #[tokio::test]
    async fn a_mapped_trigger_stream_that_lags_reconciles_every_parent() {
        use futures::StreamExt;
        use k8s_openapi::api::core::v1::{ConfigMap, Secret};
        use std::sync::Arc;
        let service = tower::service_fn(|_req: http::Request<kube::client::Body>| async {
            Err::<http::Response<kube::client::Body>, _>(std::io::Error::other("offline"))
        });
        let caches = crate::Caches::new(kube::Client::new(service, "default"));
        let named = |name: &str| {
            let mut cm = ConfigMap::default();
            cm.metadata.name = Some(name.into());
            cm.metadata.namespace = Some("ns".into());
            cm
        };
        caches.insert_store(crate::cache::frozen_store(vec![named("a"), named("b")]));
        let secrets = caches.insert_store(crate::cache::frozen_store(Vec::<Secret>::new()));
        // The mapper names no parent: only a lag can bring parents.
        let reconciler = super::Reconciler::<ConfigMap>::new("t").watches::<Secret>(|_| vec![]);
        let mut mapped = (reconciler.mappers[0])(&caches);
        // More changes than the channel holds (16 for a store with no watch), none read yet.
        for _ in 0..40 {
            secrets.broadcast(crate::cache::Change::Applied(Arc::new(Secret::default())));
        }
        let (why, mut parents, priority) = mapped.next().await.expect("a trigger");
        assert_eq!(priority, crate::controller::Priority::Low);
        parents.sort_by(|a, b| a.name.cmp(&b.name));
        assert_eq!(why, "changes were missed; reconciling everything");
        assert_eq!(
            parents.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
    }

    #[test]
    fn a_cached_parent_is_newer_only_with_the_same_uid_and_a_later_version() {
        use k8s_openapi::api::core::v1::ConfigMap;
        let cm = |uid: &str, version: Option<&str>| {
            let mut cm = ConfigMap::default();
            cm.metadata.uid = Some(uid.into());
            cm.metadata.resource_version = version.map(Into::into);
            cm
        };
        assert!(is_newer(&cm("u", Some("12")), &cm("u", Some("9"))));
        assert!(!is_newer(&cm("u", Some("9")), &cm("u", Some("9"))));
        assert!(!is_newer(&cm("u", Some("8")), &cm("u", Some("9"))));
        assert!(!is_newer(&cm("v", Some("12")), &cm("u", Some("9"))));
        assert!(!is_newer(&cm("u", Some("b")), &cm("u", Some("a"))));
        assert!(!is_newer(&cm("u", None), &cm("u", Some("9"))));
    }

    #[test]
    fn removed_fields_become_nulls_at_every_depth() {
        let before = json!({"a": 1, "message": "x", "nested": {"keep": 1, "gone": 2}, "list": [1]});
        let after = json!({"a": 2, "nested": {"keep": 1}, "list": []});
        assert_eq!(
            with_removals(&before, after),
            json!({"a": 2, "message": null, "nested": {"keep": 1, "gone": null}, "list": []})
        );
    }

    #[test]
    fn a_merge_patch_of_the_result_gives_exactly_the_computed_status() {
        let before = json!({"message": "x", "nested": {"gone": 2, "keep": 1}});
        let after = json!({"nested": {"keep": 1}, "new": true});
        let mut stored = before.clone();
        json_patch_merge(&mut stored, &with_removals(&before, after.clone()));
        assert_eq!(stored, after);
    }

    /// RFC 7386.
    fn json_patch_merge(target: &mut serde_json::Value, patch: &serde_json::Value) {
        use serde_json::Value;
        if let Value::Object(p) = patch {
            if !target.is_object() {
                *target = Value::Object(Default::default());
            }
            let t = target.as_object_mut().expect("an object");
            for (k, v) in p {
                if v.is_null() {
                    t.remove(k);
                } else {
                    json_patch_merge(t.entry(k.clone()).or_insert(Value::Null), v);
                }
            }
        } else {
            *target = patch.clone();
        }
    }
}
