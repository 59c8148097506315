//! One child object per parent, kept equal to what a desired-state function returns.

use std::any::TypeId;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::future::{BoxFuture, FutureExt};
use kube::core::object::HasStatus;
use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde_json::Value;

use super::announce::{Mutation, announce, describe};
use super::applied::{applied_text, set_type};
use super::compare::{DESIRED_HASH, contains, merge_into, stamp_desired_hash};
use super::created::{
    adopt_created_fields, apply_child, created_once, creates_by_post, post_child,
};
use super::fights;
use super::ownership::prepare;
use super::written::shown_by;
use super::{ChildOutcome, SubReconciler, Wiring};
use crate::answer::Answer;
use crate::cache::{Cache, CachedKind};
use crate::command::{Command, Target};
use crate::conditions::{ConditionStatus, ConditionUpdate};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::outcome::Outcome;
use crate::readiness::Readiness;
use crate::tracker::TrackKey;

/// How a child is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteStrategy {
    /// Server-side apply under the controller's field manager; `force` takes fields from other managers.
    ///
    /// With `force` (the default), a child the cache does not hold is created with a `POST`, which fails on
    /// an existing object, so someone else's object of the child's name is never taken over and nothing is
    /// read first; the object is read only when the `POST` finds one. The first apply after moves what that
    /// creation owns into the apply's field manager entry, so an apply removes a field the desired state
    /// drops as it would from a child an apply created. Without `force`, or with one write per pass, a child
    /// the cache does not hold is read first and then applied.
    Apply {
        /// Take conflicting fields from other managers.
        force: bool,
    },
    /// Merge the desired fields into the live object and replace it when they differ semantically.
    Update,
    /// Create the child when it does not exist, and never write it again: for children holding a value
    /// generated once (a random password), which must survive later passes. Creating is a `POST`, so a pass on
    /// a cache that has not seen the child yet gets `409 AlreadyExists` instead of overwriting it, and a
    /// desired function that generates a new value on every call is harmless. Drift is not corrected.
    CreateOnly,
}

impl Default for WriteStrategy {
    fn default() -> Self {
        WriteStrategy::Apply { force: true }
    }
}

/// The child `namespace/name` as it is now: the one of `owned` (the children this parent controls, read from
/// the cache already: a compact cache decodes each read), else the cache's, else (with `read`) the API
/// server's.
///
/// Not in the cache is not absent: each kind has its own watch, so a pass started by the parent's event may
/// come before the child kind's event of an object made just before, and a cache of selected objects (the
/// children the runtime labelled) never holds someone else's object of the same name or a child written
/// before the owner label. So either the API server is asked before an apply could take such an object over
/// (one read per child the cache does not hold, none once converged), or, without `read`, the child is
/// created with a `POST`, which fails on an existing object, and read only then (`created.rs`).
pub(super) async fn live_child<C: CachedKind>(
    owned: &[Arc<C>],
    cache: &Cache<C>,
    cx: &Context,
    namespace: Option<&str>,
    name: &str,
    read: bool,
) -> Result<Option<Arc<C>>> {
    let known = owned
        .iter()
        .find(|c| {
            c.meta().name.as_deref() == Some(name) && c.meta().namespace.as_deref() == namespace
        })
        .cloned();
    match known.or_else(|| cache.get(namespace, name)) {
        Some(live) => Ok(Some(live)),
        None if read => Ok(cx.step_read::<C>(namespace, name).await?.map(Arc::new)),
        None => Ok(None),
    }
}

/// Whether an object is being deleted (has a `deletionTimestamp`).
pub(crate) fn is_terminating<K: Resource>(obj: &K) -> bool {
    obj.meta().deletion_timestamp.is_some()
}

/// A desired-state function as the runtime keeps it: one that may await.
type DesiredFn<P, C> =
    Box<dyn for<'a> Fn(&'a P, &'a mut Context) -> BoxFuture<'a, Result<Option<C>>> + Send + Sync>;
