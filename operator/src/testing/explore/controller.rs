//! The controllers of the explored operator behind trait objects, so that one run drives several controllers
//! of different parent kinds on one set of caches, as one operator process does.

use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::api::ApiResource;
use kube::runtime::reflector::ObjectRef;

use super::perturb::Probe;
use super::triggers::{Parent, Triggers};
use crate::cache::Caches;
use crate::command::Dispatcher;
use crate::error::Error;
use crate::outcome::Outcome;
use crate::reconciler::{ParentKind, Reconciler};
use crate::reconcilers::KindDeclaredTwice;
use crate::testing::ApiServer;

/// How a pass ended, for the rounds.
pub(super) enum PassEnd {
    /// Nothing more to do until something changes.
    Done,
    /// Asked to be requeued after this long: due once the run's clock comes to it.
    After(std::time::Duration),
    /// Failed; due again next round (a retry).
    Failed(String),
}

/// What an exploration knows of one controller before any run: how to make it.
pub(super) trait ControllerSetup: Send + Sync {
    /// The controller as a new process makes it: a new reconciler from the factory, on the server's clock.
    fn make(&self, server: &ApiServer) -> Box<dyn Driven>;
    /// The parent kind.
    fn parent(&self) -> ApiResource;
    /// The kinds the reconciler wires.
    fn kinds(&self) -> Vec<ApiResource>;
    /// The kinds the reconciler declares through two Rust types (refused before any run).
    fn declared_twice(&self) -> Vec<KindDeclaredTwice>;
}

/// One controller in a run.
pub(super) trait Driven: Send {
    /// The controller's name (its field manager and event reporter).
    fn name(&self) -> String;
    /// Creates the caches it needs (not started) and subscribes its triggers to them.
    fn wire(&mut self, caches: &Caches);
    /// Takes in the changes its triggers have seen.
    fn drain(&mut self, caches: &Caches);
    /// The parents due now, in name order.
    fn take(&mut self) -> Vec<Parent>;
    /// Every parent in the cache, in name order.
    fn every(&self, caches: &Caches) -> Vec<Parent>;
    /// Makes a parent due again.
    fn again(&mut self, parent: Parent);
    /// A triggered pass over `parent` starts: the timer its last pass set is gone.
    fn passing(&mut self, parent: &Parent);
    /// Makes `parent` due at `at` (the earlier of two timers wins).
    fn requeue(&mut self, parent: Parent, at: Timestamp);
    /// Makes due the parents whose timers have come by `now`.
    fn fire(&mut self, now: Timestamp);
    /// Runs a pass over `parent` as read from `caches`, on `pass_caches` (stale ones under a perturbation);
    /// `None` when the parent is not in the cache.
    fn pass<'a>(
        &'a mut self,
        parent: &'a Parent,
        caches: &'a Caches,
        pass_caches: &'a Caches,
        probe: Arc<Probe>,
    ) -> BoxFuture<'a, Option<PassEnd>>;
}

/// A controller of parents of kind `P`.
pub(super) struct Factory<P: ParentKind> {
    factory: Box<dyn Fn() -> Reconciler<P> + Send + Sync>,
}

impl<P: ParentKind> Factory<P> {
    pub(super) fn new(factory: impl Fn() -> Reconciler<P> + Send + Sync + 'static) -> Self {
        Self {
            factory: Box::new(factory),
        }
    }
}

impl<P: ParentKind> ControllerSetup for Factory<P> {
    fn make(&self, server: &ApiServer) -> Box<dyn Driven> {
        let clock = server.clock().clone();
        let reconciler = (self.factory)().clock(move || clock.now());
        Box::new(Running {
            reconciler,
            triggers: None,
        })
    }

    fn parent(&self) -> ApiResource {
        ApiResource::erase::<P>(&())
    }

    fn kinds(&self) -> Vec<ApiResource> {
        (self.factory)()
            .wiring()
            .kinds()
            .iter()
            .map(|k| ApiResource {
                group: k.group.clone(),
                version: k
                    .api_version
                    .rsplit('/')
                    .next()
                    .unwrap_or(&k.api_version)
                    .to_string(),
                api_version: k.api_version.clone(),
                kind: k.kind.clone(),
                plural: k.plural.clone(),
            })
            .collect()
    }

    fn declared_twice(&self) -> Vec<KindDeclaredTwice> {
        (self.factory)().wiring().declared_twice().to_vec()
    }
}

struct Running<P: ParentKind> {
    reconciler: Reconciler<P>,
    triggers: Option<Triggers<P>>,
}

impl<P: ParentKind> Driven for Running<P> {
    fn name(&self) -> String {
        self.reconciler.name().to_string()
    }

    fn wire(&mut self, caches: &Caches) {
        for kind in self.reconciler.wiring().kinds() {
            kind.ensure(caches);
        }
        caches.ensure::<P>();
        self.triggers = Some(Triggers::new(&self.reconciler, caches));
    }

    fn drain(&mut self, caches: &Caches) {
        if let Some(t) = self.triggers.as_mut() {
            t.drain(caches);
        }
    }

    fn take(&mut self) -> Vec<Parent> {
        self.triggers
            .as_mut()
            .map(Triggers::take)
            .unwrap_or_default()
    }

    fn every(&self, caches: &Caches) -> Vec<Parent> {
        super::triggers::every::<P>(caches)
    }

    fn again(&mut self, parent: Parent) {
        if let Some(t) = self.triggers.as_mut() {
            t.again(parent);
        }
    }

    fn passing(&mut self, parent: &Parent) {
        if let Some(t) = self.triggers.as_mut() {
            t.passing(parent);
        }
    }

    fn requeue(&mut self, parent: Parent, at: Timestamp) {
        if let Some(t) = self.triggers.as_mut() {
            t.requeue(parent, at);
        }
    }

    fn fire(&mut self, now: Timestamp) {
        if let Some(t) = self.triggers.as_mut() {
            t.fire(now);
        }
    }

    fn pass<'a>(
        &'a mut self,
        parent: &'a Parent,
        caches: &'a Caches,
        pass_caches: &'a Caches,
        probe: Arc<Probe>,
    ) -> BoxFuture<'a, Option<PassEnd>> {
        async move {
            let (namespace, name) = parent;
            let found = caches.ensure::<P>().get(namespace.as_deref(), name)?;
            probe.passing(self.reconciler.name(), found.uid());
            let dispatcher: Arc<dyn Dispatcher> = probe;
            let pass = self
                .reconciler
                .run_pass(&found, pass_caches, dispatcher)
                .await;
            if let Some(t) = self.triggers.as_ref() {
                t.tracked(namespace.as_deref(), name, pass.context.tracks().to_vec());
            }
            // As the controller queues it: what the pass asked, or the resync period when shorter.
            let next = |asked| {
                let parent = ObjectRef::from_obj(found.as_ref());
                match self.reconciler.next_pass(&parent, asked).after {
                    Some(after) => PassEnd::After(after),
                    None => PassEnd::Done,
                }
            };
            Some(match &pass.result {
                Ok(Outcome::Continue | Outcome::Halt) | Err(Error::InvalidSpec { .. }) => {
                    next(None)
                }
                Ok(Outcome::RequeueAfter(after)) => next(Some(*after)),
                Err(e) => PassEnd::Failed(format!(
                    "{} {name}: {}",
                    P::kind(&()),
                    super::perturb::short(e)
                )),
            })
        }
        .boxed()
    }
}
