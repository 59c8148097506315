//! A variable number of children of one kind, each identified by an id.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use futures::future::{BoxFuture, FutureExt};
use kube::core::object::HasStatus;
use kube::{Resource, ResourceExt};
use serde::Serialize;

use super::announce::{Mutation, announce, describe};
use super::applied::applied_text;
use super::child::{ReadyFn, controlled_by, is_terminating, live_child};
use super::compare::{contains, stamp_desired_hash};
use super::created::{
    adopt_created_fields, apply_child, created_once, creates_by_post, post_child,
};
use super::ownership::prepare;
use super::retention::{Fate, Retention, fates};
use super::written::shown_by;
use super::{ChildOutcome, SubReconciler, Wiring};
use crate::cache::CachedKind;
use crate::command::{Command, Target, display_name};
use crate::conditions::ConditionUpdate;
use crate::context::Context;
use crate::error::{Error, Result};
use crate::outcome::Outcome;
use crate::readiness::{self, Readiness};
use crate::tracker::TrackKey;

/// A desired-state function as the runtime keeps it: one that may await.
type DesiredSetFn<P, C> =
    Box<dyn for<'a> Fn(&'a P, &'a mut Context) -> BoxFuture<'a, Result<Vec<C>>> + Send + Sync>;
type IdFn<C> = Box<dyn Fn(&C) -> String + Send + Sync>;
type ReflectSetFn<P, C> = Box<dyn Fn(&mut P, &BTreeMap<String, ChildOutcome<C>>) + Send + Sync>;
type RetainFn<P, C> = Box<dyn Fn(&P, &C) -> Retention + Send + Sync>;

/// How a child set writes its children: the set's counterpart of [`WriteStrategy`](super::WriteStrategy),
/// given the same way (`.strategy(..)`, `strategy = ".."` in the derive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetStrategy {
    /// Server-side apply under the controller's field manager, as
    /// [`WriteStrategy::Apply`](super::WriteStrategy::Apply): each child is kept equal to its desired form.
    Apply {
        /// Take conflicting fields from other managers.
        force: bool,
    },
    /// Create each child once (a `POST`) and never write it again, as
    /// [`WriteStrategy::CreateOnly`](super::WriteStrategy::CreateOnly): for run-once children (Jobs, backups).
    /// A child whose desired form changed is left as it is: to replace one, delete it (the first pass after it is
    /// gone creates it from the desired form of then, if it is still desired), or give the new form a new name
    /// (and id), so that the old child is no longer desired and its [retention](ChildSetReconciler::retain)
    /// decides. The default readiness is [`readiness::finished`]: a Job is ready once it has finished.
    CreateOnly,
}

impl Default for SetStrategy {
    fn default() -> Self {
        SetStrategy::Apply { force: true }
    }
}

/// Keeps a set of children of kind `C` equal to `desired(parent)`: missing ones are created, drifted ones
/// updated (server-side apply), extra ones deleted. Outcomes are reported by `id` (e.g. a label).
///
/// With [`SetStrategy::CreateOnly`] the children are created once and never written again, and a
/// [retention rule](Self::retain) decides what becomes of those no longer desired: kept, kept as the newest of
/// a history, or deleted. Such a set keeps the run-once children of a parent, e.g. the Jobs of a CronJob:
///
/// ```
/// use std::borrow::Cow;
/// use k8s_openapi::api::batch::v1::Job;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::ResourceExt;
/// use kubewright::reconcilers::{ChildSetReconciler, Retention, SetStrategy};
///
/// fn finished(job: &Job) -> bool {
///     job.status.as_ref().and_then(|s| s.conditions.as_ref()).into_iter().flatten()
///         .any(|c| (c.type_ == "Complete" || c.type_ == "Failed") && c.status == "True")
/// }
///
/// // The parent here is a ConfigMap whose `history` key says how many finished Jobs to keep.
/// let jobs = ChildSetReconciler::new("jobs", |_: &ConfigMap, _| Ok(Vec::<Job>::new()), |job: &Job| job.name_any())
///     .strategy(SetStrategy::CreateOnly)
///     .retain(|parent: &ConfigMap, job: &Job| {
///         let limit = parent.data.as_ref().and_then(|d| d.get("history")?.parse().ok()).unwrap_or(3);
///         match job.metadata.creation_timestamp.as_ref() {
///             Some(created) if finished(job) => {
///                 Retention::History { class: Cow::Borrowed("Finished"), limit, at: created.0 }
///             }
///             _ => Retention::Keep,
///         }
///     });
/// # let _ = jobs;
/// ```
///
/// Which live object is which desired child is decided by where it lives (namespace and name) among the
/// objects the parent controls, never by its id: a child whose id label was edited by hand is updated (the
/// label put back), not deleted. A child is extra only when it is controlled by the parent and no desired child
/// has its name; each delete's event says so. Children being deleted are not deleted again and are reported
/// as [`ChildOutcome::Terminating`] (and the set's condition is `False` while a desired one is). Objects with
/// a desired name that someone else controls are reported as conflicts and left alone.
///
/// Children no longer desired that a retention rule keeps are not written; they are in the outcomes the
/// reflections see, as [`ChildOutcome::Unchanged`] under their id (a desired child of the same id wins), so a
/// reflection sees the whole history (the running Jobs, say). The set's condition considers the desired
/// children and those kept by [`Retention::Keep`] only, not the history ([`Retention::History`]): a failed Job
/// in the history does not make the set unready, a running Job that is kept does.
pub struct ChildSetReconciler<P, C> {
    name: String,
    desired: DesiredSetFn<P, C>,
    id: IdFn<C>,
    reflect: Option<ReflectSetFn<P, C>>,
    strategy: SetStrategy,
    retain: Option<RetainFn<P, C>>,
    condition: String,
    ready: Option<ReadyFn<C>>,
}