type ReflectFn<P, C> = Box<dyn Fn(&mut P, &ChildOutcome<C>) + Send + Sync>;
type SanitizeFn<C> = Box<dyn Fn(&C) -> Value + Send + Sync>;
pub(crate) type ReadyFn<C> = Box<dyn Fn(&C) -> Readiness + Send + Sync>;

/// Keeps one child of kind `C` equal to `desired(parent)`: creates it with a controller owner reference,
/// updates it when the fields it sets drift, deletes it when `desired` returns `None`, deletes extra children
/// it controls, and never touches an object of the same name controlled by someone else.
pub struct ChildReconciler<P, C> {
    name: String,
    desired: DesiredFn<P, C>,
    reflect: Option<ReflectFn<P, C>>,
    sanitize: Option<SanitizeFn<C>>,
    strategy: WriteStrategy,
    field_manager: Option<String>,
    condition: String,
    ready: Option<ReadyFn<C>>,
}

impl<P, C> std::fmt::Debug for ChildReconciler<P, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildReconciler")
            .field("name", &self.name)
            .field("strategy", &self.strategy)
            .finish_non_exhaustive()
    }
}

/// Whether `K` is cluster-scoped.
pub(crate) fn is_cluster_scoped<K: Resource>() -> bool
where
    K::Scope: 'static,
{
    TypeId::of::<K::Scope>() == TypeId::of::<k8s_openapi::ClusterResourceScope>()
}

/// Whether `obj` has a controller owner reference to `uid`.
pub(crate) fn controlled_by<K: Resource>(obj: &K, uid: &str) -> bool {
    obj.owner_references()
        .iter()
        .any(|r| r.uid == uid && r.controller == Some(true))
}

fn controller_of<K: Resource>(obj: &K) -> Option<String> {
    obj.owner_references()
        .iter()
        .find(|r| r.controller == Some(true))
        .map(|r| format!("{}/{}", r.kind, r.name))
}

