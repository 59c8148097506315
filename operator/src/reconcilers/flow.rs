//! Control flow over steps: run one only when a condition holds; recover from a step's error.

use futures::future::{BoxFuture, FutureExt};

use super::{SubReconciler, Wiring};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::outcome::Outcome;

type Predicate<P> = Box<dyn Fn(&P, &Context) -> bool + Send + Sync>;

/// Runs `then` when the predicate holds, `otherwise` (if any) when it does not.
pub struct IfThen<P> {
    name: String,
    predicate: Predicate<P>,
    then: Box<dyn SubReconciler<P>>,
    otherwise: Option<Box<dyn SubReconciler<P>>>,
}

impl<P: Send + Sync> IfThen<P> {
    /// A conditional step.
    pub fn new(
        name: impl Into<String>,
        predicate: impl Fn(&P, &Context) -> bool + Send + Sync + 'static,
        then: impl SubReconciler<P> + 'static,
    ) -> Self {
        Self {
            name: name.into(),
            predicate: Box::new(predicate),
            then: Box::new(then),
            otherwise: None,
        }
    }

    /// The step to run when the predicate does not hold.
    pub fn otherwise(mut self, step: impl SubReconciler<P> + 'static) -> Self {
        self.otherwise = Some(Box::new(step));
        self
    }
}

impl<P: Send + Sync> SubReconciler<P> for IfThen<P> {
    fn name(&self) -> &str {
        &self.name
    }

    fn reconcile<'a>(
        &'a self,
        parent: &'a mut P,
        cx: &'a mut Context,
    ) -> BoxFuture<'a, Result<Outcome>> {
        async move {
            if (self.predicate)(parent, cx) {
                self.then.reconcile(parent, cx).await
            } else if let Some(o) = &self.otherwise {
                o.reconcile(parent, cx).await
            } else {
                Ok(Outcome::Continue)
            }
        }
        .boxed()
    }

    fn finalize<'a>(
        &'a self,
        parent: &'a mut P,
        cx: &'a mut Context,
    ) -> BoxFuture<'a, Result<Outcome>> {
        async move {
            // Both branches may have left something behind.
            let a = self.then.finalize(parent, cx).await?;
            match &self.otherwise {
                Some(o) => Ok(a.and(o.finalize(parent, cx).await?)),
                None => Ok(a),
            }
        }
        .boxed()
    }

    fn wire(&self, wiring: &mut Wiring) {
        self.then.wire(wiring);
        if let Some(o) = &self.otherwise {
            o.wire(wiring);
        }
    }
}

type Catch<P> = Box<dyn Fn(&mut P, &mut Context, Error) -> Result<Outcome> + Send + Sync>;

/// Runs a step and hands its error to `catch`, which may recover (return an outcome) or rethrow.
pub struct TryCatch<P> {
    name: String,
    step: Box<dyn SubReconciler<P>>,
    catch: Catch<P>,
}

impl<P: Send + Sync> TryCatch<P> {
    /// A step whose errors go to `catch`.
    pub fn new(
        name: impl Into<String>,
        step: impl SubReconciler<P> + 'static,
        catch: impl Fn(&mut P, &mut Context, Error) -> Result<Outcome> + Send + Sync + 'static,
    ) -> Self {
        Self {
            name: name.into(),
            step: Box::new(step),
            catch: Box::new(catch),
        }
    }
}

impl<P: Send + Sync> SubReconciler<P> for TryCatch<P> {
    fn name(&self) -> &str {
        &self.name
    }

    fn reconcile<'a>(
        &'a self,
        parent: &'a mut P,
        cx: &'a mut Context,
    ) -> BoxFuture<'a, Result<Outcome>> {
        async move {
            match self.step.reconcile(parent, cx).await {
                // One-action mode's yield is not an error to catch.
                Err(Error::Yield) => Err(Error::Yield),
                Err(e) => (self.catch)(parent, cx, e),
                ok => ok,
            }
        }
        .boxed()
    }

    fn finalize<'a>(
        &'a self,
        parent: &'a mut P,
        cx: &'a mut Context,
    ) -> BoxFuture<'a, Result<Outcome>> {
        async move {
            match self.step.finalize(parent, cx).await {
                Err(Error::Yield) => Err(Error::Yield),
                Err(e) => (self.catch)(parent, cx, e),
                ok => ok,
            }
        }
        .boxed()
    }

    fn wire(&self, wiring: &mut Wiring) {
        self.step.wire(wiring);
    }
}