impl<P, C> std::fmt::Debug for ChildSetReconciler<P, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildSetReconciler")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl<P, C> ChildSetReconciler<P, C>
where
    P: Resource<DynamicType = ()> + Send + Sync + 'static,
    C: CachedKind + Serialize,
    C::Scope: 'static,
{
    /// A child-set step: `desired` lists the children, `id` identifies each (live or desired).
    pub fn new(
        name: impl Into<String>,
        desired: impl Fn(&P, &mut Context) -> Result<Vec<C>> + Send + Sync + 'static,
        id: impl Fn(&C) -> String + Send + Sync + 'static,
    ) -> Self {
        Self::with_desired(
            name,
            Box::new(move |parent: &P, cx: &mut Context| {
                let out = desired(parent, cx);
                async move { out }.boxed()
            }),
            id,
        )
    }

    /// A child-set step whose desired function awaits: an `async fn`, boxed (as for
    /// [`ChildReconciler::new_async`](super::ChildReconciler::new_async)).
    pub fn new_async(
        name: impl Into<String>,
        desired: impl for<'a> Fn(&'a P, &'a mut Context) -> BoxFuture<'a, Result<Vec<C>>>
        + Send
        + Sync
        + 'static,
        id: impl Fn(&C) -> String + Send + Sync + 'static,
    ) -> Self {
        Self::with_desired(name, Box::new(desired), id)
    }

    fn with_desired(
        name: impl Into<String>,
        desired: DesiredSetFn<P, C>,
        id: impl Fn(&C) -> String + Send + Sync + 'static,
    ) -> Self {
        Self {
            name: name.into(),
            desired,
            id: Box::new(id),
            reflect: None,
            strategy: SetStrategy::default(),
            retain: None,
            condition: format!("{}sReady", C::kind(&())),
            ready: None,
        }
    }

    /// Reports the outcome of each child by id. Several reflections run in the order they were added.
    pub fn reflect(
        mut self,
        reflect: impl Fn(&mut P, &BTreeMap<String, ChildOutcome<C>>) + Send + Sync + 'static,
    ) -> Self {
        self.reflect = Some(match self.reflect.take() {
            None => Box::new(reflect),
            Some(before) => Box::new(
                move |parent: &mut P, outcomes: &BTreeMap<String, ChildOutcome<C>>| {
                    before(parent, outcomes);
                    reflect(parent, outcomes);
                },
            ),
        });
        self
    }

    /// The condition type this set reports (default `<Kind>sReady`).
    pub fn condition(mut self, type_: impl Into<String>) -> Self {
        self.condition = type_.into();
        self
    }

    /// How the children are written (default: server-side apply, forced), as
    /// [`ChildReconciler::strategy`](super::ChildReconciler::strategy) for one child.
    pub fn strategy(mut self, strategy: SetStrategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// What becomes of each child the desired function no longer lists (one the parent controls, not being
    /// deleted): `retain(parent, child)` answers [`Retention::Keep`], [`Retention::History`] (the newest
    /// `limit` of the history `class` are kept, the others deleted, each with an event saying so: `Deleted Job
    /// default/x: history Succeeded keeps the newest 3`) or [`Retention::Delete`]. Without a rule every such
    /// child is deleted (`Deleted Job default/x: no desired Job has this name`). Kept children are never
    /// written. A later call replaces the rule.
    pub fn retain(mut self, retain: impl Fn(&P, &C) -> Retention + Send + Sync + 'static) -> Self {
        self.retain = Some(Box::new(retain));
        self
    }

    /// Decides whether each child is ready (default: [`readiness::builtin`], or [`readiness::finished`] with
    /// [`SetStrategy::CreateOnly`], for Kubernetes' own kinds; [`readiness::conventional`] for custom
    /// resources, see [`crate::readiness`]); the set's condition is `False`, naming the first child that is not, until
    /// every one is.
    pub fn ready(mut self, ready: impl Fn(&C) -> Readiness + Send + Sync + 'static) -> Self {
        self.ready = Some(Box::new(ready));
        self
    }

    async fn run(&self, parent: &mut P, cx: &mut Context) -> Result<Outcome> {
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
        let mut outcomes: BTreeMap<String, ChildOutcome<C>> = BTreeMap::new();
        // Where each desired child lives: a live child is matched to a desired one by this, never by its
        // id, which is read from fields anyone can edit.
        let mut kept: BTreeSet<(Option<String>, String)> = BTreeSet::new();
        let mut conflicts = Vec::new();
        let mut terminating = Vec::new();
        let manager = cx.settings().field_manager.clone();
        let create_only = self.strategy == SetStrategy::CreateOnly;
        let force = matches!(self.strategy, SetStrategy::Apply { force: true });
        // A child created once is always created with a `POST`, as one child created once is.
        let posts = create_only || creates_by_post(force, cx);
        let post_manager = (!create_only).then(|| manager.clone());
        for mut d in desired {
            let id = (self.id)(&d);
            if outcomes.contains_key(&id) {
                return Err(Error::custom(format!(
                    "two desired {} share the id {id:?}",
                    C::kind(&())
                )));
            }
            // Hashed before the owner reference is added, so the hash depends on the desired state only; a child
            // created once is never compared, so it carries none.
            if !create_only {
                stamp_desired_hash(&mut d)?;
            }
            prepare(parent, &mut d)?;
            let name = d
                .meta()
                .name
                .clone()
                .filter(|n| !n.is_empty())
                .ok_or_else(|| {
                    Error::custom(format!(
                        "the desired {} with id {id:?} has no name",
                        C::kind(&())
                    ))
                })?;
            let ns = d.namespace();
            if !kept.insert((ns.clone(), name.clone())) {
                return Err(Error::custom(format!(
                    "two desired {} share the name {}",
                    C::kind(&()),
                    display_name(&d)
                )));
            }
            // As a child step does (`created.rs`): a child the cache does not hold is created with a `POST`,
            // and read only when that finds an object of its name.
            let mut live = live_child(&owned, &cache, cx, ns.as_deref(), &name, !posts).await?;
            if live.is_none() && posts {
                match post_child(cx, &d, post_manager.clone()).await {
                    Ok(child) => {
                        announce(cx, Mutation::Created, &child, &describe(&child), None).await;
                        outcomes.insert(id, ChildOutcome::Created(child));
                        continue;
                    }
                    Err(e) if e.is_already_exists() => {
                        live = cx.step_read::<C>(ns.as_deref(), &name).await?.map(Arc::new);
                    }
                    Err(e) => return Err(e),
                }
            }
            if let Some(l) = &live
                && !controlled_by(l.as_ref(), &uid)
            {
                cx.track(TrackKey::name::<C>(ns.as_deref(), &name));
                conflicts.push(display_name(&d));
                outcomes.insert(
                    id,
                    ChildOutcome::Conflict {
                        name,
                        controller: None,
                    },
                );
                continue;
            }
            if let Some(l) = live.as_ref().filter(|l| is_terminating(l.as_ref())) {
                // Writing to it would not stop its deletion: wait until it is gone (its deletion brings the
                // parent back) and create it again then.
                terminating.push(display_name(l.as_ref()));
                outcomes.insert(id, ChildOutcome::Terminating(l.as_ref().clone()));
                continue;
            }
            if create_only {
                let Some(l) = live else {
                    // The `POST` found an object that was gone when read: the next pass creates it.
                    return Err(Error::custom(format!(
                        "{} {} existed when created and was gone when read",
                        C::kind(&()),
                        display_name(&d)
                    )));
                };
                outcomes.insert(id, created_once(cx, l.as_ref(), &uid).await?);
                continue;
            }
            if let Some(l) = &live
                && contains(
                    &crate::json::convert(l.as_ref())?,
                    &crate::json::convert(&d)?,
                )
            {
                cx.written().seen(l.as_ref());
                outcomes.insert(id, ChildOutcome::Unchanged(l.as_ref().clone()));
                continue;
            }
            let object = applied_text(&d)?;
            let target = Target::of(&d);
            let out = apply_child(cx, &target, &object, &manager, force)
                .await
                .map_err(|e| e.refused_child(&C::kind(&())))?;
            // What the apply did, from the API's answer (a cache that lags makes it a no-op, not a create).
            let cached = live
                .as_ref()
                .map(|l| l.meta().resource_version.clone().unwrap_or_default());
            let out = match cached {
                Some(_) => adopt_created_fields(cx, out, &target, &object, &manager, force).await?,
                None => out,
            };
            let mutation = cx.written().applied(
                cached.as_deref(),
                out.as_ref(),
                shown_by(&cache, ns.as_deref(), &name),
            );
            let child: C = match out {
                Some(answer) => crate::unmanaged::from_str(answer.json())?,
                None => d.clone(),
            };
            let outcome = match mutation {
                None => ChildOutcome::Unchanged(child),
                Some(mutation) => {
                    announce(cx, mutation, &child, &describe(&child), None).await;
                    match mutation {
                        Mutation::Created => ChildOutcome::Created(child),
                        _ => ChildOutcome::Updated(child),
                    }
                }
            };
            outcomes.insert(id, outcome);
        }
        let history = self
            .no_longer_desired(parent, cx, &owned, &kept, &mut outcomes)
            .await?;
        let convention = match &self.ready {
            Some(_) => readiness::Convention::Builtin,
            None => cx.readiness_convention::<C>().await,
        };
        let condition = if !conflicts.is_empty() {
            ConditionUpdate::false_(
                &self.condition,
                "NotOwned",
                format!(
                    "{} {} not controlled by {} {}",
                    C::kind(&()),
                    match conflicts.as_slice() {
                        [one] => format!("{one} exists and is"),
                        many => format!("{} exist and are", many.join(", ")),
                    },
                    P::kind(&()),
                    parent.name_any()
                ),
            )
        } else if !terminating.is_empty() {
            ConditionUpdate::false_(
                &self.condition,
                "Terminating",
                format!(
                    "{} {} being deleted; created again once gone",
                    C::kind(&()),
                    match terminating.as_slice() {
                        [one] => format!("{one} is"),
                        many => format!("{} are", many.join(", ")),
                    },
                ),
            )
        } else if let Some((child, reason, message)) = outcomes
            .iter()
            .filter(|(id, o)| !o.is_terminating() && !history.contains(*id))
            .filter_map(|(_, o)| o.child())
            .find_map(|c| match self.readiness(c, convention) {
                Readiness::Ready => None,
                Readiness::NotReady { reason, message } => Some((c, reason, message)),
            })
        {
            ConditionUpdate::false_(
                &self.condition,
                reason,
                format!("{}: {message}", describe(child)),
            )
        } else {
            ConditionUpdate::true_(&self.condition, "Reconciled", "")
        };
        cx.set_condition(condition);
        if let Some(r) = &self.reflect {
            r(parent, &outcomes);
        }
        cx.decide(outcomes);
        Ok(Outcome::Continue)
    }

    /// The children the parent controls at a place no desired child takes (`kept`): being deleted, kept by the
    /// retention rule (reported unchanged), or deleted. Only such a child is extra: one the pass just wrote, or
    /// whose id was edited, is kept (and the apply put its id back). Returns the ids of the children kept as
    /// history, which the set's readiness does not consider.
    async fn no_longer_desired(
        &self,
        parent: &P,
        cx: &mut Context,
        owned: &[Arc<C>],
        kept: &BTreeSet<(Option<String>, String)>,
        outcomes: &mut BTreeMap<String, ChildOutcome<C>>,
    ) -> Result<BTreeSet<String>> {
        let mut extras = Vec::new();
        for extra in owned
            .iter()
            .filter(|c| !kept.contains(&(c.namespace(), c.name_any())))
        {
            let id = (self.id)(extra.as_ref());
            // Being deleted, or deleted by an earlier pass whose delete this cache has not seen yet.
            if is_terminating(extra.as_ref()) || cx.written().delete_pending(extra.as_ref()) {
                outcomes
                    .entry(id)
                    .or_insert_with(|| ChildOutcome::Terminating(extra.as_ref().clone()));
                continue;
            }
            let answer = self.retain.as_ref().map(|r| r(parent, extra.as_ref()));
            extras.push((((extra.namespace(), extra.name_any()), answer), (id, extra)));
        }
        // By place, so that the deletes and their events come in the same order on every pass.
        extras.sort_by(|a, b| a.0.0.cmp(&b.0.0));
        let (answers, extras): (Vec<_>, Vec<_>) = extras.into_iter().unzip();
        let mut history = BTreeSet::new();
        for (fate, (id, extra)) in fates(&answers).into_iter().zip(extras) {
            let why = match fate {
                Fate::Keep | Fate::InHistory => {
                    // An edited id may name a desired child: its outcome is the one that counts.
                    if let std::collections::btree_map::Entry::Vacant(v) = outcomes.entry(id) {
                        if fate == Fate::InHistory {
                            history.insert(v.key().clone());
                        }
                        v.insert(ChildOutcome::Unchanged(extra.as_ref().clone()));
                    }
                    continue;
                }
                Fate::Delete(why) => {
                    why.unwrap_or_else(|| format!("no desired {} has this name", C::kind(&())))
                }
            };
            cx.execute_reflected(Command::Delete {
                target: Target::of(extra.as_ref()),
                uid: extra.uid(),
            })
            .await?;
            cx.written().deleted(extra.as_ref());
            announce(
                cx,
                Mutation::Deleted,
                extra.as_ref(),
                &describe(extra.as_ref()),
                Some(&why),
            )
            .await;
            outcomes.entry(id).or_insert(ChildOutcome::Deleted);
        }
        Ok(history)
    }

    fn readiness(&self, child: &C, convention: readiness::Convention) -> Readiness {
        match &self.ready {
            Some(ready) => ready(child),
            None if convention != readiness::Convention::Builtin => convention.readiness(child),
            None if self.strategy == SetStrategy::CreateOnly => readiness::finished(child),
            None => readiness::builtin(child),
        }
    }
}

impl Context {
    /// What the child-set step of kind `C` decided earlier in this pass, by id (`None` before it ran, or
    /// without one): a later step can, for example, put children only into the namespaces a set of Namespaces
    /// really owns, without reading them back from status.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::Namespace;
    /// # use kubewright::{ChildOutcome, Context};
    /// /// The namespaces this parent's Namespace set has in place (not refused, not terminating).
    /// fn owned_namespaces(cx: &Context) -> Vec<String> {
    ///     cx.child_outcomes::<Namespace>()
    ///         .into_iter()
    ///         .flatten()
    ///         .filter(|(_, o)| !o.is_terminating())
    ///         .filter_map(|(_, o)| o.child()?.metadata.name.clone())
    ///         .collect()
    /// }
    /// ```
    pub fn child_outcomes<C: Send + Sync + 'static>(
        &self,
    ) -> Option<&BTreeMap<String, ChildOutcome<C>>> {
        self.decided::<BTreeMap<String, ChildOutcome<C>>>()
    }
}

impl<P, C> ChildSetReconciler<P, C>
where
    P: HasStatus + Resource<DynamicType = ()> + Send + Sync + 'static,
    P::Status: Default,
    C: CachedKind + Serialize,
    C::Scope: 'static,
{
    /// Reports the outcome of each child by id into the parent's status (an empty status is created if there
    /// is none): [`reflect`](Self::reflect) for functions that only need the status.
    pub fn reflect_status(
        self,
        reflect: impl Fn(&mut P::Status, &BTreeMap<String, ChildOutcome<C>>) + Send + Sync + 'static,
    ) -> Self {
        self.reflect(
            move |parent: &mut P, outcomes: &BTreeMap<String, ChildOutcome<C>>| {
                reflect(
                    parent.status_mut().get_or_insert_with(Default::default),
                    outcomes,
                )
            },
        )
    }
}

impl<P, C> SubReconciler<P> for ChildSetReconciler<P, C>
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
