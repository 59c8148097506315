//! What a step sees of the world during one pass: caches, the stash, commands, conditions, tracking.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::jiff::Timestamp;
use kube::core::{Selector, SelectorExt};
use kube::{Resource, ResourceExt};
use serde_json::Value;

use crate::answer::Answer;
use crate::cache::{Cache, CachedKind, Caches};
use crate::command::{Command, Dispatcher, EventCommand, Target};
use crate::conditions::ConditionUpdate;
use crate::echoes::Echoes;
use crate::error::{Error, Result};
use crate::reconcilers::written::Written;
use crate::stash::Stash;
use crate::tracker::TrackKey;

/// Settings of one controller that steps read.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The controller's name: event reporter and default field manager.
    pub name: String,
    /// The field manager for server-side apply.
    pub field_manager: String,
    /// Perform at most one mutating command per pass, then requeue at once ("assess then act").
    pub one_action: bool,
}

impl Settings {
    /// Settings for a controller named `name`.
    pub fn new(name: impl Into<String>) -> Self {
        let name = name.into();
        Self {
            field_manager: name.clone(),
            name,
            one_action: false,
        }
    }
}

/// What a controller does with each key a pass tracks, as the pass tracks it.
pub(crate) type TrackHook = Arc<dyn Fn(&TrackKey) + Send + Sync>;

/// The per-pass context handed to every step.
pub struct Context {
    stash: Stash,
    caches: Caches,
    dispatcher: Arc<dyn Dispatcher>,
    settings: Arc<Settings>,
    data: Option<Arc<dyn Any + Send + Sync>>,
    parent: ObjectReference,
    now: Timestamp,
    commands: Vec<Command>,
    tracks: Vec<TrackKey>,
    conditions: Vec<ConditionUpdate>,
    mutations: usize,
    /// What earlier steps of this pass decided, by type (the child steps' outcomes).
    decided: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
    /// `true` once the operator shuts down.
    shutdown: Option<tokio::sync::watch::Receiver<bool>>,
    /// Where the writes of a controller's passes are remembered, so their watch events queue no pass.
    echoes: Option<Arc<Echoes>>,
    /// The writes of this pass that may be echoes, remembered as such when the pass ends (see
    /// [`Context::remember_echoes`]).
    wrote: Vec<PassWrite>,
    /// The kinds, as `(group, kind)`, that the author's code read during this pass (from a cache or past it).
    observed: Vec<(String, String)>,
    /// Whether the writes of the runtime's helpers run for the author (the owned writes) count as no status
    /// reflection saw them.
    unreflected: bool,
    /// Whether every write counts as reflected, as the runtime once decided (a planted bug for the explorer's
    /// tests).
    echo_every_write: bool,
    /// The children written that the cache may not show yet (shared by the passes of one reconciler).
    written: Arc<Written>,
    /// The step of a [`Sequence`](crate::Sequence) last started, named when a pass is cut by its timeout.
    step: Option<String>,
    /// Told of each key this pass tracks, before the read it guards (see [`TrackHook`]).
    on_track: Option<TrackHook>,
    /// The member that owns the parent in a sharded operator (its shard label), copied onto its children.
    shard: Option<String>,
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("controller", &self.settings.name)
            .field("stash", &self.stash)
            .field("commands", &self.commands.len())
            .finish_non_exhaustive()
    }
}

impl Context {
    /// The name of the controller this pass belongs to.
    pub fn controller_name(&self) -> &str {
        &self.settings.name
    }

    /// A context for one pass over the object `parent`.
    pub fn new(
        caches: Caches,
        dispatcher: Arc<dyn Dispatcher>,
        settings: Arc<Settings>,
        parent: ObjectReference,
        now: Timestamp,
    ) -> Self {
        Self {
            stash: Stash::default(),
            caches,
            dispatcher,
            settings,
            data: None,
            parent,
            now,
            commands: Vec::new(),
            tracks: Vec::new(),
            conditions: Vec::new(),
            mutations: 0,
            decided: HashMap::new(),
            shutdown: None,
            echoes: None,
            wrote: Vec::new(),
            observed: Vec::new(),
            unreflected: false,
            echo_every_write: false,
            written: Arc::default(),
            step: None,
            on_track: None,
            shard: None,
        }
    }

    /// Notes that the step `name` starts (a [`Sequence`](crate::Sequence) tells each of its steps).
    pub(crate) fn entering(&mut self, name: &str) {
        match &mut self.step {
            Some(step) => {
                step.clear();
                step.push_str(name);
            }
            None => self.step = Some(name.to_string()),
        }
    }

