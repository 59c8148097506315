//! Passes that no change in the cluster asks for: a resync period, streams from outside the cluster, and the
//! polling of an external system.
//!
//! A controller reconciles a parent when the parent, a child or a watched object changes, and when a pass asks
//! for it ([`Outcome::RequeueAfter`](crate::Outcome::RequeueAfter)). What lives outside the cluster (a cloud
//! API, a Git repository, a queue) has no watch; these bring its changes in:
//!
//! - [`Reconciler::resync_every`]: every parent is reconciled at least once per period, even with no change
//!   (controller-runtime's `SyncPeriod`, the Java Operator SDK's maximum reconciliation interval). Off by
//!   default.
//! - [`Reconciler::reconcile_on`]: a stream that names parents ([`ObjectRef`]s), as kube-runtime's
//!   `reconcile_on` and controller-runtime's channel source; [`Reconciler::reconcile_on_matching`]: a stream
//!   of anything, with a predicate saying which parents each item concerns.
//! - [`Reconciler::poll`]: calls an async function every interval and reconciles the parents whose inputs
//!   changed since the last call (the Java Operator SDK's polling event source).
//!
//! A trigger that names a parent the cache does not hold is ignored (a debug line). The explorer
//! ([`crate::testing::explore`]) does not run these streams (their timing is not the run's to decide): its
//! scenarios trigger a parent with `Scenario::trigger`.

use std::collections::HashMap;
use std::fmt::Debug;
use std::future::Future;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::stream::{self, BoxStream, Stream, StreamExt};
use kube::runtime::reflector::ObjectRef;

use crate::cache::{Cache, Caches};
use crate::controller::Priority;
use crate::reconciler::{ParentKind, Reconciler};

/// The share of the resync period by which a parent's resync comes early, at most: each parent's own share
/// (from its name) spreads the resyncs of many parents over this part of the period.
const RESYNC_JITTER: f64 = 0.1;

impl<P: ParentKind> Reconciler<P> {
    /// Reconciles every parent at least once per `period` since its last pass, even when nothing changed:
    /// for state the cluster cannot watch (a step that reads an outside system), or as a safety net. Each
    /// parent's period is shortened by up to a tenth, by an amount its name decides, so that thousands of
    /// parents that converged together do not all run again at once. A pass that asks to be requeued sooner
    /// is requeued sooner; a failed pass is retried with its backoff.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # fn f<P: kubewright::ParentKind>(r: kubewright::Reconciler<P>) -> kubewright::Reconciler<P> {
    /// r.resync_every(Duration::from_secs(10 * 60 * 60))
    /// # }
    /// ```
    pub fn resync_every(mut self, period: Duration) -> Self {
        self.resync = Some(period);
        self
    }

    /// Reconciles the parents that `triggers` names, as they come; a name the cache does not hold is ignored.
    /// The stream is run by the first controller started from this reconciler.
    ///
    /// ```
    /// # use kube::runtime::reflector::ObjectRef;
    /// # fn f<P: kubewright::ParentKind>(r: kubewright::Reconciler<P>) -> kubewright::Reconciler<P> {
    /// let (tx, rx) = futures::channel::mpsc::unbounded::<ObjectRef<P>>();
    /// // Elsewhere: tx.unbounded_send(ObjectRef::new("site").within("default"))
    /// # drop(tx);
    /// r.reconcile_on(rx)
    /// # }
    /// ```
    pub fn reconcile_on(self, triggers: impl Stream<Item = ObjectRef<P>> + Send + 'static) -> Self {
        let once = Once::new(triggers.map(|r| vec![r]));
        self.external_trigger(move |_| once.take())
    }

