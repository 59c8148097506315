//! Children written from any step: [`Context::create_owned`], [`Context::apply_owned`] and
//! [`Context::delete_owned`] give a `#[sync]` or `#[finalize]` step's writes what a child step gives its own.
//!
//! Each binds the child to the pass's parent as a child step does (its namespace, the controller owner
//! reference with `blockOwnerDeletion`, the [`OWNER_LABEL`](crate::OWNER_LABEL) that
//! [`CacheOptions::owned`](crate::CacheOptions::owned) selects by), records the same event on the parent
//! (`Created`, `Updated`, `Deleted`, naming the child), keeps the same memory of children written that the
//! cache does not show yet (so a pass on a lagging cache neither announces a child twice nor deletes it
//! twice), and never writes an object someone else controls. Every write goes through
//! [`Context::execute`], so table tests see it as a command and one write per pass counts it. The kind must
//! be one the controller caches (`#[owns(Job)]`, [`Reconciler::owns`](crate::Reconciler::owns)) for the
//! child to be found in the cache; without a cache, each call writes (or reads) the API server.

use kube::{Resource, ResourceExt};

use super::ChildOutcome;
use super::announce::{Mutation, announce, describe};
use super::applied::applied_text;
use super::child::{controlled_by, is_terminating};
use super::compare::{contains, stamp_desired_hash};
use super::created::{
    adopt_created_fields, apply_child, created_once, creates_by_post, post_child,
};
use super::ownership::{Owner, bind};
use super::written::shown_by;
use crate::cache::CachedKind;
use crate::command::{Command, Target, display_name};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::tracker::TrackKey;

/// Who controls `obj`, as `Kind/name`.
fn controller_of<K: Resource>(obj: &K) -> Option<String> {
    obj.owner_references()
        .iter()
        .find(|r| r.controller == Some(true))
        .map(|r| format!("{}/{}", r.kind, r.name))
}

impl Context {
    /// The uid of the pass's parent.
    fn parent_uid(&self) -> Result<String> {
        self.parent().uid.clone().ok_or_else(|| {
            Error::custom(format!(
                "{} has no uid yet",
                self.parent().name.as_deref().unwrap_or_default()
            ))
        })
    }

    /// The child `namespace/name` as the cache of `C` shows it (none without a cache of `C`).
    fn cached_child<C: CachedKind>(&self, namespace: Option<&str>, name: &str) -> Option<C> {
        let cache = self.step_cache::<C>().ok()?;
        cache.get(namespace, name).map(|c| c.as_ref().clone())
    }

    /// What a live object of the child's name is to this parent: `Err(outcome)` when it is not a child to
    /// write (someone else's, tracked so the parent comes back when it goes; or being deleted).
    fn writable<C: CachedKind>(&mut self, live: C, uid: &str) -> Result<C, ChildOutcome<C>> {
        if !controlled_by(&live, uid) {
            self.track(TrackKey::name::<C>(
                live.namespace().as_deref(),
                &live.name_any(),
            ));
            let controller = controller_of(&live);
            tracing::warn!(child = %describe(&live), ?controller, "not controlled by this parent; left alone");
            return Err(ChildOutcome::Conflict {
                name: live.name_any(),
                controller,
            });
        }
        if is_terminating(&live) {
            return Err(ChildOutcome::Terminating(live));
        }
        Ok(live)
    }

    /// Creates `child` as a child of the pass's parent, once: a child step created once
    /// ([`WriteStrategy::CreateOnly`](crate::WriteStrategy::CreateOnly)) as a call. The child is bound to the
    /// parent (namespace, controller owner reference, owner label) and created with a `POST`, with a `Created`
    /// event on the parent: [`ChildOutcome::Created`] with the child as stored. A child of that name that the
    /// cache holds or the `POST` finds is not written again: [`ChildOutcome::Unchanged`] (its owner label put
    /// back if it lacks it: [`ChildOutcome::Updated`]), [`ChildOutcome::Terminating`] while it is being
    /// deleted, or [`ChildOutcome::Conflict`] when someone else controls it. A child with only a
    /// `generateName` is always created.
    ///
    /// ```
    /// use k8s_openapi::api::batch::v1::Job;
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube::ResourceExt;
    /// use kubewright::{ChildOutcome, Context, Outcome};
    ///
    /// /// A `#[sync]` step that starts the run its parent asks for.
    /// async fn start_run(parent: &mut ConfigMap, cx: &mut Context) -> kubewright::Result<Outcome> {
    ///     let mut job = Job::default();
    ///     job.metadata.name = Some(format!("{}-run", parent.name_any()));
    ///     match cx.create_owned(job).await? {
    ///         ChildOutcome::Created(job) => tracing::info!(job = %job.name_any(), "started"),
    ///         ChildOutcome::Conflict { name, .. } => tracing::warn!(%name, "someone else's Job"),
    ///         _ => {} // already started
    ///     }
    ///     Ok(Outcome::Continue)
    /// }
    /// ```
    pub async fn create_owned<C>(&mut self, child: C) -> Result<ChildOutcome<C>>
    where
        C: CachedKind,
        C::Scope: 'static,
    {
        let was = self.set_unreflected(true);
        let out = self.create_owned_unreflected(child).await;
        self.set_unreflected(was);
        out
    }

