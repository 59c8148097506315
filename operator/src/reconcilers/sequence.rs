//! Steps run in order.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;

use futures::future::{BoxFuture, FutureExt};

use super::{SubReconciler, Wiring};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::outcome::Outcome;

/// Runs steps in order; stops at the first error or `Halt`; the shortest requeue wins.
///
/// A step that reads a stash key no earlier step stored this pass fails with
/// [`Error::StashNotStored`], naming the key, the step and the steps of the sequence seen storing it.
pub struct Sequence<P> {
    name: String,
    steps: Vec<Box<dyn SubReconciler<P>>>,
    /// For each stash key, the steps (by position) seen storing it, learned as passes run.
    stored_by: Mutex<HashMap<&'static str, BTreeSet<usize>>>,
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
            stored_by: Mutex::default(),
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

    /// Learns which stash keys step `i` stored, and names the steps that store a key it found missing.
    fn learn(
        &self,
        i: usize,
        before: Vec<&'static str>,
        after: Vec<&'static str>,
        result: Result<Outcome>,
    ) -> Result<Outcome> {
        if after.iter().any(|k| !before.contains(k)) {
            let mut learned = self.stored_by.lock().unwrap_or_else(|e| e.into_inner());
            for k in after.iter().filter(|k| !before.contains(k)) {
                learned.entry(k).or_default().insert(i);
            }
        }
        match result {
            Err(Error::MissingStash(key)) => Err(self.not_stored(key, i)),
            other => other,
        }
    }

    fn not_stored(&self, key: &'static str, reader: usize) -> Error {
        let learned = self.stored_by.lock().unwrap_or_else(|e| e.into_inner());
        let name = |i: usize| format!("`{}`", self.steps[i].name());
        let stored_by = match learned.get(key) {
            Some(storers) if !storers.is_empty() => {
                let names: Vec<String> = storers.iter().map(|&i| name(i)).collect();
                if storers.iter().all(|&i| i > reader) {
                    format!(
                        "{} stores it, but runs after `{}`: put it before",
                        names.join(", "),
                        self.steps[reader].name()
                    )
                } else {
                    format!(
                        "{} stored it in earlier passes but not in this one (it returned early or did not store it)",
                        names.join(", ")
                    )
                }
            }
            _ => format!(
                "no step of `{}` has stored it (steps: {})",
                self.name,
                self.steps
                    .iter()
                    .map(|s| format!("`{}`", s.name()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        Error::StashNotStored {
            key,
            step: self.steps[reader].name().to_string(),
            stored_by,
        }
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
            for (i, step) in self.steps.iter().enumerate() {
                let before = cx.stash().keys();
                cx.entering(step.name());
                let result = step.reconcile(parent, cx).await;
                outcome = outcome.and(self.learn(i, before, cx.stash().keys(), result)?);
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
            for (i, step) in self.steps.iter().enumerate().rev() {
                let before = cx.stash().keys();
                cx.entering(step.name());
                let result = step.finalize(parent, cx).await;
                outcome = outcome.and(self.learn(i, before, cx.stash().keys(), result)?);
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
