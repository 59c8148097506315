//! Steps run in order.

use futures::future::{BoxFuture, FutureExt};

use super::{SubReconciler, Wiring};
use crate::context::Context;
use crate::error::Result;
use crate::outcome::Outcome;

/// Runs steps in order; stops at the first error or `Halt`; the shortest requeue wins.
pub struct Sequence<P> {
    name: String,
    steps: Vec<Box<dyn SubReconciler<P>>>,
}

impl<P> std::fmt::Debug for Sequence<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.steps.iter().map(|s| s.name()).collect();
        f.debug_struct("Sequence")
            .field("name", &self.name)
            .field("steps", &names)
            .finish()
    }
}

impl<P: Send + Sync> Sequence<P> {
    /// An empty sequence.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            steps: Vec::new(),
        }
    }

    /// Appends a step.
    pub fn step(mut self, step: impl SubReconciler<P> + 'static) -> Self {
        self.steps.push(Box::new(step));
        self
    }

    /// Appends a boxed step.
    pub fn push(&mut self, step: Box<dyn SubReconciler<P>>) {
        self.steps.push(step);
    }
}

impl<P: Send + Sync> SubReconciler<P> for Sequence<P> {
    fn name(&self) -> &str {
        &self.name
    }

    fn reconcile<'a>(
        &'a self,
        parent: &'a mut P,
        cx: &'a mut Context,
    ) -> BoxFuture<'a, Result<Outcome>> {
        async move {
            let mut outcome = Outcome::Continue;
            for step in &self.steps {
                outcome = outcome.and(step.reconcile(parent, cx).await?);
                if outcome.is_halt() {
                    break;
                }
            }
            Ok(outcome)
        }
        .boxed()
    }

    fn finalize<'a>(
        &'a self,
        parent: &'a mut P,
        cx: &'a mut Context,
    ) -> BoxFuture<'a, Result<Outcome>> {
        async move {
            // Clean up in reverse order of creation.
            let mut outcome = Outcome::Continue;
            for step in self.steps.iter().rev() {
                outcome = outcome.and(step.finalize(parent, cx).await?);
                if outcome.is_halt() {
                    break;
                }
            }
            Ok(outcome)
        }
        .boxed()
    }

    fn wire(&self, wiring: &mut Wiring) {
        for s in &self.steps {
            s.wire(wiring);
        }
    }
}
