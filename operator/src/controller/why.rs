//! Why parents are due for a pass: the triggers record the change that queued a parent, the pass takes it,
//! logs it, and skips itself when the only changes were echoes of the parent's own last writes.
//!
//! While a parent's pass runs, the changes to the parent and the children it controls are held rather than
//! queued: the echo of a write can arrive before the pass has the answer that tells it (the API server sends
//! both at once). When the pass ends every answer is known; the held changes that are echoes go, the others
//! queue the parent. So a pass's own writes never wake its parent, however the two race.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::runtime::reflector::ObjectRef;

use crate::echoes::Echoes;
use crate::metrics::Metrics;

/// How many reasons are kept per queued parent (a burst of changes to its children is summed up).
pub(super) const REASONS: usize = 4;

/// How many changed objects are kept per queued parent to tell echoes by; a parent queued by more runs.
const CHANGES: usize = 16;

/// What queued a parent, from the first trigger on.
struct Queued {
    reasons: Vec<Box<str>>,
    since: Instant,
    /// The objects whose changes queued it (the parent and its controlled children), each as
    /// `uid resourceVersion` in one allocation (thousands of parents can be queued at once).
    changes: Vec<Box<str>>,
    /// Whether anything else queued it (a tracked or mapped object, missed changes, too many changes).
    other: bool,
}

/// A change that came while its parent's pass ran.
struct Held {
    why: Box<str>,
    uid: Box<str>,
    version: Box<str>,
}

/// Why a parent runs now.
pub(super) struct Due {
    /// The recorded changes, a requeue, a retry after an error, or its own change.
    pub(super) why: String,
    /// How long it was due.
    pub(super) waited: Option<Duration>,
    /// Whether the only changes that queued it are the echoes of its own passes' writes, so the pass would
    /// find what the last one wrote.
    pub(super) echoes_only: bool,
}

/// Why parents are due for a pass. What is recorded and not yet taken is the controller's queue, as its
/// metrics count it (`workqueue_depth`, `workqueue_adds_total`, `workqueue_queue_duration_seconds`).
pub(super) struct Why<P: kube::Resource<DynamicType = ()>> {
    controller: String,
    metrics: Metrics,
    /// Keyed by the parent's `namespace/name`, each boxed: a thousand parents queued at once (a start, a
    /// resync) take a table of small entries rather than one of whole object references and reasons.
    queued: Mutex<HashMap<Box<str>, Box<Queued>>>,
    /// The parents with a pass in flight, and the changes to them or their children held until it ends.
    running: Mutex<HashMap<Box<str>, Vec<Held>>>,
    requeued: Mutex<HashMap<Box<str>, &'static str>>,
    /// The controller's writes whose echoes are awaited.
    echoes: Arc<Echoes>,
    parent: PhantomData<fn() -> P>,
}

fn key<P: kube::Resource<DynamicType = ()>>(parent: &ObjectRef<P>) -> Box<str> {
    crate::index::object_key(parent.namespace.as_deref(), &parent.name).into_boxed_str()
}

impl<P: kube::Resource<DynamicType = ()>> Why<P> {
    pub(super) fn new(controller: &str, echoes: Arc<Echoes>) -> Self {
        Self {
            controller: controller.to_string(),
            metrics: Metrics::global(),
            queued: Mutex::default(),
            running: Mutex::default(),
            requeued: Mutex::default(),
            echoes,
            parent: PhantomData,
        }
    }

    /// Records that `parent` is due because of `why` (a tracked or mapped object, missed changes).
    pub(super) fn record(&self, parent: &ObjectRef<P>, why: &str) {
        self.add(parent, why, None);
    }

    /// Records that `parent` is due because the object `meta` describes changed: the parent itself, or a
    /// child it controls. `writer` is the uid of the parent whose passes may have written it (the parent's
    /// own, or the child's controller's). Answers whether that queues the parent now: nothing for the echo of
    /// a write of `writer`'s passes, and a change that comes while the parent's pass runs is held until
    /// [`Why::pass_ended`] tells whether it is that pass's echo. Both are decided under one lock with the end
    /// of a pass, so an echo is told once every answer of its pass is known, whichever comes first.
    pub(super) fn record_change(
        &self,
        parent: &ObjectRef<P>,
        writer: Option<&str>,
        why: impl FnOnce() -> String,
        meta: &ObjectMeta,
    ) -> bool {
        let changed = meta.uid.as_deref().zip(meta.resource_version.as_deref());
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        match (running.get_mut(&*key(parent)), changed) {
            (Some(held), Some((uid, version))) => {
                held.push(Held {
                    why: why().into(),
                    uid: uid.into(),
                    version: version.into(),
                });
                false
            }
            (None, Some((uid, version)))
                if writer.is_some_and(|w| self.echoes.is_echo(uid, version, w)) =>
            {
                false
            }
            _ => {
                self.add(parent, &why(), changed);
                true
            }
        }
    }