    /// Reconciles, for each item `triggers` yields, every parent in the cache that `concerns(item, parent)`
    /// accepts (a message naming an external resource, say, and the parents that use it).
    ///
    /// ```
    /// # fn f<P: kubewright::ParentKind>(r: kubewright::Reconciler<P>) -> kubewright::Reconciler<P> {
    /// // Every parent in the namespace a message names.
    /// let (_tx, rx) = futures::channel::mpsc::unbounded::<String>();
    /// r.reconcile_on_matching(rx, |namespace: &String, parent: &P| {
    ///     parent.meta().namespace.as_ref() == Some(namespace)
    /// })
    /// # }
    /// ```
    pub fn reconcile_on_matching<T: Send + 'static>(
        self,
        triggers: impl Stream<Item = T> + Send + 'static,
        concerns: impl Fn(&T, &P) -> bool + Send + Sync + 'static,
    ) -> Self {
        let once = Once::new(triggers);
        let concerns = Arc::new(concerns);
        self.external_trigger(move |parents: Cache<P>| {
            let concerns = concerns.clone();
            once.take()
                .map(move |item: T| {
                    parents
                        .state()
                        .iter()
                        .filter(|p| concerns(&item, p))
                        .map(|p| ObjectRef::from_obj(p.as_ref()))
                        .collect()
                })
                .boxed()
        })
    }

    /// Calls `fetch` every `interval` for the state of an outside system, keyed as the author likes (a
    /// bucket's name, a repository's branch), and reconciles the parents that `concerns(parent, key)` accepts
    /// for every key whose value changed, appeared or went since the call before. The first call only
    /// learns the state (every parent has its first pass anyway); a call that fails is logged and the next
    /// one compares with the last state read. `name` names the source in logs and in why a pass runs.
    ///
    /// ```
    /// # use std::collections::HashMap;
    /// # use std::time::Duration;
    /// # fn f<P: kubewright::ParentKind>(r: kubewright::Reconciler<P>) -> kubewright::Reconciler<P> {
    /// // The parents whose name is a key of an outside inventory, each time its version of them changes.
    /// async fn inventory() -> Result<HashMap<String, u64>, std::io::Error> {
    ///     Ok(HashMap::from([("site".to_string(), 7)]))
    /// }
    /// r.poll("inventory", Duration::from_secs(60), inventory, |parent: &P, key: &String| {
    ///     parent.meta().name.as_ref() == Some(key)
    /// })
    /// # }
    /// ```
    pub fn poll<K, V, E, F, Fut>(
        self,
        name: &str,
        interval: Duration,
        fetch: F,
        concerns: impl Fn(&P, &K) -> bool + Send + Sync + 'static,
    ) -> Self
    where
        K: Eq + Hash + Debug + Send + Sync + 'static,
        V: PartialEq + Send + Sync + 'static,
        E: std::fmt::Display + Send + 'static,
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<HashMap<K, V>, E>> + Send + 'static,
    {
        let name: Arc<str> = name.into();
        let fetch = Arc::new(fetch);
        let concerns = Arc::new(concerns);
        self.external_trigger(move |parents: Cache<P>| {
            let (name, fetch, concerns) = (name.clone(), fetch.clone(), concerns.clone());
            let mut ticks = tokio::time::interval(interval.max(Duration::from_millis(1)));
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            let polls = stream::unfold(
                (ticks, None::<HashMap<K, V>>),
                move |(mut ticks, last)| {
                    let (name, fetch) = (name.clone(), fetch.clone());
                    let (parents, concerns) = (parents.clone(), concerns.clone());
                    async move {
                        ticks.tick().await;
                        match fetch().await {
                            Ok(now) => {
                                let refs = match &last {
                                    Some(last) => {
                                        let changed = changed_keys(last, &now);
                                        parents
                                            .state()
                                            .iter()
                                            .filter(|p| changed.iter().any(|k| concerns(p, k)))
                                            .map(|p| ObjectRef::from_obj(p.as_ref()))
                                            .collect()
                                    }
                                    None => Vec::new(),
                                };
                                Some((refs, (ticks, Some(now))))
                            }
                            Err(e) => {
                                tracing::warn!(source = %name, error = %e, "polling failed; trying again at the next interval");
                                Some((Vec::new(), (ticks, last)))
                            }
                        }
                    }
                },
            );
            polls
                .filter(|refs| std::future::ready(!refs.is_empty()))
                .boxed()
        })
    }

    /// Adds a trigger from outside the cluster: `triggers` turns the parent cache into a stream of parents to
    /// reconcile. Parents the cache does not hold are left out.
    fn external_trigger(
        mut self,
        triggers: impl Fn(Cache<P>) -> BoxStream<'static, Vec<ObjectRef<P>>> + Send + Sync + 'static,
    ) -> Self {
        self.external.push(Box::new(move |caches: &Caches| {
            let parents = caches.ensure::<P>();
            let known = parents.clone();
            triggers(parents)
                .map(move |refs| {
                    let refs: Vec<ObjectRef<P>> = refs
                        .into_iter()
                        .filter(|r| {
                            let exists = known.get(r.namespace.as_deref(), &r.name).is_some();
                            if !exists {
                                tracing::debug!(parent = %r, "an external trigger names a parent that does not exist; ignored");
                            }
                            exists
                        })
                        .collect();
                    ("external trigger".to_string(), refs, Priority::Normal)
                })
                .boxed()
        }));
        self
    }

    /// When a parent whose last pass asked for `asked` (none: no requeue) is due next, with the resync period;
    /// and whether that is the resync's time rather than the pass's.
    pub(crate) fn next_pass(&self, parent: &ObjectRef<P>, asked: Option<Duration>) -> NextPass {
        let Some(period) = self.resync else {
            return NextPass::asked(asked);
        };
        let resync = jittered(period, &parent.name, parent.namespace.as_deref());
        match asked {
            Some(asked) if asked <= resync => NextPass::asked(Some(asked)),
            _ => NextPass {
                after: Some(resync),
                resync: true,
            },
        }
    }
}