    async fn create_owned_unreflected<C>(&mut self, mut child: C) -> Result<ChildOutcome<C>>
    where
        C: CachedKind,
        C::Scope: 'static,
    {
        let uid = self.parent_uid()?;
        bind(
            &Owner::of_reference(self.parent(), self.shard()),
            &mut child,
        )?;
        let namespace = child.namespace();
        let name = child.meta().name.clone().filter(|n| !n.is_empty());
        let mut live = name
            .as_deref()
            .and_then(|n| self.cached_child::<C>(namespace.as_deref(), n));
        if live.is_none() {
            let manager = self.settings().field_manager.clone();
            match post_child(self, &child, Some(manager)).await {
                Ok(created) => {
                    announce(self, Mutation::Created, &created, &describe(&created), None).await;
                    return Ok(ChildOutcome::Created(created));
                }
                Err(e) if e.is_already_exists() => {
                    let found = match &name {
                        Some(n) => self.step_read::<C>(namespace.as_deref(), n).await?,
                        None => None,
                    };
                    // Gone between the `POST` and the read: the `409` is the answer.
                    live = Some(found.ok_or(e)?);
                }
                Err(e) => return Err(e),
            }
        }
        let Some(live) = live else {
            return Err(Error::custom(format!(
                "{} {} has no name",
                C::kind(&()),
                display_name(&child)
            )));
        };
        match self.writable(live, &uid) {
            Ok(live) => created_once(self, &live, &uid).await,
            Err(outcome) => Ok(outcome),
        }
    }

    /// Keeps `child` a child of the pass's parent equal to this desired form, as a child step does
    /// ([`WriteStrategy::Apply`](crate::WriteStrategy::Apply), forced, under the controller's field manager):
    /// bound to the parent and stamped with the desired-state hash; created with a `POST` when the cache does
    /// not hold it ([`ChildOutcome::Created`]); left alone when the cached child already has every field the
    /// desired form sets ([`ChildOutcome::Unchanged`], nothing written), else applied
    /// ([`ChildOutcome::Updated`]). The events are the child step's (`Created`, `Updated`); someone else's
    /// object of that name is never written ([`ChildOutcome::Conflict`]), nor a child being deleted
    /// ([`ChildOutcome::Terminating`]). The child needs a name.
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube::ResourceExt;
    /// use kubewright::{Context, Outcome, object};
    ///
    /// /// A `#[sync]` step that publishes a summary of its parent only while the parent asks for one.
    /// async fn publish(parent: &mut ConfigMap, cx: &mut Context) -> kubewright::Result<Outcome> {
    ///     let name = format!("{}-summary", parent.name_any());
    ///     let keys = parent.data.as_ref().map_or(0, |d| d.len()).to_string();
    ///     cx.apply_owned(object!(ConfigMap { metadata: { name: name }, data: { "keys": keys } })).await?;
    ///     Ok(Outcome::Continue)
    /// }
    /// ```
    pub async fn apply_owned<C>(&mut self, child: C) -> Result<ChildOutcome<C>>
    where
        C: CachedKind,
        C::Scope: 'static,
    {
        let was = self.set_unreflected(true);
        let out = self.apply_owned_unreflected(child).await;
        self.set_unreflected(was);
        out
    }

