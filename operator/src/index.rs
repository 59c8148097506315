//! Field indexes over a cache: objects found by keys computed from them (for example, every parent whose spec
//! names a ConfigMap), kept in step with the cache's watch so a lookup never scans the store.
//!
//! [`Cache::add_index`](crate::Cache::add_index) declares one; [`Cache::indexed`](crate::Cache::indexed) reads it.
//! A reconciler's [`references`](crate::Reconciler::references) uses one on the parent's cache.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};

use kube::runtime::watcher::Event;

use crate::cache::{CachedKind, Key, Objects};

/// The keys an index files an object under.
pub type IndexKeys<K> = Arc<dyn Fn(&K) -> Vec<String> + Send + Sync>;

/// The keys of the objects filed under each index key.
type Map = HashMap<String, HashSet<Key>>;

struct FieldIndex<K: CachedKind> {
    name: String,
    keys: IndexKeys<K>,
    map: Map,
    /// The index being rebuilt from a (re-)list, swapped in when the list is complete.
    pending: Option<Map>,
}

/// The field indexes of one cache.
pub(crate) struct Indexes<K: CachedKind>(Arc<RwLock<Vec<FieldIndex<K>>>>);

impl<K: CachedKind> Clone for Indexes<K> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<K: CachedKind> Default for Indexes<K> {
    fn default() -> Self {
        Self(Arc::default())
    }
}

fn insert(map: &mut Map, keys: Vec<String>, r: &Key) {
    for k in keys {
        map.entry(k).or_default().insert(r.clone());
    }
}

fn remove(map: &mut Map, keys: &[String], r: &Key) {
    for k in keys {
        if let Some(set) = map.get_mut(k) {
            set.remove(r);
            if set.is_empty() {
                map.remove(k);
            }
        }
    }
}

impl<K: CachedKind> Indexes<K> {
    /// Adds the index `name` (a second index of that name is ignored) and files what `objects` holds now.
    pub(crate) fn add(&self, name: &str, keys: IndexKeys<K>, objects: &Objects<K>) {
        let mut indexes = self.0.write().unwrap_or_else(|e| e.into_inner());
        if indexes.iter().any(|i| i.name == name) {
            return;
        }
        let mut map = Map::new();
        for obj in objects.state() {
            insert(&mut map, keys(&obj), &crate::cache::key_of(obj.as_ref()));
        }
        indexes.push(FieldIndex {
            name: name.to_string(),
            keys,
            map,
            pending: None,
        });
    }

    /// The objects filed under `key` in the index `name` (none when there is no such index).
    pub(crate) fn lookup(&self, name: &str, key: &str) -> Vec<Key> {
        let indexes = self.0.read().unwrap_or_else(|e| e.into_inner());
        indexes
            .iter()
            .find(|i| i.name == name)
            .and_then(|i| i.map.get(key))
            .map(|set| set.iter().cloned().collect())
            .unwrap_or_default()
    }

    /// Keeps every index in step with the objects. Runs before the objects take `ev`, so `objects` still hold
    /// the previous version of an applied object (decoded, in a compact cache, only when there is an index).
    pub(crate) fn update(&self, objects: &Objects<K>, ev: &Event<K>) {
        let mut indexes = self.0.write().unwrap_or_else(|e| e.into_inner());
        if indexes.is_empty() {
            return;
        }
        for index in indexes.iter_mut() {
            match ev {
                Event::Init => index.pending = Some(Map::new()),
                Event::InitApply(o) => {
                    let keys = (index.keys)(o);
                    if let Some(map) = index.pending.as_mut() {
                        insert(map, keys, &crate::cache::key_of(o));
                    }
                }
                Event::InitDone => {
                    if let Some(map) = index.pending.take() {
                        index.map = map;
                    }
                }
                Event::Apply(o) => {
                    let r = crate::cache::key_of(o);
                    let keys = (index.keys)(o);
                    let known = objects
                        .get(&r)
                        .map(|old| (index.keys)(&old))
                        .unwrap_or_default();
                    if known != keys {
                        remove(&mut index.map, &known, &r);
                        insert(&mut index.map, keys, &r);
                    }
                }
                Event::Delete(o) => {
                    let r = crate::cache::key_of(o);
                    let mut keys = (index.keys)(o);
                    if let Some(old) = objects.get(&r) {
                        keys.extend((index.keys)(&old));
                    }
                    remove(&mut index.map, &keys, &r);
                }
            }
        }
    }
}