/// When a parent is due next after a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NextPass {
    /// After how long (none: only a change makes it due).
    pub(crate) after: Option<Duration>,
    /// Whether `after` is the resync period's rather than what the pass asked.
    pub(crate) resync: bool,
}

impl NextPass {
    fn asked(after: Option<Duration>) -> Self {
        Self {
            after,
            resync: false,
        }
    }
}

/// `period`, shortened by up to [`RESYNC_JITTER`] of it by an amount the parent's name decides (the same on
/// every run, so a restart spreads the parents alike).
fn jittered(period: Duration, name: &str, namespace: Option<&str>) -> Duration {
    // `DefaultHasher::new` hashes with fixed keys: the same share on every run.
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    (namespace, name).hash(&mut hasher);
    let share = (hasher.finish() % 10_000) as f64 / 10_000.0;
    period.mul_f64(1.0 - RESYNC_JITTER * share)
}

/// The keys whose value differs between two polls, or that only one has.
fn changed_keys<'a, K: Eq + Hash, V: PartialEq>(
    before: &'a HashMap<K, V>,
    after: &'a HashMap<K, V>,
) -> Vec<&'a K> {
    let mut changed: Vec<&K> = after
        .iter()
        .filter(|(k, v)| before.get(*k) != Some(*v))
        .map(|(k, _)| k)
        .collect();
    changed.extend(before.keys().filter(|k| !after.contains_key(*k)));
    changed
}

/// A stream handed to the first controller that asks for it; later ones get a stream that never yields.
struct Once<T> {
    stream: Mutex<Option<BoxStream<'static, T>>>,
}

impl<T: Send + 'static> Once<T> {
    fn new(stream: impl Stream<Item = T> + Send + 'static) -> Self {
        Self {
            stream: Mutex::new(Some(stream.boxed())),
        }
    }

    fn take(&self) -> BoxStream<'static, T> {
        match self.stream.lock().unwrap_or_else(|e| e.into_inner()).take() {
            Some(stream) => stream,
            None => {
                tracing::warn!(
                    "an external trigger stream was already taken by another controller"
                );
                stream::pending().boxed()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resyncs_spread_over_the_last_tenth_of_the_period() {
        let period = Duration::from_secs(1000);
        let times: Vec<Duration> = (0..1000)
            .map(|i| jittered(period, &format!("parent-{i}"), Some("default")))
            .collect();
        assert!(
            times
                .iter()
                .all(|t| *t > Duration::from_secs(900) && *t <= period)
        );
        let early = times
            .iter()
            .filter(|t| **t < Duration::from_secs(950))
            .count();
        assert!(
            (300..700).contains(&early),
            "{early} of 1000 in the first half of the window"
        );
        assert_eq!(
            jittered(period, "parent-1", Some("default")),
            jittered(period, "parent-1", Some("default"))
        );
    }

    #[test]
    fn changed_keys_are_the_new_the_gone_and_the_different() {
        let before = HashMap::from([("a", 1), ("b", 2), ("c", 3)]);
        let after = HashMap::from([("a", 1), ("b", 5), ("d", 4)]);
        let mut changed: Vec<&str> = changed_keys(&before, &after).into_iter().copied().collect();
        changed.sort();
        assert_eq!(changed, ["b", "c", "d"]);
        assert!(changed_keys(&after, &after).is_empty());
    }
}
