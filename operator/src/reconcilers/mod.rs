//! The reconciler tree: a root per kind ([`Reconciler`](struct@crate::Reconciler)) over composable steps.
//!
//! Every step implements [`SubReconciler`]. The runtime provides [`SyncReconciler`] (a function, with an
//! optional finalize half), [`ChildReconciler`] (one child), [`ChildSetReconciler`] (children keyed by an id),
//! [`CastReconciler`] (a step on a projection of the parent), [`Sequence`], [`WithFinalizer`], [`IfThen`] and
//! [`TryCatch`].
//!
//! # Echoes
//!
//! A pass's writes come back as watch events. Such an event queues no pass (it is an *echo*) only when the
//! runtime can show that the pass which made the write already reflected it in the status it computed:
//!
//! - the write of a child step ([`ChildReconciler`], [`ChildSetReconciler`]), whose outcome, taken from the
//!   API's answer, is what the step's condition and reflections see, unless the author's code read objects of
//!   that kind in the same pass ([`Context::get`](crate::Context::get), [`list`](crate::Context::list),
//!   [`cache`](crate::Context::cache), [`read`](crate::Context::read) and the references that use them), before
//!   or after the write: a status computed from a cache that did not show the write yet would be stale;
//! - the write of the parent's status, and a finalizer added to or removed from the parent.
//!
//! Every other write queues the next pass when its event comes, as in controller-runtime: one made with
//! [`Context::execute`](crate::Context::execute) (a `#[sync]` or `#[finalize]` step, the owned writes), and
//! the writes of a child step of a kind the author read. Such a pass costs a pass; a status left stale until
//! the next unrelated change would cost the truth. An echo is told by the object's exact `uid` and
//! `resourceVersion` in the API's answer, and only for the parent whose pass wrote it; the same event for any
//! other parent (a tracker's, a mapper's) queues it as usual.

mod announce;
mod applied;
mod cast;
mod child;
mod child_outcome;
mod child_set;
mod compare;
mod created;
pub mod fights;
mod finalizer;
mod flow;
mod owned;
mod ownership;
mod retention;
mod sequence;
mod sync;
pub(crate) mod written;

pub use cast::CastReconciler;
pub(crate) use child::is_cluster_scoped;
#[cfg(feature = "testing")]
pub(crate) use child::prepare_child;
pub use child::{ChildReconciler, WriteStrategy};
pub use child_outcome::ChildOutcome;
pub use child_set::{ChildSetReconciler, SetStrategy};
pub use compare::{DESIRED_HASH, desired_hash};
pub use finalizer::WithFinalizer;
pub use flow::{IfThen, TryCatch};
pub use retention::Retention;
pub use sequence::Sequence;
pub use sync::SyncReconciler;

use futures::StreamExt;
use futures::future::{BoxFuture, FutureExt};
use futures::stream::BoxStream;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::cache::{CachedKind, Caches, Change};
use crate::context::Context;
use crate::error::Result;
use crate::outcome::Outcome;

/// One step of a reconcile pass over a parent of type `P`.
pub trait SubReconciler<P>: Send + Sync {
    /// A name for logs.
    fn name(&self) -> &str;

    /// Moves the world towards the parent's desired state.
    fn reconcile<'a>(
        &'a self,
        parent: &'a mut P,
        cx: &'a mut Context,
    ) -> BoxFuture<'a, Result<Outcome>>;

    /// Cleans up while the parent is being deleted (only runs under a [`WithFinalizer`]).
    fn finalize<'a>(
        &'a self,
        _parent: &'a mut P,
        _cx: &'a mut Context,
    ) -> BoxFuture<'a, Result<Outcome>> {
        async { Ok(Outcome::Continue) }.boxed()
    }

    /// Declares the kinds this step reads or writes, so the controller caches and watches them.
    fn wire(&self, _wiring: &mut Wiring) {}
}

