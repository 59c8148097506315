//! What the caches can do without knowing their kinds' types: compare what they hold with what the API server
//! holds, and lend a copy of themselves with one kind frozen. The perturbation explorer
//! (`kubewright::testing::explore`) runs passes on caches that it knows are caught up, or on purpose stale.

use std::any::TypeId;
use std::collections::BTreeMap;

use futures::FutureExt;
use futures::future::BoxFuture;
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, ObjectMeta};
use kube::runtime::reflector::store::Writer;
use kube::runtime::reflector::{Lookup, Store};
use kube::runtime::watcher::Event;

use super::{Cache, CachedKind, Caches, Entry, is_namespaced, ready_fn};

/// The kind-specific functions of a cache entry, as plain function pointers.
#[cfg_attr(not(feature = "testing"), allow(dead_code))]
pub(super) struct Erased {
    /// Compares the cache with the API server; `None` when they hold the same objects at the same
    /// resourceVersions (within what the cache's options select), else what differs.
    pub(super) lag: LagFn,
    /// Puts the entry into other caches: the same live cache, or a copy of what it holds now that never changes.
    pub(super) copy_into: fn(&Entry, &Caches, bool),
    /// The metadata of the objects the owner index says the uid owns.
    pub(super) owned_meta: fn(&Entry, &str) -> Vec<ObjectMeta>,
}

type LagFn =
    fn(&Entry, &Client, &[String]) -> BoxFuture<'static, Result<Option<String>, kube::Error>>;

impl Erased {
    pub(super) fn of<K: CachedKind>() -> Self {
        Self {
            lag: lag::<K>,
            copy_into: copy_into::<K>,
            owned_meta: owned_meta::<K>,
        }
    }
}

/// A ready reflector store holding `objects`, with no watch behind it.
pub(crate) fn frozen_store<K: CachedKind>(objects: Vec<K>) -> Store<K> {
    let mut writer = Writer::<K>::default();
    writer.apply_watcher_event(&Event::Init);
    for o in objects {
        writer.apply_watcher_event(&Event::InitApply(o));
    }
    writer.apply_watcher_event(&Event::InitDone);
    writer.as_reader()
}

fn key(meta: &ObjectMeta) -> String {
    format!(
        "{}/{}",
        meta.namespace.as_deref().unwrap_or(""),
        meta.name.as_deref().unwrap_or("")
    )
}

fn owned_meta<K: CachedKind>(entry: &Entry, uid: &str) -> Vec<ObjectMeta> {
    entry
        .cache
        .downcast_ref::<Cache<K>>()
        .map(|cache| {
            cache
                .owned_by(uid)
                .iter()
                .map(|o| kube::Resource::meta(o.as_ref()).clone())
                .collect()
        })
        .unwrap_or_default()
}

fn lag<K: CachedKind>(
    entry: &Entry,
    client: &Client,
    namespaces: &[String],
) -> BoxFuture<'static, Result<Option<String>, kube::Error>> {
    let cache = entry.cache.downcast_ref::<Cache<K>>().cloned();
    let client = client.clone();
    let namespaces = if is_namespaced::<K>() {
        namespaces.to_vec()
    } else {
        Vec::new()
    };
    async move {
        let Some(cache) = cache else { return Ok(None) };
        let options = cache.options();
        let mut params = ListParams::default();
        if let Some(labels) = options.label_selector() {
            params = params.labels(labels);
        }
        if let Some(fields) = options.field_selector() {
            params = params.fields(fields);
        }
        let resource = ApiResource::erase::<K>(&());
        let apis: Vec<Api<DynamicObject>> = if namespaces.is_empty() {
            vec![Api::all_with(client, &resource)]
        } else {
            namespaces
                .iter()
                .map(|ns| Api::namespaced_with(client.clone(), ns, &resource))
                .collect()
        };
        let mut held = BTreeMap::new();
        for api in apis {
            for o in api.list_metadata(&params).await?.items {
                held.insert(key(&o.metadata), o.metadata.resource_version);
            }
        }
        let cached: BTreeMap<String, Option<String>> = cache
            .state()
            .iter()
            .map(|o| (key(o.meta()), o.resource_version().map(|v| v.into_owned())))
            .collect();
        if cached == held {
            return Ok(None);
        }
        let first = held
            .iter()
            .find(|(k, v)| cached.get(*k) != Some(*v))
            .map(|(k, v)| format!("{k} at {} on the server", v.as_deref().unwrap_or("?")))
            .or_else(|| {
                cached
                    .keys()
                    .find(|k| !held.contains_key(*k))
                    .map(|k| format!("{k} gone from the server"))
            })
            .unwrap_or_default();
        Ok(Some(format!(
            "{}: the cache holds {} objects, the server {} ({first})",
            K::kind(&()),
            cached.len(),
            held.len()
        )))
    }
    .boxed()
}

