//! A finalizer around steps: cleanup runs exactly once per deletion, then the finalizer goes.

use std::collections::VecDeque;
use std::sync::Mutex;

use futures::future::{BoxFuture, FutureExt};
use kube::{Resource, ResourceExt};
use serde_json::json;

use super::{SubReconciler, Wiring};
use crate::command::{Command, Target};
use crate::context::Context;
use crate::error::Result;
use crate::outcome::Outcome;

/// Adds `finalizer` to the parent before running `step`; when the parent is deleted, runs the step's
/// finalize half and removes the finalizer once it returns `Continue`.
///
/// Cleanup runs once per deletion even when the cache lags: the uids of parents whose finalizer this step
/// removed are remembered, and a pass over a stale copy that still shows the finalizer does nothing.
pub struct WithFinalizer<P> {
    finalizer: String,
    step: Box<dyn SubReconciler<P>>,
    finalized: Mutex<VecDeque<String>>,
}

/// How many finalized uids are remembered (a uid is never reused, so forgetting old ones only matters if a
/// cache lags behind by this many deletions).
const REMEMBERED: usize = 4096;

impl<P> WithFinalizer<P> {
    /// Guards `step` with `finalizer` (e.g. `example.dev/cleanup`).
    pub fn new(finalizer: impl Into<String>, step: impl SubReconciler<P> + 'static) -> Self {
        Self {
            finalizer: finalizer.into(),
            step: Box::new(step),
            finalized: Mutex::new(VecDeque::new()),
        }
    }

    fn already_finalized(&self, uid: &str) -> bool {
        self.finalized
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .any(|u| u == uid)
    }

    fn remember(&self, uid: String) {
        let mut done = self.finalized.lock().unwrap_or_else(|e| e.into_inner());
        done.push_back(uid);
        while done.len() > REMEMBERED {
            done.pop_front();
        }
    }
}

fn finalizer_patch<P: Resource>(parent: &P, finalizers: Vec<String>) -> serde_json::Value {
    // The resourceVersion makes a concurrent change fail with 409 instead of being overwritten.
    json!({ "metadata": { "finalizers": finalizers, "resourceVersion": parent.resource_version() } })
}

impl<P: Resource<DynamicType = ()> + Send + Sync> SubReconciler<P> for WithFinalizer<P> {
    fn name(&self) -> &str {
        &self.finalizer
    }

    fn reconcile<'a>(
        &'a self,
        parent: &'a mut P,
        cx: &'a mut Context,
    ) -> BoxFuture<'a, Result<Outcome>> {
        async move {
            if parent.meta().deletion_timestamp.is_some() {
                return self.finalize(parent, cx).await;
            }
            if !parent.finalizers().iter().any(|f| f == &self.finalizer) {
                let mut fins = parent.finalizers().to_vec();
                fins.push(self.finalizer.clone());
                let patch = finalizer_patch(parent, fins.clone());
                if let Some(out) = cx
                    .execute_reflected(Command::Patch {
                        target: Target::of(parent),
                        patch,
                    })
                    .await?
                    && let Some(rv) = out.resource_version()
                {
                    parent.meta_mut().resource_version = Some(rv);
                }
                parent.meta_mut().finalizers = Some(fins);
            }
            self.step.reconcile(parent, cx).await
        }
        .boxed()
    }

    fn finalize<'a>(
        &'a self,
        parent: &'a mut P,
        cx: &'a mut Context,
    ) -> BoxFuture<'a, Result<Outcome>> {
        async move {
            if !parent.finalizers().iter().any(|f| f == &self.finalizer) {
                return Ok(Outcome::Continue);
            }
            let uid = parent.uid().unwrap_or_default();
            if self.already_finalized(&uid) {
                // A stale copy from a lagging cache: the cleanup already ran and the finalizer is gone.
                return Ok(Outcome::Halt);
            }
            let outcome = self.step.finalize(parent, cx).await?;
            if outcome != Outcome::Continue {
                return Ok(outcome);
            }
            let fins: Vec<String> = parent
                .finalizers()
                .iter()
                .filter(|f| *f != &self.finalizer)
                .cloned()
                .collect();
            let patch = finalizer_patch(parent, fins.clone());
            cx.execute_reflected(Command::Patch {
                target: Target::of(parent),
                patch,
            })
            .await?;
            self.remember(uid);
            parent.meta_mut().finalizers = Some(fins);
            Ok(Outcome::Halt)
        }
        .boxed()
    }

    fn wire(&self, wiring: &mut Wiring) {
        wiring.finalizer(&self.finalizer);
        self.step.wire(wiring);
    }
}