/// The key of an object by namespace and name, as indexes of references file it: `namespace/name`, or `name`
/// for a cluster-scoped object.
pub fn object_key(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        // Built by hand: `format!` takes several times as long, and every cache lookup builds a key.
        Some(ns) => {
            let mut key = String::with_capacity(ns.len() + 1 + name.len());
            key.push_str(ns);
            key.push('/');
            key.push_str(name);
            key
        }
        None => name.to_string(),
    }
}

/// The reference to the object whose key is `key` ([`object_key`]'s inverse: names never hold a `/`).
pub(crate) fn object_ref_of<K: kube::Resource<DynamicType = ()>>(
    key: &str,
) -> kube::runtime::reflector::ObjectRef<K> {
    use kube::runtime::reflector::ObjectRef;
    match key.split_once('/') {
        Some((namespace, name)) => ObjectRef::new(name).within(namespace),
        None => ObjectRef::new(key),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::runtime::reflector;

    fn cm(name: &str, refers_to: &[&str]) -> ConfigMap {
        let mut c = ConfigMap::default();
        c.metadata.name = Some(name.into());
        c.metadata.namespace = Some("ns".into());
        c.data = Some(
            refers_to
                .iter()
                .enumerate()
                .map(|(i, r)| (i.to_string(), r.to_string()))
                .collect(),
        );
        c
    }

    #[test]
    fn an_object_key_is_namespace_slash_name_and_reads_back() {
        assert_eq!(object_key(Some("ns"), "a"), "ns/a");
        assert_eq!(object_key(None, "a"), "a");
        let r = object_ref_of::<ConfigMap>(&object_key(Some("ns"), "a"));
        assert_eq!((r.namespace.as_deref(), r.name.as_str()), (Some("ns"), "a"));
    }

    fn names(keys: Vec<Key>) -> Vec<String> {
        let mut n: Vec<String> = keys
            .into_iter()
            .map(|k| k.trim_start_matches("ns/").to_string())
            .collect();
        n.sort();
        n
    }

    #[test]
    fn follows_lists_applies_and_deletes() {
        let mut writer = reflector::store::Writer::<ConfigMap>::default();
        let store = Objects::typed(writer.as_reader());
        let indexes = Indexes::<ConfigMap>::default();
        let keys: IndexKeys<ConfigMap> = Arc::new(|c: &ConfigMap| {
            c.data
                .iter()
                .flat_map(|d| d.values().map(|v| object_key(Some("ns"), v)))
                .collect()
        });
        indexes.add("refs", keys, &store);
        let mut apply = |ev: Event<ConfigMap>| {
            indexes.update(&store, &ev);
            writer.apply_watcher_event(&ev);
        };
        apply(Event::Init);
        apply(Event::InitApply(cm("a", &["x"])));
        apply(Event::InitApply(cm("b", &["x", "y"])));
        // Not visible before the list is complete.
        assert!(indexes.lookup("refs", "ns/x").is_empty());
        apply(Event::InitDone);
        assert_eq!(names(indexes.lookup("refs", "ns/x")), ["a", "b"]);
        assert_eq!(names(indexes.lookup("refs", "ns/y")), ["b"]);
        // a moves from x to y.
        apply(Event::Apply(cm("a", &["y"])));
        assert_eq!(names(indexes.lookup("refs", "ns/x")), ["b"]);
        assert_eq!(names(indexes.lookup("refs", "ns/y")), ["a", "b"]);
        apply(Event::Delete(cm("b", &[])));
        assert!(indexes.lookup("refs", "ns/x").is_empty());
        assert_eq!(names(indexes.lookup("refs", "ns/y")), ["a"]);
        assert!(indexes.lookup("other", "ns/y").is_empty());
        // A re-list drops what vanished meanwhile.
        apply(Event::Init);
        apply(Event::InitApply(cm("c", &["z"])));
        apply(Event::InitDone);
        assert!(indexes.lookup("refs", "ns/y").is_empty());
        assert_eq!(names(indexes.lookup("refs", "ns/z")), ["c"]);
    }

    #[test]
    fn an_index_added_late_files_what_the_store_holds() {
        let mut writer = reflector::store::Writer::<ConfigMap>::default();
        let store = Objects::typed(writer.as_reader());
        writer.apply_watcher_event(&Event::Apply(cm("a", &["x"])));
        let indexes = Indexes::<ConfigMap>::default();
        indexes.add(
            "refs",
            Arc::new(|c: &ConfigMap| c.data.iter().flat_map(|d| d.values().cloned()).collect()),
            &store,
        );
        assert_eq!(names(indexes.lookup("refs", "x")), ["a"]);
    }
}
