//! One watch per namespace feeding one store: for an operator that may only read some namespaces (a Role
//! in each, no ClusterRole), its caches of namespaced kinds watch each of them.
//!
//! A reflector's store takes one event stream, where a list is `Init`, `InitApply`… and `InitDone` (which
//! replaces the whole store). Watches of several namespaces list at different times, so their events are
//! merged into one stream that keeps that meaning:
//! - one `Init` at the start, each namespace's first list as `InitApply`, and one `InitDone` when every
//!   namespace has listed (events of a namespace that listed early wait until then, so the store loses none);
//! - a later re-list of one namespace (after a watch gap) becomes `Apply` for what it lists and `Delete` for
//!   what the store holds in that namespace and the list no longer has.

use std::collections::{HashSet, VecDeque};

use futures::stream::{self, BoxStream, StreamExt};
use kube::api::{Api, ApiResource, DynamicObject, PartialObjectMeta};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Client, ResourceExt};

use super::options::from_metadata;
use super::{CachedKind, Key, Objects, key_of};

/// The watch of `K` in `namespaces` (with kube's default backoff each), as one stream for the writer of
/// `objects`; of metadata only when `metadata_only`.
pub(crate) fn watch<K: CachedKind>(
    client: &Client,
    namespaces: &[String],
    config: watcher::Config,
    metadata_only: bool,
    objects: Objects<K>,
) -> BoxStream<'static, watcher::Result<Event<K>>> {
    let streams: Vec<_> = namespaces
        .iter()
        .enumerate()
        .map(|(i, namespace)| {
            watch_one::<K>(client, namespace, config.clone(), metadata_only)
                .map(move |ev| (i, ev))
                .boxed()
        })
        .collect();
    if let [_] = namespaces {
        return stream::select_all(streams).map(|(_, ev)| ev).boxed();
    }
    let merge = Merge::new(namespaces.to_vec(), objects);
    stream::select_all(streams)
        .scan(merge, |merge, (i, ev)| {
            let out: Vec<watcher::Result<Event<K>>> = match ev {
                Ok(ev) => merge.event(i, ev).into_iter().map(Ok).collect(),
                Err(e) => vec![Err(e)],
            };
            futures::future::ready(Some(stream::iter(out)))
        })
        .flatten()
        .boxed()
}

/// The watch of `K` in one namespace. kube builds a namespaced `Api<K>` only for a kind known at compile
/// time to be namespaced, which a cache of any `K` is not: the watch reads dynamic objects of `K`'s resource
/// and parses each into `K` (an object that does not parse is skipped, with a warning).
fn watch_one<K: CachedKind>(
    client: &Client,
    namespace: &str,
    config: watcher::Config,
    metadata_only: bool,
) -> BoxStream<'static, watcher::Result<Event<K>>> {
    let resource = ApiResource::erase::<K>(&());
    if metadata_only {
        let api: Api<PartialObjectMeta<DynamicObject>> =
            Api::namespaced_with(client.clone(), namespace, &resource);
        return watcher::watcher(api, config)
            .default_backoff()
            .filter_map(|ev| {
                futures::future::ready(convert(ev, |o| from_metadata::<K>(o.metadata)))
            })
            .boxed();
    }
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), namespace, &resource);
    watcher::watcher(api, config)
        .default_backoff()
        .filter_map(|ev| futures::future::ready(convert(ev, parse::<K>)))
        .boxed()
}

fn parse<K: CachedKind>(o: DynamicObject) -> Option<K> {
    let name = format!("{}/{}", o.namespace().unwrap_or_default(), o.name_any());
    // Not `try_parse`, which goes through a `Value`: see `crate::json`.
    match crate::json::convert::<K>(&o) {
        Ok(k) => Some(k),
        Err(e) => {
            tracing::warn!(kind = %K::kind(&()), object = %name, error = %e, "cannot parse a watched object; skipped");
            None
        }
    }
}

/// A watch event of `A` as one of `B` (`None`, to skip it, when `object` makes nothing of its object).
pub(crate) fn convert<A, B>(
    ev: watcher::Result<Event<A>>,
    mut object: impl FnMut(A) -> Option<B>,
) -> Option<watcher::Result<Event<B>>> {
    let ev = match ev {
        Err(e) => return Some(Err(e)),
        Ok(ev) => ev,
    };
    Some(Ok(match ev {
        Event::Init => Event::Init,
        Event::InitDone => Event::InitDone,
        Event::InitApply(o) => Event::InitApply(object(o)?),
        Event::Apply(o) => Event::Apply(object(o)?),
        Event::Delete(o) => Event::Delete(object(o)?),
    }))
}

