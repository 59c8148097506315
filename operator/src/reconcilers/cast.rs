//! A step on a projection of the parent, with the projection's changes written back.

use futures::future::{BoxFuture, FutureExt};

use super::{SubReconciler, Wiring};
use crate::context::Context;
use crate::error::Result;
use crate::outcome::Outcome;

type Project<P, T> = Box<dyn Fn(&P) -> Result<T> + Send + Sync>;
type WriteBack<P, T> = Box<dyn Fn(&mut P, T) + Send + Sync>;

/// Runs a step written for type `T` on a projection of the parent `P` (a duck type, a sub-structure), then
/// writes the projection back (typically its status).
pub struct CastReconciler<P, T> {
    name: String,
    project: Project<P, T>,
    write_back: WriteBack<P, T>,
    step: Box<dyn SubReconciler<T>>,
}

impl<P: Send + Sync, T: Send + Sync> CastReconciler<P, T> {
    /// A cast step.
    pub fn new(
        name: impl Into<String>,
        project: impl Fn(&P) -> Result<T> + Send + Sync + 'static,
        write_back: impl Fn(&mut P, T) + Send + Sync + 'static,
        step: impl SubReconciler<T> + 'static,
    ) -> Self {
        Self {
            name: name.into(),
            project: Box::new(project),
            write_back: Box::new(write_back),
            step: Box::new(step),
        }
    }

    async fn run(&self, parent: &mut P, cx: &mut Context, finalize: bool) -> Result<Outcome> {
        let mut projected = (self.project)(parent)?;
        let out = if finalize {
            self.step.finalize(&mut projected, cx).await
        } else {
            self.step.reconcile(&mut projected, cx).await
        };
        // Changes made before an error are kept, as a direct step's would be.
        (self.write_back)(parent, projected);
        out
    }
}

impl<P: Send + Sync, T: Send + Sync> SubReconciler<P> for CastReconciler<P, T> {
    fn name(&self) -> &str {
        &self.name
    }

    fn reconcile<'a>(
        &'a self,
        parent: &'a mut P,
        cx: &'a mut Context,
    ) -> BoxFuture<'a, Result<Outcome>> {
        self.run(parent, cx, false).boxed()
    }

    fn finalize<'a>(
        &'a self,
        parent: &'a mut P,
        cx: &'a mut Context,
    ) -> BoxFuture<'a, Result<Outcome>> {
        self.run(parent, cx, true).boxed()
    }

    fn wire(&self, wiring: &mut Wiring) {
        self.step.wire(wiring);
    }
}