    /// The step last started in this pass, if a sequence ran one.
    pub(crate) fn step(&self) -> Option<&str> {
        self.step.as_deref()
    }

    /// Shares `written` with the other passes of a reconciler.
    pub(crate) fn with_written(mut self, written: Arc<Written>) -> Self {
        self.written = written;
        self
    }

    /// Tells `hook` of every key the pass tracks, before its read (see [`TrackHook`]).
    pub(crate) fn with_on_track(mut self, hook: Option<TrackHook>) -> Self {
        self.on_track = hook;
        self
    }

    /// The parent's shard label (see [`crate::sharding`]), which the children it writes carry too.
    pub(crate) fn with_shard(mut self, shard: Option<String>) -> Self {
        self.shard = shard;
        self
    }

    /// The parent's shard label, if any.
    pub(crate) fn shard(&self) -> Option<&str> {
        self.shard.as_deref()
    }

    /// The children written that the cache may not show yet.
    pub(crate) fn written(&self) -> Arc<Written> {
        self.written.clone()
    }

    /// Remembers the writes of this pass in `echoes` (a controller's passes); with `every_write`, also those no
    /// status reflection saw (a planted bug, see [`Reconciler::echo_every_write`](crate::Reconciler)).
    pub(crate) fn with_echoes(mut self, echoes: Arc<Echoes>, every_write: bool) -> Self {
        self.echoes = Some(echoes);
        self.echo_every_write = every_write;
        self
    }

    /// Attaches the operator's shutdown signal (`true` once it shuts down), read by
    /// [`shutting_down`](Self::shutting_down).
    pub fn with_shutdown(mut self, shutdown: Option<tokio::sync::watch::Receiver<bool>>) -> Self {
        self.shutdown = shutdown;
        self
    }

    /// Resolves once the operator starts shutting down (never, outside a running operator): a step that waits
    /// on something slow can stop early, e.g. `tokio::select!` between its work and this. A step still running
    /// when the shutdown deadline passes is cancelled.
    pub async fn shutting_down(&self) {
        match self.shutdown.clone() {
            Some(mut rx) => {
                if rx.wait_for(|stopping| *stopping).await.is_err() {
                    // The operator is gone: that is a shutdown too.
                }
            }
            None => std::future::pending().await,
        }
    }

    /// A client for the cluster, for steps that must call the API themselves (a read no cache holds, a
    /// subresource). Writes made through it bypass the pass's commands: tests and logs do not see them, and
    /// one-action mode does not count them; prefer the child steps for the objects the parent owns.
    pub fn client(&self) -> kube::Client {
        self.caches.client().clone()
    }

    /// Keeps what a step decided for later steps of the pass, one value per type (a later one replaces it).
    pub(crate) fn decide<T: Any + Send + Sync>(&mut self, value: T) {
        self.decided.insert(TypeId::of::<T>(), Box::new(value));
    }

