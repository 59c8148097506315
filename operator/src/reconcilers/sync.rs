//! A step that is a function of the parent and the context (plain or async), with an optional finalize half.

use futures::future::{BoxFuture, FutureExt};

use super::{SubReconciler, Wiring, WiringFn};
use crate::context::Context;
use crate::error::Result;
use crate::outcome::Outcome;

/// A step function as the runtime keeps it: one that may await.
type StepFn<P> =
    Box<dyn for<'a> Fn(&'a mut P, &'a mut Context) -> BoxFuture<'a, Result<Outcome>> + Send + Sync>;

/// A plain function as a [`StepFn`].
fn plain<P: Send + Sync>(
    f: impl Fn(&mut P, &mut Context) -> Result<Outcome> + Send + Sync + 'static,
) -> StepFn<P> {
    Box::new(move |parent: &mut P, cx: &mut Context| {
        let out = f(parent, cx);
        async move { out }.boxed()
    })
}

/// A step that runs a function: compute something, stash it, set a condition.
///
/// ```
/// use kubewright::{Context, Outcome, StashKey, SyncReconciler};
/// const GREETING: StashKey<String> = StashKey::new("greeting");
/// let step = SyncReconciler::<String>::new("greet", |name: &mut String, cx: &mut Context| {
///     cx.stash_mut().store(&GREETING, format!("hello {name}"));
///     Ok(Outcome::Continue)
/// });
/// # let _ = step;
/// ```
///
/// A step that awaits (an external system, a call through [`Context::client`]) is an `async fn`, boxed:
///
/// ```
/// use futures::FutureExt;
/// use kubewright::{Context, Outcome, SyncReconciler};
///
/// async fn check(name: &mut String, cx: &mut Context) -> kubewright::Result<Outcome> {
///     tokio::task::yield_now().await; // e.g. ask a database whether the user exists
///     Ok(Outcome::Continue)
/// }
///
/// let step = SyncReconciler::<String>::new_async("check", |name, cx| check(name, cx).boxed());
/// # let _ = step;
/// ```
pub struct SyncReconciler<P> {
    name: String,
    sync: StepFn<P>,
    finalize: Option<StepFn<P>>,
    wiring: Vec<WiringFn>,
}

impl<P> std::fmt::Debug for SyncReconciler<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SyncReconciler")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl<P: Send + Sync> SyncReconciler<P> {
    /// A step named `name` running `sync`.
    pub fn new(
        name: impl Into<String>,
        sync: impl Fn(&mut P, &mut Context) -> Result<Outcome> + Send + Sync + 'static,
    ) -> Self {
        Self {
            name: name.into(),
            sync: plain(sync),
            finalize: None,
            wiring: Vec::new(),
        }
    }

    /// A step named `name` running `sync`, which may await (see the type's documentation).
    pub fn new_async(
        name: impl Into<String>,
        sync: impl for<'a> Fn(&'a mut P, &'a mut Context) -> BoxFuture<'a, Result<Outcome>>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        Self {
            name: name.into(),
            sync: Box::new(sync),
            finalize: None,
            wiring: Vec::new(),
        }
    }

    /// Runs `finalize` while the parent is being deleted (under a [`WithFinalizer`](super::WithFinalizer)).
    pub fn finalize(
        mut self,
        finalize: impl Fn(&mut P, &mut Context) -> Result<Outcome> + Send + Sync + 'static,
    ) -> Self {
        self.finalize = Some(plain(finalize));
        self
    }

    /// Runs `finalize`, which may await, while the parent is being deleted (e.g. until an external resource
    /// is gone, returning [`Outcome::RequeueAfter`] while it is not).
    pub fn finalize_async(
        mut self,
        finalize: impl for<'a> Fn(&'a mut P, &'a mut Context) -> BoxFuture<'a, Result<Outcome>>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.finalize = Some(Box::new(finalize));
        self
    }

    /// Declares kinds the function reads through the context (e.g. `|w| w.tracks::<ConfigMap>()`).
    pub fn wiring(mut self, f: impl Fn(&mut Wiring) + Send + Sync + 'static) -> Self {
        self.wiring.push(Box::new(f));
        self
    }
}

impl<P: Send + Sync> SubReconciler<P> for SyncReconciler<P> {
    fn name(&self) -> &str {
        &self.name
    }

    fn reconcile<'a>(
        &'a self,
        parent: &'a mut P,
        cx: &'a mut Context,
    ) -> BoxFuture<'a, Result<Outcome>> {
        (self.sync)(parent, cx)
    }

    fn finalize<'a>(
        &'a self,
        parent: &'a mut P,
        cx: &'a mut Context,
    ) -> BoxFuture<'a, Result<Outcome>> {
        match &self.finalize {
            Some(f) => f(parent, cx),
            None => async { Ok(Outcome::Continue) }.boxed(),
        }
    }

    fn wire(&self, wiring: &mut Wiring) {
        for w in &self.wiring {
            w(wiring);
        }
    }
}