fn copy_into<K: CachedKind>(entry: &Entry, into: &Caches, frozen: bool) {
    let Some(cache) = entry.cache.downcast_ref::<Cache<K>>() else {
        return;
    };
    if frozen {
        let objects: Vec<K> = cache.state().iter().map(|o| o.as_ref().clone()).collect();
        into.insert_store(frozen_store(objects));
        return;
    }
    let shared = Entry {
        cache: Box::new(cache.clone()),
        start: None,
        ready: ready_fn(&cache.objects),
        last_error: entry.last_error.clone(),
        kind: entry.kind.clone(),
        api_version: entry.api_version.clone(),
        plural: entry.plural.clone(),
        namespaced: entry.namespaced,
        watched: false,
        seen: entry.seen.clone(),
        replayed: entry.replayed.clone(),
        options: cache.options.clone(),
        erased: Erased::of::<K>(),
    };
    into.entries
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(TypeId::of::<K>(), shared);
}

impl Caches {
    /// The metadata of the objects of the kind `api_version`/`kind` that the uid owns, as the kind's cache
    /// holds them; `None` when no cache of the kind exists.
    pub(crate) fn owned_metadata(
        &self,
        api_version: &str,
        kind: &str,
        uid: &str,
    ) -> Option<Vec<ObjectMeta>> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let entry = entries
            .values()
            .find(|e| e.api_version == api_version && e.kind == kind)?;
        Some((entry.erased.owned_meta)(entry, uid))
    }
}

#[cfg_attr(not(feature = "testing"), allow(dead_code))]
impl Caches {
    /// What differs between the caches and the API server, one line per kind whose cache does not hold the
    /// objects the server holds (within the cache's selection) at their resourceVersions; empty when every
    /// cache is caught up. Lists every cached kind (metadata only).
    pub(crate) async fn lag(&self) -> Result<Vec<String>, kube::Error> {
        let checks: Vec<_> = {
            let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            entries
                .values()
                .filter(|e| e.start.is_none())
                .map(|e| (e.erased.lag)(e, &self.client, &self.namespaces))
                .collect()
        };
        let mut out = Vec::new();
        for check in checks {
            if let Some(lag) = check.await? {
                out.push(lag);
            }
        }
        out.sort();
        Ok(out)
    }

    /// Caches that share every cache of these, except the one of `api_version`/`kind`: that one is a copy of
    /// what it holds now, which no watch updates.
    pub(crate) fn with_frozen(&self, api_version: &str, kind: &str) -> Caches {
        let copy = Caches {
            client: self.client.clone(),
            entries: Default::default(),
            buffer: self.buffer,
            namespaces: self.namespaces.clone(),
            lists: self.lists.clone(),
            statuses: self.statuses.clone(),
        };
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        for e in entries.values() {
            let frozen = e.kind == kind && e.api_version == api_version;
            (e.erased.copy_into)(e, &copy, frozen);
        }
        copy
    }
}