    /// Marks the pass over `parent` started: changes to it and its children are held until it ends.
    pub(super) fn pass_started(&self, parent: &ObjectRef<P>) {
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key(parent), Vec::new());
    }

    /// Marks the pass over `parent` (whose uid is `uid`) ended, and records the changes held meanwhile that
    /// are not echoes of its writes. Answers whether any was, so that the parent runs again.
    pub(super) fn pass_ended(&self, parent: &ObjectRef<P>, uid: &str) -> bool {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        let Some(held) = running.remove(&*key(parent)) else {
            return false;
        };
        // Checked in the order they came (an echo recognised lets the versions before it go), and under the
        // lock, before any later change of the same objects is.
        let mut queued = false;
        for h in held {
            if !self.echoes.is_echo(&h.uid, &h.version, uid) {
                self.add(parent, &h.why, Some((&h.uid, &h.version)));
                queued = true;
            }
        }
        queued
    }

    /// Marks the pass over `parent` ended without an outcome (dropped at shutdown): what it held goes.
    pub(super) fn pass_dropped(&self, parent: &ObjectRef<P>) {
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&*key(parent));
    }

    fn add(&self, parent: &ObjectRef<P>, why: &str, changed: Option<(&str, &str)>) {
        let mut queued = self.queued.lock().unwrap_or_else(|e| e.into_inner());
        let mut added = false;
        let q = queued.entry(key(parent)).or_insert_with(|| {
            added = true;
            Box::new(Queued {
                reasons: Vec::with_capacity(1),
                since: Instant::now(),
                changes: Vec::with_capacity(1),
                other: false,
            })
        });
        if q.reasons.len() < REASONS && !q.reasons.iter().any(|r| &**r == why) {
            q.reasons.push(why.into());
        } else if q.reasons.len() == REASONS && !q.reasons.iter().any(|r| &**r == "…") {
            q.reasons.push("…".into());
        }
        match changed {
            Some((uid, version)) if q.changes.len() < CHANGES => {
                q.changes.push(format!("{uid} {version}").into_boxed_str());
            }
            _ => q.other = true,
        }
        // Counted as client-go's queue counts: a parent already due is not added again.
        if added {
            self.metrics.queued(&self.controller, queued.len());
        }
    }

    /// Why `parent` (whose uid is `uid`) runs now, and whether only echoes of its own writes
    /// queued it (checking consumes them).
    pub(super) fn take(&self, parent: &ObjectRef<P>, uid: Option<&str>, retrying: bool) -> Due {
        let parent = key(parent);
        let taken = {
            let mut queued = self.queued.lock().unwrap_or_else(|e| e.into_inner());
            let taken = queued.remove(&parent);
            self.metrics.set_depth(&self.controller, queued.len());
            taken
        };
        let requeued_as = self
            .requeued
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&parent);
        let requeued = requeued_as.is_some();
        let waited = taken.as_ref().map(|q| q.since.elapsed());
        let echoes_only = match (&taken, uid) {
            (Some(q), Some(uid)) if !q.other && !q.changes.is_empty() && !requeued && !retrying => {
                // Every change is checked, not only up to the first that is no echo: an echo recognised is
                // forgotten, one left unchecked would be kept until it expires.
                q.changes.iter().fold(true, |all, change| {
                    let (u, v) = change.split_once(' ').unwrap_or((change, ""));
                    self.echoes.is_echo(u, v, uid) && all
                })
            }
            _ => false,
        };
        let why = match taken {
            Some(q) if !q.reasons.is_empty() => q.reasons.join("; "),
            _ if retrying => "retry after an error".into(),
            _ if requeued => requeued_as.unwrap_or("requeue").into(),
            _ => "the parent changed".into(),
        };
        Due {
            why,
            waited,
            echoes_only,
        }
    }

    /// Marks `parent` requeued by its pass.
    pub(super) fn requeue(&self, parent: &ObjectRef<P>) {
        self.requeued
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key(parent), "requeue");
    }

    /// Marks `parent` due at the end of its resync period ([`Reconciler::resync_every`]), unless its pass asked
    /// for an earlier requeue.
    pub(super) fn resync(&self, parent: &ObjectRef<P>) {
        self.requeued
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(key(parent))
            .or_insert("periodic resync");
    }

    /// Forgets `parent` (deleted).
    pub(super) fn forget(&self, parent: &ObjectRef<P>) {
        let parent = key(parent);
        self.running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&parent);
        {
            let mut queued = self.queued.lock().unwrap_or_else(|e| e.into_inner());
            queued.remove(&parent);
            self.metrics.set_depth(&self.controller, queued.len());
        }
        self.requeued
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&parent);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    fn why(w: &Why<ConfigMap>, parent: &ObjectRef<ConfigMap>, retrying: bool) -> String {
        w.take(parent, Some("p"), retrying).why
    }

    #[test]
    fn a_pass_says_why_it_runs() {
        let w = Why::<ConfigMap>::new("test", Arc::default());
        let a = ObjectRef::new("a").within("default");
        w.record(&a, "child Deployment default/a changed");
        w.record(&a, "child Deployment default/a changed");
        w.record(&a, "watched ConfigMap default/settings changed");
        assert_eq!(
            why(&w, &a, false),
            "child Deployment default/a changed; watched ConfigMap default/settings changed"
        );
        assert_eq!(why(&w, &a, false), "the parent changed", "taken once");
        w.requeue(&a);
        assert_eq!(why(&w, &a, false), "requeue");
        assert_eq!(why(&w, &a, true), "retry after an error");
        for i in 0..10 {
            w.record(&a, &format!("child Service default/s{i} changed"));
        }
        let many = why(&w, &a, false);
        assert_eq!(many.matches("changed").count(), REASONS, "{many}");
        assert!(many.ends_with("…"), "{many}");
        w.record(&a, "x");
        w.forget(&a);
        assert_eq!(why(&w, &a, false), "the parent changed");
    }

    fn meta(uid: &str, version: &str) -> ObjectMeta {
        ObjectMeta {
            uid: Some(uid.into()),
            resource_version: Some(version.into()),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn a_parent_queued_only_by_echoes_of_its_own_writes_skips_its_pass() {
        let echoes = Arc::new(Echoes::default());
        let w = Why::<ConfigMap>::new("test", echoes.clone());
        let a = ObjectRef::new("a").within("default");
        let take = |retrying| w.take(&a, Some("p"), retrying).echoes_only;
        // The events may come before the pass that wrote them has the answers: they are told apart when the
        // next pass is due, after the writing pass ended.
        w.record_change(&a, None, || "the parent changed".into(), &meta("p", "5"));
        w.record_change(
            &a,
            None,
            || "child ConfigMap default/c changed".into(),
            &meta("c", "4"),
        );
        echoes.wrote("p", "c", "4");
        echoes.wrote("p", "p", "5");
        assert!(take(false));

        // One change that is not an echo, and the pass runs.
        echoes.wrote("p", "c", "6");
        w.record_change(
            &a,
            None,
            || "child ConfigMap default/c changed".into(),
            &meta("c", "6"),
        );
        w.record_change(&a, None, || "the parent changed".into(), &meta("p", "7"));
        assert!(!take(false));

        // A tracked or mapped object's change is never an echo, nor is a requeue or a retry.
        echoes.wrote("p", "c", "8");
        w.record_change(
            &a,
            None,
            || "child ConfigMap default/c changed".into(),
            &meta("c", "8"),
        );
        w.record(&a, "tracked Secret default/s changed");
        assert!(!take(false));
        for (requeue, retrying) in [(true, false), (false, true)] {
            echoes.wrote("p", "c", "9");
            w.record_change(
                &a,
                None,
                || "child ConfigMap default/c changed".into(),
                &meta("c", "9"),
            );
            if requeue {
                w.requeue(&a);
            }
            assert!(!take(retrying));
        }
        // Nothing recorded (kube-runtime's own scheduling): the pass runs.
        assert!(!take(false));
    }

    #[test]
    fn a_change_during_its_parents_pass_is_held_until_the_pass_ends_and_told_then() {
        let echoes = Arc::new(Echoes::default());
        let w = Why::<ConfigMap>::new("held", echoes.clone());
        let a = ObjectRef::new("a").within("default");
        w.pass_started(&a);
        // The echoes of the child's and the status's writes, before the pass has their answers.
        assert!(!w.record_change(
            &a,
            None,
            || "child ConfigMap default/c changed".into(),
            &meta("c", "4")
        ));
        assert!(!w.record_change(&a, None, || "the parent changed".into(), &meta("p", "5")));
        echoes.wrote("p", "c", "4");
        echoes.wrote("p", "p", "5");
        assert!(!w.pass_ended(&a, "p"), "only echoes: not queued");
        assert!(w.queued.lock().unwrap().is_empty());

        // Someone else's change during the pass queues the parent when the pass ends.
        w.pass_started(&a);
        assert!(!w.record_change(
            &a,
            None,
            || "child ConfigMap default/c changed".into(),
            &meta("c", "6")
        ));
        assert!(w.pass_ended(&a, "p"));
        assert_eq!(why(&w, &a, false), "child ConfigMap default/c changed");

        // With no pass in flight, a change queues at once; a tracked object's change is never held.
        assert!(w.record_change(&a, None, || "the parent changed".into(), &meta("p", "7")));
        w.pass_started(&a);
        w.record(&a, "tracked Secret default/s changed");
        w.forget(&a);
        assert!(!w.pass_ended(&a, "p"), "forgotten with its parent");

        // With no pass in flight, the echo of a write of the writer's passes queues nothing; the same event for
        // a parent that did not write it does.
        echoes.wrote("p", "c", "9");
        assert!(w.record_change(&a, Some("q"), || "child".into(), &meta("c", "9")));
        assert!(!w.record_change(&a, Some("p"), || "child".into(), &meta("c", "9")));
    }
}