impl<P, S: SubReconciler<P> + ?Sized> SubReconciler<P> for Box<S> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn reconcile<'a>(
        &'a self,
        parent: &'a mut P,
        cx: &'a mut Context,
    ) -> BoxFuture<'a, Result<Outcome>> {
        (**self).reconcile(parent, cx)
    }
    fn finalize<'a>(
        &'a self,
        parent: &'a mut P,
        cx: &'a mut Context,
    ) -> BoxFuture<'a, Result<Outcome>> {
        (**self).finalize(parent, cx)
    }
    fn wire(&self, wiring: &mut Wiring) {
        (**self).wire(wiring)
    }
}

/// A change to some object that may concern parents: through their owner references, or a tracker.
#[derive(Debug, Clone)]
pub enum Changed {
    /// An object changed or went away.
    Object {
        /// Its `apiVersion`.
        api_version: String,
        /// Its kind.
        kind: String,
        /// Its metadata.
        meta: Box<ObjectMeta>,
    },
    /// Changes were missed; every parent should be reconciled.
    Lagged,
}

/// How a wired kind relates to the parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Children the parent controls: written by the runtime.
    Owned,
    /// Objects read through the context and tracked.
    Tracked,
    /// Objects mapped to parents by an author's function.
    Watched,
}

/// A function declaring kinds into a [`Wiring`].
pub(crate) type WiringFn = Box<dyn Fn(&mut Wiring) + Send + Sync>;

/// The changes of one wired kind, as a stream started on the shared caches.
pub(crate) type ChangesFn = Box<dyn Fn(&Caches) -> BoxStream<'static, Changed> + Send + Sync>;

/// A kind wired into a controller.
pub struct WiredKind {
    /// API group.
    pub group: String,
    /// `apiVersion`.
    pub api_version: String,
    /// Kind.
    pub kind: String,
    /// Plural resource name.
    pub plural: String,
    /// How it relates to the parent.
    pub role: Role,
    /// Whether it lives in namespaces (a Role can grant access to it) or is cluster-scoped.
    pub namespaced: bool,
    pub(crate) changes: ChangesFn,
    ensure: fn(&Caches),
    /// The Rust type it was declared with.
    type_id: std::any::TypeId,
    type_name: &'static str,
}

impl WiredKind {
    /// Creates the kind's cache in `caches` (not started) if it is not there yet.
    pub fn ensure(&self, caches: &Caches) {
        (self.ensure)(caches)
    }

    /// The kind as kube's [`ApiResource`](kube::api::ApiResource).
    pub fn api_resource(&self) -> kube::api::ApiResource {
        let version = self
            .api_version
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_string();
        kube::api::ApiResource {
            group: self.group.clone(),
            version,
            api_version: self.api_version.clone(),
            kind: self.kind.clone(),
            plural: self.plural.clone(),
        }
    }
}

impl std::fmt::Debug for WiredKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WiredKind")
            .field("api_version", &self.api_version)
            .field("kind", &self.kind)
            .field("role", &self.role)
            .finish()
    }
}

/// The kinds a reconciler tree reads and writes, and the finalizers it manages, collected from its steps.
#[derive(Debug, Default)]
pub struct Wiring {
    kinds: Vec<WiredKind>,
    finalizers: Vec<String>,
    twice: Vec<KindDeclaredTwice>,
}

/// A kind declared in one reconciler through two Rust types: two [`kind!`](crate::kind) declarations of one
/// group, version and kind, or an untyped and a typed one. The runtime caches and wires a kind under the first
/// type declared, so the second would have no cache: every read of it would fail and its changes would
/// trigger nothing (an operator that retried such a pass forever never settled). An operator refuses it at
/// start ([`RunError::KindDeclaredTwice`](crate::RunError::KindDeclaredTwice)); so do a table test's environment
/// when it starts its caches and an exploration before its first run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{kind} ({api_version}) is declared twice in one reconciler, as `{first}` and as `{second}`: the runtime caches a kind under one Rust type, so `{second}` would have no cache; declare the kind once and use that type everywhere"
)]
pub struct KindDeclaredTwice {
    /// The kind.
    pub kind: String,
    /// Its `apiVersion`.
    pub api_version: String,
    /// The type declared first.
    pub first: String,
    /// The other type.
    pub second: String,
}