impl<P, C> ChildReconciler<P, C>
where
    P: Resource<DynamicType = ()> + Send + Sync + 'static,
    C: CachedKind + Serialize,
    C::Scope: 'static,
{
    /// A child step: `desired` computes the child from the parent (or `None` for no child).
    pub fn new(
        name: impl Into<String>,
        desired: impl Fn(&P, &mut Context) -> Result<Option<C>> + Send + Sync + 'static,
    ) -> Self {
        Self::with_desired(
            name,
            Box::new(move |parent: &P, cx: &mut Context| {
                let out = desired(parent, cx);
                async move { out }.boxed()
            }),
        )
    }

    /// A child step whose desired function awaits (reads an external system, say): an `async fn`, boxed.
    ///
    /// ```
    /// # use futures::FutureExt;
    /// # use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    /// # use kubewright::{ChildReconciler, Context};
    /// async fn desired(cm: &ConfigMap, cx: &mut Context) -> kubewright::Result<Option<Secret>> {
    ///     tokio::task::yield_now().await; // e.g. fetch a credential
    ///     Ok(None)
    /// }
    /// let step = ChildReconciler::<ConfigMap, Secret>::new_async("secret", |cm, cx| desired(cm, cx).boxed());
    /// # let _ = step;
    /// ```
    pub fn new_async(
        name: impl Into<String>,
        desired: impl for<'a> Fn(&'a P, &'a mut Context) -> BoxFuture<'a, Result<Option<C>>>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        Self::with_desired(name, Box::new(desired))
    }

    fn with_desired(name: impl Into<String>, desired: DesiredFn<P, C>) -> Self {
        Self {
            name: name.into(),
            desired,
            reflect: None,
            sanitize: None,
            strategy: WriteStrategy::default(),
            field_manager: None,
            condition: format!("{}Ready", C::kind(&())),
            ready: None,
        }
    }

    /// Reports each pass's outcome to the parent (usually into its status). Several reflections run in the
    /// order they were added.
    pub fn reflect(
        mut self,
        reflect: impl Fn(&mut P, &ChildOutcome<C>) + Send + Sync + 'static,
    ) -> Self {
        self.reflect = Some(match self.reflect.take() {
            None => Box::new(reflect),
            Some(before) => Box::new(move |parent: &mut P, outcome: &ChildOutcome<C>| {
                before(parent, outcome);
                reflect(parent, outcome);
            }),
        });
        self
    }

    /// Gives a desired child without a name or `generateName` the `generateName` `<parent name>-`, so the API
    /// server names it (the runtime finds it again by its owner reference).
    pub fn generate_name(mut self) -> Self {
        let desired = self.desired;
        self.desired = Box::new(move |parent: &P, cx: &mut Context| {
            let prefix = format!("{}-", parent.name_any());
            let child = desired(parent, cx);
            async move {
                let mut child = child.await?;
                if let Some(child) = &mut child {
                    let meta = child.meta_mut();
                    if meta.name.as_deref().is_none_or(str::is_empty)
                        && meta.generate_name.is_none()
                    {
                        meta.name = None;
                        meta.generate_name = Some(prefix);
                    }
                }
                Ok(child)
            }
            .boxed()
        });
        self
    }

    /// What to log of a child instead of its name and kind (e.g. without secret data).
    pub fn sanitize(mut self, sanitize: impl Fn(&C) -> Value + Send + Sync + 'static) -> Self {
        self.sanitize = Some(Box::new(sanitize));
        self
    }

    /// How the child is written (default: server-side apply, forced).
    pub fn strategy(mut self, strategy: WriteStrategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// The field manager (default: the controller's).
    pub fn field_manager(mut self, manager: impl Into<String>) -> Self {
        self.field_manager = Some(manager.into());
        self
    }

    /// The condition type this child reports (default `<Kind>Ready`).
    pub fn condition(mut self, type_: impl Into<String>) -> Self {
        self.condition = type_.into();
        self
    }

    /// Decides whether the child is ready (default: [`builtin`](crate::readiness::builtin) for Kubernetes' own
    /// kinds, which knows the workload kinds and takes the others as ready once written;
    /// [`conventional`](crate::readiness::conventional) for custom resources, see [`crate::readiness`]).
    /// `|_| Readiness::Ready` turns readiness off.
    pub fn ready(mut self, ready: impl Fn(&C) -> Readiness + Send + Sync + 'static) -> Self {
        self.ready = Some(Box::new(ready));
        self
    }

    fn report(&self, parent: &mut P, outcome: &ChildOutcome<C>) {
        if let Some(r) = &self.reflect {
            r(parent, outcome);
        }
    }

    fn describe(&self, child: &C) -> String {
        match &self.sanitize {
            Some(s) => s(child).to_string(),
            None => describe(child),
        }
    }

    async fn run(&self, parent: &mut P, cx: &mut Context) -> Result<Outcome> {
        let outcome = match self.sync(parent, cx).await {
            Ok((outcome, o)) => {
                self.report(parent, &o);
                cx.decide(o);
                outcome
            }
            Err(e) => {
                if !matches!(e, Error::Yield) && !e.is_conflict() {
                    let failed = ChildOutcome::<C>::Failed(e.to_string());
                    self.report(parent, &failed);
                    cx.decide(failed);
                }
                return Err(e);
            }
        };
        Ok(outcome)
    }

    async fn sync(&self, parent: &mut P, cx: &mut Context) -> Result<(Outcome, ChildOutcome<C>)> {
        if let Some(done) = self
            .sync_with(parent, cx, !self.creates_by_post(cx))
            .await?
        {
            return Ok(done);
        }
        // The `POST` found an object of the child's name: read it, and decide again (the desired function
        // runs again too).
        self.sync_with(parent, cx, true).await?.ok_or_else(|| {
            Error::custom(format!(
                "{} was created by a POST after a read",
                C::kind(&())
            ))
        })
    }

    /// Whether a child the cache does not hold is created with a `POST` ([`creates_by_post`]).
    fn creates_by_post(&self, cx: &Context) -> bool {
        creates_by_post(
            matches!(self.strategy, WriteStrategy::Apply { force: true }),
            cx,
        )
    }

    /// One pass of the step; with `read`, a child the cache does not hold is read from the API server first,
    /// without it created with a `POST`. `None` when that `POST` found an object of the child's name.
    async fn sync_with(
        &self,
        parent: &mut P,
        cx: &mut Context,
        read: bool,
    ) -> Result<Option<(Outcome, ChildOutcome<C>)>> {
        let uid = parent
            .uid()
            .ok_or_else(|| Error::custom(format!("{} has no uid yet", parent.name_any())))?;
        let cache = cx.step_cache::<C>()?;
        if cache.options().is_metadata_only() {
            return Err(crate::CacheOptionsError::ChildMetadataOnly {
                kind: C::kind(&()).into_owned(),
            }
            .into());
        }
        let owned: Vec<Arc<C>> = cache
            .owned_by(&uid)
            .into_iter()
            .filter(|c| controlled_by(c.as_ref(), &uid))
            .collect();
        let desired = (self.desired)(parent, cx).await?;
        let Some(mut desired) = desired else {
            let (terminating, live): (Vec<_>, Vec<_>) = owned.iter().partition(|c| {
                is_terminating(c.as_ref()) || cx.written().delete_pending(c.as_ref())
            });
            let outcome = match (live.is_empty(), terminating.first()) {
                (false, _) => ChildOutcome::Deleted,
                (true, Some(c)) => ChildOutcome::Terminating(c.as_ref().clone()),
                (true, None) => ChildOutcome::Absent,
            };
            for child in live {
                self.delete(cx, child, "no longer desired").await?;
            }
            cx.set_condition(ConditionUpdate::true_(&self.condition, "NotNeeded", ""));
            return Ok(Some((Outcome::Continue, outcome)));
        };
        prepare_child(parent, &mut desired, &self.strategy)?;
        let namespace = desired.namespace();
        let name = match desired.meta().name.clone().filter(|n| !n.is_empty()) {
            Some(n) => n,
            None if desired.meta().generate_name.is_some() => match owned.first() {
                Some(existing) => {
                    let n = existing.name_any();
                    desired.meta_mut().name = Some(n.clone());
                    desired.meta_mut().generate_name = None;
                    n
                }
                None => {
                    let manager = matches!(self.strategy, WriteStrategy::Apply { .. })
                        .then(|| self.manager(cx));
                    let created = self.create(cx, &desired, manager).await?;
                    // The same condition as any other pass that leaves the child in place, so the next
                    // (converged) pass does not rewrite the status.
                    let condition = self.written_condition(cx, &created).await;
                    cx.set_condition(condition);
                    return Ok(Some((Outcome::Continue, ChildOutcome::Created(created))));
                }
            },
            None => {
                return Err(Error::custom(format!(
                    "the desired {} has neither a name nor a generateName",
                    C::kind(&())
                )));
            }
        };
        let live = live_child(&owned, &cache, cx, namespace.as_deref(), &name, read).await?;
        if let Some(live) = &live
            && !controlled_by(live.as_ref(), &uid)
        {
            // Someone else's object: leave it alone, and come back when it goes away.
            cx.track(TrackKey::name::<C>(namespace.as_deref(), &name));
            let controller = controller_of(live.as_ref());
            let message = format!(
                "{} {} exists and is not controlled by {} {}{}",
                C::kind(&()),
                name,
                P::kind(&()),
                parent.name_any(),
                controller
                    .as_ref()
                    .map(|c| format!(" (controlled by {c})"))
                    .unwrap_or_default()
            );
            tracing::warn!(child = %name, "{message}");
            cx.set_condition(ConditionUpdate::false_(
                &self.condition,
                "NotOwned",
                message,
            ));
            return Ok(Some((
                Outcome::Continue,
                ChildOutcome::Conflict { name, controller },
            )));
        }
        let written = cx.written();
        for extra in owned.iter().filter(|c| {
            (c.name_any() != name || c.namespace() != namespace)
                && !is_terminating(c.as_ref())
                && !written.delete_pending(c.as_ref())
        }) {
            self.delete(cx, extra, "an extra child (another name is desired)")
                .await?;
        }
        if let Some(live) = live.as_ref().filter(|l| is_terminating(l.as_ref())) {
            // Writing to it would not stop its deletion; wait for it to go (its deletion brings the parent
            // back) and create it again then.
            cx.set_condition(ConditionUpdate::false_(
                &self.condition,
                "Terminating",
                format!(
                    "{} is being deleted; it will be created again once it is gone",
                    describe(live.as_ref())
                ),
            ));
            return Ok(Some((
                Outcome::Continue,
                ChildOutcome::Terminating(live.as_ref().clone()),
            )));
        }
        // A different desired-state hash means a different desired state: no need to compare the objects. With
        // the same hash, a child that differs was changed by someone else: correcting it may be a fight.
        let holds = match (&self.strategy, live.as_ref()) {
            (WriteStrategy::Apply { .. }, Some(l)) if same_desired_hash(l.as_ref(), &desired) => {
                let (live_value, desired_value) = (
                    crate::json::convert(l.as_ref())?,
                    crate::json::convert(&desired)?,
                );
                let holds = contains(&live_value, &desired_value);
                if !holds
                    && let Some(wait) = self
                        .correction(cx, l.as_ref(), &desired, &desired_value, &live_value)
                        .await?
                {
                    return Ok(Some((
                        Outcome::RequeueAfter(wait),
                        ChildOutcome::Unchanged(l.as_ref().clone()),
                    )));
                }
                holds
            }
            _ => false,
        };
        let outcome = match (&self.strategy, live) {
            (WriteStrategy::Apply { .. }, Some(live)) if holds => {
                cx.written().seen(live.as_ref());
                ChildOutcome::Unchanged(live.as_ref().clone())
            }
            // Not in the cache, and not read: create only (`created.rs`).
            (WriteStrategy::Apply { .. }, None) if !read => {
                match self.create(cx, &desired, Some(self.manager(cx))).await {
                    Ok(child) => ChildOutcome::Created(child),
                    Err(e) if e.is_already_exists() => return Ok(None),
                    Err(e) => return Err(e),
                }
            }
            (WriteStrategy::Apply { force }, live) => {
                let cached = live
                    .as_ref()
                    .map(|l| l.meta().resource_version.clone().unwrap_or_default());
                let object = applied_text(&desired)?;
                let manager = self.manager(cx);
                let target = Target::of(&desired);
                let out = apply_child(cx, &target, &object, &manager, *force)
                    .await
                    .map_err(|e| e.refused_child(&C::kind(&())))?;
                // A child created with a `POST` stands as if an apply had created it after its first apply.
                let out = match cached {
                    Some(_) => {
                        adopt_created_fields(cx, out, &target, &object, &manager, *force).await?
                    }
                    None => out,
                };
                // The API's answer, not the cache, says what the apply did: on a cache that lags behind the
                // previous pass's create, the apply is a no-op and the child is not announced again.
                let mutation = cx.written().applied(
                    cached.as_deref(),
                    out.as_ref(),
                    shown_by(&cache, namespace.as_deref(), &name),
                );
                let child = result_or(out, &desired)?;
                match mutation {
                    None => ChildOutcome::Unchanged(child),
                    Some(mutation) => {
                        announce(cx, mutation, &child, &self.describe(&child), None).await;
                        if mutation == Mutation::Created {
                            ChildOutcome::Created(child)
                        } else {
                            ChildOutcome::Updated(child)
                        }
                    }
                }
            }
            (WriteStrategy::CreateOnly, Some(live)) => {
                created_once(cx, live.as_ref(), &uid).await?
            }
            (WriteStrategy::Update | WriteStrategy::CreateOnly, None) => {
                match self.create(cx, &desired, None).await {
                    Ok(child) => ChildOutcome::Created(child),
                    // The cache lags behind an earlier create: try again shortly, this is not a conflict.
                    Err(e) if e.is_conflict() => {
                        // Whether the child is as desired is unknown until the cache catches up: say so, rather
                        // than letting `Ready` roll up to `True` without the child.
                        cx.set_condition(ConditionUpdate::new(
                            &self.condition,
                            ConditionStatus::Unknown,
                            "AlreadyExists",
                            format!(
                                "{} {name} already exists but is not in the cache yet; retrying",
                                C::kind(&())
                            ),
                        ));
                        return Ok(Some((
                            Outcome::RequeueAfter(Duration::from_millis(500)),
                            ChildOutcome::Absent,
                        )));
                    }
                    Err(e) => return Err(e),
                }
            }
            (WriteStrategy::Update, Some(live)) => {
                let live_value: Value = crate::json::convert(live.as_ref())?;
                let mut merged = live_value.clone();
                merge_into(&mut merged, &crate::json::convert(&desired)?);
                if merged == live_value {
                    ChildOutcome::Unchanged(live.as_ref().clone())
                } else {
                    set_type::<C>(&mut merged);
                    let out = cx
                        .execute_reflected(Command::Update {
                            target: Target::of(&desired),
                            object: merged.clone(),
                        })
                        .await
                        .map_err(|e| e.refused_child(&C::kind(&())))?;
                    let child: C = match out {
                        Some(answer) => answer.object()?,
                        None => crate::json::convert(&merged)?,
                    };
                    announce(cx, Mutation::Updated, &child, &self.describe(&child), None).await;
                    ChildOutcome::Updated(child)
                }
            }
        };
        let mut next = Outcome::Continue;
        if let Some(child) = outcome.child() {
            let condition = self.written_condition(cx, child).await;
            cx.set_condition(condition);
            // A fight in progress speaks for the child until it ends, and a pass comes when it would.
            let uid = child.uid().unwrap_or_default();
            if let Some(fight) = cx.written().fights().active(&uid, Instant::now()) {
                cx.set_condition(fights::contested(
                    &self.condition,
                    &fight,
                    &self.describe(child),
                ));
                next = Outcome::RequeueAfter(fight.ends_in);
            }
        }
        Ok(Some((next, outcome)))
    }

    /// Before correcting another writer's change to `live`: how long to wait first (`fights::before_correction`).
    async fn correction(
        &self,
        cx: &mut Context,
        live: &C,
        desired: &C,
        desired_value: &Value,
        live_value: &Value,
    ) -> Result<Option<Duration>> {
        let correction = fights::Correction {
            condition: &self.condition,
            child: self.describe(live),
            child_ref: live.object_ref(&()),
            kind: C::kind(&()).into_owned(),
            uid: live.uid().unwrap_or_default(),
            target: Target::of(desired),
            manager: self.manager(cx),
        };
        fights::before_correction(cx, correction, desired_value, live_value).await
    }

    /// The step's condition once the child is in place: `True` when it is also ready, else `False` with why.
    async fn written_condition(&self, cx: &Context, child: &C) -> ConditionUpdate {
        let readiness = match &self.ready {
            Some(ready) => ready(child),
            None => cx.readiness_convention::<C>().await.readiness(child),
        };
        match readiness {
            Readiness::Ready => ConditionUpdate::true_(&self.condition, "Reconciled", ""),
            Readiness::NotReady { reason, message } => ConditionUpdate::false_(
                &self.condition,
                reason,
                format!("{}: {message}", describe(child)),
            ),
        }
    }

    /// The field manager of this step's applies.
    fn manager(&self, cx: &Context) -> String {
        self.field_manager
            .clone()
            .unwrap_or_else(|| cx.settings().field_manager.clone())
    }

    async fn create(
        &self,
        cx: &mut Context,
        desired: &C,
        field_manager: Option<String>,
    ) -> Result<C> {
        let child = post_child(cx, desired, field_manager).await?;
        announce(cx, Mutation::Created, &child, &self.describe(&child), None).await;
        Ok(child)
    }

    async fn delete(&self, cx: &mut Context, child: &C, why: &str) -> Result<()> {
        cx.execute_reflected(Command::Delete {
            target: Target::of(child),
            uid: child.uid(),
        })
        .await?;
        cx.written().deleted(child);
        announce(
            cx,
            Mutation::Deleted,
            child,
            &self.describe(child),
            Some(why),
        )
        .await;
        Ok(())
    }
}

impl<P, C> ChildReconciler<P, C>
where
    P: HasStatus + Resource<DynamicType = ()> + Send + Sync + 'static,
    P::Status: Default,
    C: CachedKind + Serialize,
    C::Scope: 'static,
{
    /// Reports each pass's outcome into the parent's status (an empty status is created if there is none):
    /// [`reflect`](Self::reflect) for functions that only need the status.
    pub fn reflect_status(
        self,
        reflect: impl Fn(&mut P::Status, &ChildOutcome<C>) + Send + Sync + 'static,
    ) -> Self {
        self.reflect(move |parent: &mut P, outcome: &ChildOutcome<C>| {
            reflect(
                parent.status_mut().get_or_insert_with(Default::default),
                outcome,
            )
        })
    }

    /// Reports the child's name into a field of the parent's status: its name while it is in place, `None`
    /// once it is gone, terminating or someone else's, and the field left as it was when the pass failed
    /// ([`ChildOutcome::reflect_into`]). Runs after the reflections added before it.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::Service;
    /// # use kube::CustomResource;
    /// # use kubewright::{ChildReconciler, Context, object};
    /// #[derive(CustomResource, Clone, Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
    /// #[kube(group = "example.dev", version = "v1", kind = "Site", namespaced, status = "SiteStatus")]
    /// pub struct SiteSpec {}
    ///
    /// #[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
    /// pub struct SiteStatus {
    ///     service: Option<String>,
    /// }
    ///
    /// let step = ChildReconciler::new("service", |_: &Site, _: &mut Context| {
    ///     Ok(Some(object!(Service { metadata: { name: "site" } })))
    /// })
    /// .reflect_name(|status: &mut SiteStatus| &mut status.service);
    /// # let _ = step;
    /// ```
    pub fn reflect_name(
        self,
        field: impl Fn(&mut P::Status) -> &mut Option<String> + Send + Sync + 'static,
    ) -> Self {
        self.reflect_status(move |status, outcome| {
            outcome.reflect_into(field(status), |c| Some(c.name_any()))
        })
    }
}

/// Whether `live` carries the desired-state hash `desired` carries (both absent counts as the same).
fn same_desired_hash<C: Resource>(live: &C, desired: &C) -> bool {
    live.annotations().get(DESIRED_HASH) == desired.annotations().get(DESIRED_HASH)
}

fn result_or<C: CachedKind + Serialize>(out: Option<Answer>, desired: &C) -> Result<C> {
    match out {
        // Without its managed fields, as a cached child is.
        Some(answer) => Ok(crate::unmanaged::from_str(answer.json())?),
        None => Ok(desired.clone()),
    }
}

/// Makes a desired child what the runtime writes: the desired-state hash (for server-side apply), then the
/// namespace and the controller owner reference ([`prepare`]). Table-test fixtures are built by this too.
pub(crate) fn prepare_child<P, C>(parent: &P, child: &mut C, strategy: &WriteStrategy) -> Result<()>
where
    P: Resource<DynamicType = ()>,
    C: Resource<DynamicType = ()> + Serialize + Clone,
    C::Scope: 'static,
{
    // Hashed before the owner reference is added, so the hash depends on the desired state only.
    if matches!(strategy, WriteStrategy::Apply { .. }) {
        stamp_desired_hash(child)?;
    }
    prepare(parent, child)
}

impl<P, C> SubReconciler<P> for ChildReconciler<P, C>
where
    P: Resource<DynamicType = ()> + Send + Sync + 'static,
    C: CachedKind + Serialize,
    C::Scope: 'static,
{
    fn name(&self) -> &str {
        &self.name
    }

    fn reconcile<'a>(
        &'a self,
        parent: &'a mut P,
        cx: &'a mut Context,
    ) -> BoxFuture<'a, Result<Outcome>> {
        self.run(parent, cx).boxed()
    }

    fn wire(&self, wiring: &mut Wiring) {
        wiring.owns::<C>();
    }
}
