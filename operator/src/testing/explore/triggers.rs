//! Which parents are due for a pass, decided as the controller decides it: the parent changed, an object it
//! controls changed, an object it tracked last pass changed, an author's mapper named it, its last pass
//! failed, or the time its last pass asked to be requeued at has come (a timer, on the run's clock). A change of
//! the parent or of an object it controls that is the echo of its own pass's write queues nothing, by the
//! runtime's own rule (`kubewright::reconcilers`, "Echoes"), so a status that rule leaves stale is found too. A
//! run passes only due parents, so a change the triggers miss leaves a parent behind, and the round over every
//! parent after settling shows it.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use futures::stream::BoxStream;
use futures::{FutureExt, StreamExt};
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::runtime::reflector::ObjectRef;

use crate::cache::{Caches, Change, Changes, TryRecvError};
use crate::echoes::Echoes;
use crate::owners::controller_parents;
use crate::reconciler::{ParentKind, Reconciler};
use crate::reconcilers::Changed;
use crate::tracker::{TrackKey, Tracker};

/// A parent, as `(namespace, name)` so that parents sort by name.
pub(super) type Parent = (Option<String>, String);

/// Every parent in the cache of `P`, in name order.
pub(super) fn every<P: ParentKind>(caches: &Caches) -> Vec<Parent> {
    let mut all: Vec<Parent> = caches
        .ensure::<P>()
        .state()
        .iter()
        .map(|p| (p.namespace(), p.name_any()))
        .collect();
    all.sort();
    all
}

/// The triggers of one operator process, subscribed before its caches start (so the first lists make every
/// parent due, as they do for the controller).
pub(super) struct Triggers<P: ParentKind> {
    changes: Vec<BoxStream<'static, Changed>>,
    mapped: Vec<BoxStream<'static, crate::reconciler::Mapped<P>>>,
    parents: Changes<P>,
    tracker: Arc<Tracker<P>>,
    /// The writes of the process's passes whose echoes have not come yet.
    echoes: Arc<Echoes>,
    due: BTreeSet<Parent>,
    /// Parents that asked to be requeued, and when.
    timers: BTreeMap<Parent, Timestamp>,
}

fn parent<P: ParentKind>(r: &ObjectRef<P>) -> Parent {
    (r.namespace.clone(), r.name.clone())
}

impl<P: ParentKind> Triggers<P> {
    pub(super) fn new(reconciler: &Reconciler<P>, caches: &Caches) -> Self {
        let changes = reconciler
            .wiring()
            .kinds()
            .iter()
            .map(|k| (k.changes)(caches))
            .collect();
        let mapped = reconciler.mappers.iter().map(|m| m(caches)).collect();
        Self {
            changes,
            mapped,
            parents: caches.ensure::<P>().changes(),
            tracker: Tracker::new(),
            echoes: reconciler.echoes(),
            due: BTreeSet::new(),
            timers: BTreeMap::new(),
        }
    }

    /// Takes in every change the caches have broadcast so far.
    pub(super) fn drain(&mut self, caches: &Caches) {
        loop {
            match self.parents.try_recv() {
                Ok(Change::Applied(p)) => {
                    let echo = p
                        .uid()
                        .zip(p.resource_version())
                        .is_some_and(|(uid, v)| self.echoes.is_echo(&uid, &v, &uid));
                    if !echo {
                        self.due.insert((p.namespace(), p.name_any()));
                    }
                }
                Ok(Change::Deleted(p)) => {
                    let r = ObjectRef::from_obj(p.as_ref());
                    self.tracker.forget(&r);
                    self.due.remove(&parent(&r));
                    self.timers.remove(&parent(&r));
                }
                Err(TryRecvError::Lagged(_)) => self.all(caches),
                Err(TryRecvError::Empty | TryRecvError::Closed) => break,
            }
        }
        for stream in &mut self.changes {
            while let Some(Some(changed)) = stream.next().now_or_never() {
                match changed {
                    Changed::Object {
                        api_version,
                        kind,
                        meta,
                    } => {
                        if !is_echo(&self.echoes, &meta) {
                            for r in controller_parents::<P>(&api_version, &kind, &meta) {
                                self.due.insert(parent(&r));
                            }
                        }
                        for r in self.tracker.parents_of_meta(&api_version, &kind, &meta) {
                            self.due.insert(parent(&r));
                        }
                    }
                    Changed::Lagged => self.due.extend(every::<P>(caches)),
                }
            }
        }
        for stream in &mut self.mapped {
            while let Some(Some((_, refs, _))) = stream.next().now_or_never() {
                self.due.extend(refs.iter().map(parent));
            }
        }
    }

    fn all(&mut self, caches: &Caches) {
        self.due.extend(every::<P>(caches));
    }

    /// The parents due now, in name order; they are no longer due until something makes them so again.
    pub(super) fn take(&mut self) -> Vec<Parent> {
        std::mem::take(&mut self.due).into_iter().collect()
    }

    /// After a pass: what the parent tracks now.
    pub(super) fn tracked(&self, namespace: Option<&str>, name: &str, keys: Vec<TrackKey>) {
        let mut r = ObjectRef::<P>::new(name);
        if let Some(ns) = namespace {
            r = r.within(ns);
        }
        self.tracker.set(r, keys);
    }

    /// The parent is due again (a failed pass is retried).
    pub(super) fn again(&mut self, p: Parent) {
        self.due.insert(p);
    }

    /// A pass over the parent starts: as a request for now overrides a request for later in the controller's
    /// queue, the timer its last pass set is gone.
    pub(super) fn passing(&mut self, p: &Parent) {
        self.timers.remove(p);
    }

    /// The parent is due at `at` (its pass asked to be requeued); the earlier of two timers wins.
    pub(super) fn requeue(&mut self, p: Parent, at: Timestamp) {
        let timer = self.timers.entry(p).or_insert(at);
        *timer = (*timer).min(at);
    }

    /// Makes due the parents whose timers have come by `now`.
    pub(super) fn fire(&mut self, now: Timestamp) {
        let come: Vec<Parent> = self
            .timers
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(p, _)| p.clone())
            .collect();
        for p in come {
            self.timers.remove(&p);
            self.due.insert(p);
        }
    }
}

/// Whether the change `meta` shows is the echo of a write of its controller's own pass.
fn is_echo(
    echoes: &Echoes,
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> bool {
    let controller = meta
        .owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true));
    match (controller, &meta.uid, &meta.resource_version) {
        (Some(c), Some(uid), Some(version)) => echoes.is_echo(uid, version, &c.uid),
        _ => false,
    }
}