impl Wiring {
    /// Declares a finalizer the tree adds to parents and removes after cleanup.
    pub fn finalizer(&mut self, name: &str) {
        if !self.finalizers.iter().any(|f| f == name) {
            self.finalizers.push(name.to_string());
        }
    }

    /// The finalizers the tree manages.
    pub fn finalizers(&self) -> &[String] {
        &self.finalizers
    }

    /// Declares children of kind `C` that the parent controls.
    pub fn owns<C: CachedKind>(&mut self) {
        self.add::<C>(Role::Owned);
    }

    /// Declares a kind read through the context and tracked.
    pub fn tracks<K: CachedKind>(&mut self) {
        self.add::<K>(Role::Tracked);
    }

    /// Declares a kind mapped to parents by an author's function.
    pub fn watches<K: CachedKind>(&mut self) {
        self.add::<K>(Role::Watched);
    }

    fn add<K: CachedKind>(&mut self, role: Role) {
        let kind = K::kind(&()).into_owned();
        let api_version = K::api_version(&()).into_owned();
        if let Some(existing) = self
            .kinds
            .iter_mut()
            .find(|k| k.kind == kind && k.api_version == api_version)
        {
            // Owning implies the strongest needs; keep the strongest role.
            if role == Role::Owned {
                existing.role = Role::Owned;
            }
            if existing.type_id != std::any::TypeId::of::<K>() {
                let twice = KindDeclaredTwice {
                    kind,
                    api_version,
                    first: existing.type_name.to_string(),
                    second: std::any::type_name::<K>().to_string(),
                };
                if !self.twice.contains(&twice) {
                    self.twice.push(twice);
                }
            }
            return;
        }
        self.kinds.push(WiredKind {
            group: K::group(&()).into_owned(),
            api_version,
            kind,
            plural: K::plural(&()).into_owned(),
            role,
            namespaced: crate::cache::is_namespaced::<K>(),
            changes: Box::new(|caches: &Caches| changes_of::<K>(caches)),
            ensure: |caches: &Caches| {
                caches.ensure::<K>();
            },
            type_id: std::any::TypeId::of::<K>(),
            type_name: std::any::type_name::<K>(),
        });
    }

    /// The kinds declared through two Rust types (see [`KindDeclaredTwice`]).
    pub fn declared_twice(&self) -> &[KindDeclaredTwice] {
        &self.twice
    }

    /// The kinds wired so far.
    pub fn kinds(&self) -> &[WiredKind] {
        &self.kinds
    }
}

/// The changes of a cached kind as erased [`Changed`] values.
pub fn changes_of<K: CachedKind>(caches: &Caches) -> BoxStream<'static, Changed> {
    let rx = caches.ensure::<K>().changes();
    futures::stream::unfold(rx, |mut rx| async move {
        use crate::cache::RecvError;
        match rx.recv().await {
            Ok(change) => {
                let obj = change.object();
                let changed = Changed::Object {
                    api_version: K::api_version(&()).into_owned(),
                    kind: K::kind(&()).into_owned(),
                    meta: Box::new(obj.meta().clone()),
                };
                Some((changed, rx))
            }
            Err(RecvError::Lagged(n)) => {
                tracing::warn!(kind = %K::kind(&()), missed = n, "trigger stream lagged; reconciling everything");
                Some((Changed::Lagged, rx))
            }
            Err(RecvError::Closed) => None,
        }
    })
    .boxed()
}

/// Typed changes of a cached kind.
pub fn typed_changes<K: CachedKind>(caches: &Caches) -> BoxStream<'static, Option<Change<K>>> {
    let rx = caches.ensure::<K>().changes();
    futures::stream::unfold(rx, |mut rx| async move {
        use crate::cache::RecvError;
        match rx.recv().await {
            Ok(change) => Some((Some(change), rx)),
            Err(RecvError::Lagged(_)) => Some((None, rx)),
            Err(RecvError::Closed) => None,
        }
    })
    .boxed()
}