    async fn apply_owned_unreflected<C>(&mut self, mut child: C) -> Result<ChildOutcome<C>>
    where
        C: CachedKind,
        C::Scope: 'static,
    {
        let uid = self.parent_uid()?;
        stamp_desired_hash(&mut child)?;
        bind(
            &Owner::of_reference(self.parent(), self.shard()),
            &mut child,
        )?;
        let namespace = child.namespace();
        let Some(name) = child.meta().name.clone().filter(|n| !n.is_empty()) else {
            return Err(Error::custom(format!(
                "the {} to apply has no name",
                C::kind(&())
            )));
        };
        let manager = self.settings().field_manager.clone();
        let mut live = self.cached_child::<C>(namespace.as_deref(), &name);
        if live.is_none() {
            if creates_by_post(true, self) {
                match post_child(self, &child, Some(manager.clone())).await {
                    Ok(created) => {
                        announce(self, Mutation::Created, &created, &describe(&created), None)
                            .await;
                        return Ok(ChildOutcome::Created(created));
                    }
                    Err(e) if e.is_already_exists() => {}
                    Err(e) => return Err(e),
                }
            }
            live = self.step_read::<C>(namespace.as_deref(), &name).await?;
        }
        let live = match live.map(|l| self.writable(l, &uid)).transpose() {
            Ok(live) => live,
            Err(outcome) => return Ok(outcome),
        };
        if let Some(l) = &live
            && contains(&crate::json::convert(l)?, &crate::json::convert(&child)?)
        {
            self.written().seen(l);
            return Ok(ChildOutcome::Unchanged(l.clone()));
        }
        let object = applied_text(&child)?;
        let target = Target::of(&child);
        let out = apply_child(self, &target, &object, &manager, true).await?;
        let version = live
            .as_ref()
            .map(|l| l.meta().resource_version.clone().unwrap_or_default());
        let out = match &version {
            Some(_) => adopt_created_fields(self, out, &target, &object, &manager, true).await?,
            None => out,
        };
        let cache = self.step_cache::<C>().ok();
        let mutation = self
            .written()
            .applied(version.as_deref(), out.as_ref(), |uid| {
                cache
                    .as_ref()
                    .and_then(|c| shown_by(c, namespace.as_deref(), &name)(uid))
            });
        let stored: C = match out {
            Some(answer) => crate::unmanaged::from_str(answer.json())?,
            None => child,
        };
        Ok(match mutation {
            None => ChildOutcome::Unchanged(stored),
            Some(mutation) => {
                announce(self, mutation, &stored, &describe(&stored), None).await;
                match mutation {
                    Mutation::Created => ChildOutcome::Created(stored),
                    _ => ChildOutcome::Updated(stored),
                }
            }
        })
    }

    /// Deletes `child`, a child of the pass's parent (as the cache or an earlier call showed it), as a child
    /// step deletes one it no longer wants: only while it still has the uid it has here, with a `Deleted`
    /// event on the parent. `Ok(false)` when nothing was sent: the child is being deleted already, or an
    /// earlier pass deleted it and the cache has not shown that yet. An object the parent does not control is
    /// refused ([`Error::Ownership`]).
    ///
    /// ```
    /// use k8s_openapi::api::batch::v1::Job;
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube::ResourceExt;
    /// use kubewright::{Context, Outcome};
    /// use std::time::Duration;
    ///
    /// /// A `#[finalize]` step that deletes the parent's Jobs before it goes, and waits until they are gone.
    /// async fn stop_runs(parent: &mut ConfigMap, cx: &mut Context) -> kubewright::Result<Outcome> {
    ///     let uid = parent.uid().unwrap_or_default();
    ///     let jobs = cx.cache::<Job>()?.owned_by(&uid);
    ///     for job in &jobs {
    ///         cx.delete_owned(job.as_ref()).await?;
    ///     }
    ///     Ok(if jobs.is_empty() { Outcome::Continue } else { Outcome::RequeueAfter(Duration::from_secs(5)) })
    /// }
    /// ```
    pub async fn delete_owned<C>(&mut self, child: &C) -> Result<bool>
    where
        C: CachedKind,
    {
        let was = self.set_unreflected(true);
        let out = self.delete_owned_unreflected(child).await;
        self.set_unreflected(was);
        out
    }

    async fn delete_owned_unreflected<C>(&mut self, child: &C) -> Result<bool>
    where
        C: CachedKind,
    {
        let uid = self.parent_uid()?;
        if !controlled_by(child, &uid) {
            return Err(Error::Ownership {
                child: describe(child),
                reason: format!(
                    "it is not controlled by {} {}, so it is not deleted",
                    self.parent().kind.as_deref().unwrap_or_default(),
                    self.parent().name.as_deref().unwrap_or_default()
                ),
            });
        }
        if is_terminating(child) || self.written().delete_pending(child) {
            return Ok(false);
        }
        self.execute(Command::Delete {
            target: Target::of(child),
            uid: child.uid(),
        })
        .await?;
        self.written().deleted(child);
        announce(self, Mutation::Deleted, child, &describe(child), None).await;
        Ok(true)
    }
}
