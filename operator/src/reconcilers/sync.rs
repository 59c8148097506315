//! A step that is a plain function of the parent and the context, with an optional finalize half.

use futures::future::{BoxFuture, FutureExt};

use super::{SubReconciler, Wiring, WiringFn};
use crate::context::Context;
use crate::error::Result;
use crate::outcome::Outcome;

type SyncFn<P> = Box<dyn Fn(&mut P, &mut Context) -> Result<Outcome> + Send + Sync>;

/// A step that runs a function: compute something, stash it, set a condition.
///
/// ```
/// use operator::{Context, Outcome, StashKey, SyncReconciler};
/// const GREETING: StashKey<String> = StashKey::new("greeting");
/// let step = SyncReconciler::<String>::new("greet", |name: &mut String, cx: &mut Context| {
///     cx.stash_mut().store(&GREETING, format!("hello {name}"));
///     Ok(Outcome::Continue)
/// });
/// # let _ = step;
/// ```
pub struct SyncReconciler<P> {
    name: String,
    sync: SyncFn<P>,
    finalize: Option<SyncFn<P>>,
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
        let out = (self.sync)(parent, cx);
        async move { out }.boxed()
    }

    fn finalize<'a>(
        &'a self,
        parent: &'a mut P,
        cx: &'a mut Context,
    ) -> BoxFuture<'a, Result<Outcome>> {
        let out = match &self.finalize {
            Some(f) => f(parent, cx),
            None => Ok(Outcome::Continue),
        };
        async move { out }.boxed()
    }

    fn wire(&self, wiring: &mut Wiring) {
        for w in &self.wiring {
            w(wiring);
        }
    }
}