/// The state of the merged stream.
struct Merge<K: CachedKind> {
    namespaces: Vec<String>,
    objects: Objects<K>,
    /// Whether the merged stream has sent its `Init`.
    started: bool,
    /// Per namespace: whether its first list is done.
    listed: Vec<bool>,
    /// Per namespace: what a re-list in progress has listed.
    relisting: Vec<Option<HashSet<Key>>>,
    /// Events of namespaces that listed before the others, held until every namespace has.
    held: VecDeque<Event<K>>,
}

impl<K: CachedKind> Merge<K> {
    fn new(namespaces: Vec<String>, objects: Objects<K>) -> Self {
        let n = namespaces.len();
        Self {
            namespaces,
            objects,
            started: false,
            listed: vec![false; n],
            relisting: vec![None; n],
            held: VecDeque::new(),
        }
    }

    fn synced(&self) -> bool {
        self.listed.iter().all(|l| *l)
    }

    /// What the store's writer gets for event `ev` of namespace `i`.
    fn event(&mut self, i: usize, ev: Event<K>) -> Vec<Event<K>> {
        let mut out = Vec::new();
        if !self.started {
            self.started = true;
            out.push(Event::Init);
        }
        if !self.listed[i] {
            match ev {
                Event::Init => {}
                Event::InitApply(o) => out.push(Event::InitApply(o)),
                Event::InitDone => {
                    self.listed[i] = true;
                    if self.synced() {
                        out.push(Event::InitDone);
                        out.extend(self.held.drain(..));
                    }
                }
                // A watcher sends no change before its list is done.
                Event::Apply(o) => out.push(Event::InitApply(o)),
                Event::Delete(_) => {}
            }
            return out;
        }
        let changes = match ev {
            Event::Init => {
                self.relisting[i] = Some(HashSet::new());
                Vec::new()
            }
            Event::InitApply(o) => {
                if let Some(listed) = self.relisting[i].as_mut() {
                    listed.insert(key_of(&o));
                }
                vec![Event::Apply(o)]
            }
            Event::InitDone => match self.relisting[i].take() {
                Some(listed) => {
                    let namespace = &self.namespaces[i];
                    self.objects
                        .select(|k| {
                            k.split_once('/').is_some_and(|(ns, _)| ns == namespace)
                                && !listed.contains(k)
                        })
                        .into_iter()
                        .map(|gone| Event::Delete(gone.as_ref().clone()))
                        .collect()
                }
                None => Vec::new(),
            },
            ev @ (Event::Apply(_) | Event::Delete(_)) => vec![ev],
        };
        if self.synced() {
            out.extend(changes);
        } else {
            self.held.extend(changes);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::runtime::reflector::Store;
    use kube::runtime::reflector::store::Writer;

    fn cm(ns: &str, name: &str) -> ConfigMap {
        let mut cm = ConfigMap::default();
        cm.metadata.namespace = Some(ns.into());
        cm.metadata.name = Some(name.into());
        cm
    }

    fn names(store: &Store<ConfigMap>) -> Vec<String> {
        let mut all: Vec<String> = store
            .state()
            .iter()
            .map(|o| format!("{}/{}", o.namespace().unwrap(), o.name_any()))
            .collect();
        all.sort();
        all
    }

    #[test]
    fn lists_at_different_times_fill_one_store_and_relists_delete_what_vanished() {
        let mut writer = Writer::<ConfigMap>::default();
        let store = writer.as_reader();
        let mut merge = Merge::new(vec!["a".into(), "b".into()], Objects::typed(store.clone()));
        let mut feed = |merge: &mut Merge<ConfigMap>, i: usize, ev: Event<ConfigMap>| {
            for ev in merge.event(i, ev) {
                writer.apply_watcher_event(&ev);
            }
        };
        feed(&mut merge, 0, Event::Init);
        feed(&mut merge, 0, Event::InitApply(cm("a", "one")));
        feed(&mut merge, 0, Event::InitDone);
        // `a` listed, `b` not yet: a change in `a` waits, and the store is not ready.
        feed(&mut merge, 0, Event::Apply(cm("a", "two")));
        assert!(names(&store).is_empty());
        feed(&mut merge, 1, Event::Init);
        feed(&mut merge, 1, Event::InitApply(cm("b", "three")));
        feed(&mut merge, 1, Event::InitDone);
        assert_eq!(names(&store), ["a/one", "a/two", "b/three"]);
        // A re-list of `b` that no longer has `three` deletes it, and leaves `a` alone.
        feed(&mut merge, 1, Event::Init);
        feed(&mut merge, 1, Event::InitApply(cm("b", "four")));
        feed(&mut merge, 1, Event::InitDone);
        assert_eq!(names(&store), ["a/one", "a/two", "b/four"]);
        feed(&mut merge, 0, Event::Delete(cm("a", "one")));
        assert_eq!(names(&store), ["a/two", "b/four"]);
    }
}