    /// What an earlier step of this pass decided, of type `T`.
    pub(crate) fn decided<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.decided.get(&TypeId::of::<T>())?.downcast_ref::<T>()
    }

    /// Attaches the author's own data (clients, configuration), read back with [`Context::data`].
    pub fn with_data(mut self, data: Option<Arc<dyn Any + Send + Sync>>) -> Self {
        self.data = data;
        self
    }

    /// The author's data, if it has type `T`.
    pub fn data<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.data.as_ref()?.downcast_ref::<T>()
    }

    /// The stash of this pass.
    pub fn stash(&self) -> &Stash {
        &self.stash
    }

    /// The stash of this pass, to store into.
    pub fn stash_mut(&mut self) -> &mut Stash {
        &mut self.stash
    }

    /// The controller's settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// The time of this pass (fixed in table tests).
    pub fn now(&self) -> Timestamp {
        self.now
    }

    /// The object being reconciled.
    pub fn parent(&self) -> &ObjectReference {
        &self.parent
    }

    /// The cache of `K`, if the controller keeps one. What the step reads there may not show the writes of
    /// this pass yet, so a write of kind `K` in this pass queues another pass when its watch event comes (see
    /// [echoes](crate::reconcilers#echoes)).
    pub fn cache<K: CachedKind>(&mut self) -> Result<Cache<K>> {
        self.observe::<K>();
        self.step_cache()
    }

    /// The cache of `K`, for the runtime's own steps: their writes' outcomes come from the API's answers.
    pub(crate) fn step_cache<K: CachedKind>(&self) -> Result<Cache<K>> {
        self.caches
            .get::<K>()
            .ok_or_else(|| Error::NotCached(K::kind(&()).into_owned()))
    }

    /// How a child step decides the readiness of kind `K` when its author gave no `ready` function.
    pub(crate) async fn readiness_convention<K: CachedKind>(&self) -> crate::readiness::Convention {
        crate::readiness::Convention::of::<K>(&self.caches).await
    }

    /// Notes that the author's code read objects of `K` in this pass.
    fn observe<K: kube::Resource<DynamicType = ()>>(&mut self) {
        let (group, kind) = (K::group(&()), K::kind(&()));
        if !self.observed.iter().any(|(g, k)| *g == group && *k == kind) {
            self.observed.push((group.into_owned(), kind.into_owned()));
        }
    }

    /// Reads an object from the cache and tracks it: the parent is reconciled again when it changes.
    pub fn get<K: CachedKind>(
        &mut self,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<Arc<K>>> {
        let cache = self.cache::<K>()?;
        self.track(TrackKey::name::<K>(namespace, name));
        Ok(cache.get(namespace, name))
    }

    /// Reads an object the parent's spec names, from the cache, and tracks it; a missing one is an invalid
    /// spec (`Ready=False` with reason `<Kind>NotFound`, e.g. `ConfigMapNotFound`, and a Warning event), so
    /// the parent is reconciled again when it appears.
    pub fn get_referenced<K: CachedKind>(
        &mut self,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Arc<K>> {
        self.get::<K>(namespace, name)?.ok_or_else(|| {
            let kind = K::kind(&());
            let place = match namespace {
                Some(ns) => format!(" in namespace {ns}"),
                None => String::new(),
            };
            Error::invalid_spec(
                format!("{kind}NotFound"),
                format!("{kind} {name} not found{place}"),
            )
        })
    }

    /// The object of kind `K` that `parent`'s spec names `name`, if it names one: read as
    /// [`get_referenced`](Self::get_referenced) reads it (tracked; a missing one is an invalid spec), in the
    /// parent's namespace when `K` is namespaced. For an optional reference such as `spec.configMap`:
    /// `cx.referenced::<ConfigMap>(app, app.spec.config_map.as_deref())?`.
    pub fn referenced<K: CachedKind>(
        &mut self,
        parent: &impl Resource,
        name: Option<&str>,
    ) -> Result<Option<Arc<K>>> {
        let Some(name) = name else {
            return Ok(None);
        };
        let namespace = parent
            .meta()
            .namespace
            .as_deref()
            .filter(|_| crate::cache::is_namespaced::<K>());
        self.get_referenced(namespace, name).map(Some)
    }

    /// Lists objects matching a selector from the cache and tracks the selection.
    pub fn list<K: CachedKind>(
        &mut self,
        namespace: Option<&str>,
        selector: &Selector,
    ) -> Result<Vec<Arc<K>>> {
        let cache = self.cache::<K>()?;
        self.track(TrackKey::selector::<K>(namespace, selector));
        let mut out: Vec<Arc<K>> = cache.labelled(namespace, |labels| selector.matches(labels));
        out.sort_by_key(|o| o.name_any());
        Ok(out)
    }

    /// Tracks an object or selection explicitly.
    pub fn track(&mut self, key: TrackKey) {
        if !self.tracks.contains(&key) {
            // The controller tracks it now, before the read that follows: a change after this reaches the
            // parent, and one before it is in what the read returns (the cache holds an object before its
            // change is broadcast). Recorded only at the end of the pass, a change during the pass to an
            // object the parent had not tracked before was lost.
            if let Some(hook) = &self.on_track {
                hook(&key);
            }
            self.tracks.push(key);
        }
    }

    /// What this pass tracked.
    pub fn tracks(&self) -> &[TrackKey] {
        &self.tracks
    }

    /// Sets a condition on the parent's status at the end of the pass.
    pub fn set_condition(&mut self, update: ConditionUpdate) {
        self.conditions.retain(|c| c.type_ != update.type_);
        self.conditions.push(update);
    }

    /// The conditions set so far, in order.
    pub fn conditions(&self) -> &[ConditionUpdate] {
        &self.conditions
    }

    /// Executes a command now (or, in one-action mode, fails with [`Error::Yield`] once a mutation was made).
    ///
    /// The write's watch event queues the next pass of the parent, as in controller-runtime: no status
    /// reflection saw what this write did (see [echoes](crate::reconcilers#echoes)).
    pub async fn execute(&mut self, command: Command) -> Result<Option<Answer>> {
        self.run(command, false).await
    }

    /// Executes a command of a runtime step whose outcome the status reflects (a child step's write, the
    /// status itself): its echo may queue nothing (see [`Context::remember_echoes`]).
    pub(crate) async fn execute_reflected(&mut self, command: Command) -> Result<Option<Answer>> {
        let reflected = !self.unreflected;
        self.run(command, reflected).await
    }

    /// Makes the runtime's writes count as unreflected (`true`: the owned writes a step asks for) until set
    /// back; answers what it was.
    pub(crate) fn set_unreflected(&mut self, on: bool) -> bool {
        std::mem::replace(&mut self.unreflected, on)
    }

    async fn run(&mut self, command: Command, reflected: bool) -> Result<Option<Answer>> {
        if command.is_mutating() {
            if self.settings.one_action && self.mutations >= 1 {
                return Err(Error::Yield);
            }
            self.mutations += 1;
        }
        tracing::debug!(verb = command.verb(), "executing command");
        let answer = self.dispatcher.execute(&command).await;
        if let (true, true, Ok(Some(written)), Some(target)) = (
            reflected || self.echo_every_write,
            self.echoes.is_some(),
            &answer,
            command.target(),
        ) && let Some((uid, version)) = written.stored()
        {
            self.wrote.push(PassWrite {
                group: target.group.clone(),
                kind: target.kind.clone(),
                uid,
                version,
            });
        }
        // Kept after it ran rather than copied before: a command carries a whole object.
        self.commands.push(command);
        answer
    }

    /// Reads one object of `K` from the API server, past the cache: `None` when it does not exist. For
    /// objects a [selective cache](crate::CacheOptions) may not hold; a pass served by complete caches reads
    /// nothing.
    pub async fn read<K: CachedKind>(
        &mut self,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<K>> {
        self.observe::<K>();
        self.step_read(namespace, name).await
    }

    /// [`read`](Self::read), for the runtime's own steps.
    pub(crate) async fn step_read<K: CachedKind>(
        &self,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<K>> {
        let target = Target::named::<K>(namespace, name);
        tracing::debug!(object = %target, "reading past the cache");
        match self.dispatcher.get(&target).await? {
            Some(v) => Ok(Some(crate::json::convert(&v)?)),
            None => Ok(None),
        }
    }

    /// Reads one object from the API server as its JSON, `metadata.managedFields` included: `None` when it
    /// does not exist.
    pub(crate) async fn read_value(&self, target: &Target) -> Result<Option<Value>> {
        tracing::debug!(object = %target, "reading past the cache");
        self.dispatcher.get(target).await
    }

    /// Records an event about the parent.
    pub async fn event(
        &mut self,
        warning: bool,
        reason: &str,
        action: &str,
        note: impl Into<String>,
    ) {
        self.record(warning, reason, action, note.into(), None)
            .await;
    }

    /// Records an event about the parent that concerns another object too (a child it created, updated or
    /// deleted): `related` names it, so events about different children are never merged into one.
    pub async fn event_about(
        &mut self,
        related: ObjectReference,
        warning: bool,
        reason: &str,
        action: &str,
        note: impl Into<String>,
    ) {
        self.record(
            warning,
            reason,
            action,
            note.into(),
            Some(Box::new(related)),
        )
        .await;
    }

    async fn record(
        &mut self,
        warning: bool,
        reason: &str,
        action: &str,
        note: String,
        related: Option<Box<ObjectReference>>,
    ) {
        let ev = Command::Event(EventCommand {
            regarding: self.parent.clone(),
            warning,
            reason: reason.to_string(),
            note,
            action: action.to_string(),
            related,
        });
        if let Err(e) = self.execute(ev).await {
            tracing::warn!(error = %e, "could not record an event");
        }
    }

    /// Every command this pass executed, in order.
    pub fn commands(&self) -> &[Command] {
        &self.commands
    }

    /// How many mutating commands this pass executed.
    pub fn mutations(&self) -> usize {
        self.mutations
    }

    /// Remembers as echoes the writes of this pass that its status reflected, once the pass has computed its
    /// status: the writes of child steps and of the status, except those of a kind the author's code read in
    /// the pass (a status computed from a cache that did not show the write yet would be stale). A write to
    /// the parent itself (its status, a finalizer) is always one. Called once at the end of every pass.
    pub(crate) fn remember_echoes(&mut self) {
        let (Some(echoes), Some(writer)) = (&self.echoes, &self.parent.uid) else {
            self.wrote.clear();
            return;
        };
        for w in self.wrote.drain(..) {
            let observed = self
                .observed
                .iter()
                .any(|(g, k)| *g == w.group && *k == w.kind);
            if w.uid == *writer || !observed || self.echo_every_write {
                echoes.wrote(writer, &w.uid, &w.version);
            }
        }
    }
}

/// A write of this pass that may be remembered as an echo.
struct PassWrite {
    group: String,
    kind: String,
    uid: String,
    version: String,
}
