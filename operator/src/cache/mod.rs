//! Shared caches: one watch and one store per kind, shared by every controller in the process, with an index
//! of objects by owner uid so a reconcile finds its children without scanning.

use std::any::{Any, TypeId};
use std::collections::{HashMap, HashSet};
use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use kube::api::{Api, PartialObjectMeta};
use kube::runtime::WatchStreamExt;
use kube::runtime::reflector::{self, ObjectRef, ReflectHandle, Store};
use kube::runtime::watcher;
use kube::{Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;

use crate::index::{IndexKeys, Indexes};

mod erased;
mod events;
mod lists;
mod namespaces;
mod options;

#[cfg(any(test, feature = "testing"))]
pub(crate) use erased::frozen_store;

pub use lists::{ListStrategy, probe_list_strategy};
pub use options::{CacheOptions, CacheOptionsError, LIST_PAGE, OWNER_LABEL};

/// The annotation `kubectl apply` keeps; stripped from cached objects with `managedFields`.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// What a kind must be to be cached.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a Kubernetes resource kind the runtime can cache",
    label = "not a Kubernetes resource kind",
    note = "a kind is a `kube::Resource` with a static type (k8s-openapi's types such as `ConfigMap`, or the root type `#[derive(CustomResource)]` generates from a spec), and `Clone`, `Debug` and `serde::de::DeserializeOwned`; for a custom resource, derive `CustomResource` on its spec and name the generated type"
)]
pub trait CachedKind:
    Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static
{
}

impl<K> CachedKind for K where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + Sync + 'static
{
}

/// How many changes of one kind a trigger stream may fall behind before it reconciles every parent.
const CHANGES_CAPACITY: usize = 1 << 12;

type OwnerIndex<K> = Arc<RwLock<HashMap<String, HashSet<ObjectRef<K>>>>>;

/// A change to a cached object, as broadcast to controllers' triggers.
#[derive(Debug)]
pub enum Change<K> {
    /// Created or updated (or seen in a re-list).
    Applied(Arc<K>),
    /// Deleted (or missing from a re-list).
    Deleted(Arc<K>),
}

impl<K> Clone for Change<K> {
    fn clone(&self) -> Self {
        match self {
            Change::Applied(o) => Change::Applied(o.clone()),
            Change::Deleted(o) => Change::Deleted(o.clone()),
        }
    }
}

impl<K> Change<K> {
    /// The object.
    pub fn object(&self) -> &Arc<K> {
        match self {
            Change::Applied(o) | Change::Deleted(o) => o,
        }
    }
}

/// The cache of one kind: a reflector store and the owner index.
pub struct Cache<K: CachedKind> {
    store: Store<K>,
    owners: OwnerIndex<K>,
    indexes: Indexes<K>,
    writer: Arc<Mutex<Option<reflector::store::Writer<K>>>>,
    changes: tokio::sync::broadcast::Sender<Change<K>>,
    options: Arc<RwLock<CacheOptions>>,
}

impl<K: CachedKind> Clone for Cache<K> {
    fn clone(&self) -> Self {
        Self {
            store: self.store.clone(),
            owners: self.owners.clone(),
            indexes: self.indexes.clone(),
            writer: self.writer.clone(),
            changes: self.changes.clone(),
            options: self.options.clone(),
        }
    }
}

impl<K: CachedKind> Cache<K> {
    /// The reflector store.
    pub fn store(&self) -> &Store<K> {
        &self.store
    }

    /// An object by namespace and name.
    pub fn get(&self, namespace: Option<&str>, name: &str) -> Option<Arc<K>> {
        let mut r = ObjectRef::new(name);
        if let Some(ns) = namespace {
            r = r.within(ns);
        }
        self.store.get(&r)
    }

    /// The objects whose `ownerReferences` name `uid`.
    pub fn owned_by(&self, uid: &str) -> Vec<Arc<K>> {
        let owners = self.owners.read().unwrap_or_else(|e| e.into_inner());
        owners
            .get(uid)
            .map(|refs| refs.iter().filter_map(|r| self.store.get(r)).collect())
            .unwrap_or_default()
    }

    /// Adds the field index `name`, filing every object under the keys `keys` computes from it (a second index
    /// of the same name is ignored). The index follows the cache's watch from then on; objects already
    /// cached are filed at once.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use k8s_openapi::api::core::v1::Pod;
    /// # fn f(cache: operator::Cache<Pod>) {
    /// // Pods by the node they run on.
    /// cache.add_index("node", Arc::new(|p: &Pod| {
    ///     p.spec.iter().filter_map(|s| s.node_name.clone()).collect()
    /// }));
    /// let on_node_a = cache.indexed("node", "a");
    /// # }
    /// ```
    pub fn add_index(&self, name: &str, keys: IndexKeys<K>) {
        self.indexes.add(name, keys, &self.store);
    }

    /// The objects the field index `name` files under `key` (none when there is no such index).
    pub fn indexed(&self, name: &str, key: &str) -> Vec<Arc<K>> {
        self.indexes
            .lookup(name, key)
            .iter()
            .filter_map(|r| self.store.get(r))
            .collect()
    }

    /// A new subscription to the kind's changes, for a controller trigger. `None` once the cache has started.
    pub fn subscribe(&self) -> Option<ReflectHandle<K>> {
        self.writer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(|w| w.subscribe())
    }

    /// Broadcasts a change as the watch would (for tests of trigger streams).
    #[cfg(test)]
    pub(crate) fn broadcast(&self, change: Change<K>) {
        let _ = self.changes.send(change);
    }

    /// Every change from now on, including deletes (a lagging receiver gets `RecvError::Lagged`).
    pub fn changes(&self) -> tokio::sync::broadcast::Receiver<Change<K>> {
        self.changes.subscribe()
    }

    /// Waits until the first list has been stored.
    pub async fn ready(&self) {
        let _ = self.store.wait_until_ready().await;
    }

    /// What the cache holds of its kind.
    pub fn options(&self) -> CacheOptions {
        self.options
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Whether the cache holds every object of its kind (in the operator's namespaces): only then does a
    /// lookup that finds nothing mean the object does not exist.
    pub fn holds_every_object(&self) -> bool {
        self.options().holds_every_object()
    }
}

/// Whether `K` lives in namespaces (k8s-openapi's and kube's derive name the scope by type).
pub fn is_namespaced<K: Resource>() -> bool {
    std::any::type_name::<K::Scope>().ends_with("NamespaceResourceScope")
}

/// Strips what the runtime never reads from a cached object, to save memory.
pub fn strip<K: Resource>(obj: &mut K) {
    let meta = obj.meta_mut();
    meta.managed_fields = None;
    if let Some(a) = meta.annotations.as_mut() {
        a.remove(LAST_APPLIED);
        if a.is_empty() {
            meta.annotations = None;
        }
    }
}

/// A cache that does not hold its first list yet, and the last error its watch got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsynced {
    /// The kind, e.g. `ResourceQuota`.
    pub kind: String,
    /// The watch's last error, e.g. `404 NotFound: the server could not find the requested resource`;
    /// `None` while it has failed nothing (still listing).
    pub last_error: Option<String>,
}

impl std::fmt::Display for Unsynced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.last_error {
            Some(e) => write!(f, "{} (the server answered: {e})", self.kind),
            None => write!(f, "{} (no answer yet)", self.kind),
        }
    }
}

/// Caches that did not sync in time: which kinds, and what the server answered their watches.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the caches of {} did not sync within {after:?}", list(.unsynced))]
pub struct NotSynced {
    /// How long the caller waited.
    pub after: Duration,
    /// The caches not synced, by kind.
    pub unsynced: Vec<Unsynced>,
}

fn list(unsynced: &[Unsynced]) -> String {
    let all: Vec<String> = unsynced.iter().map(Unsynced::to_string).collect();
    all.join(", ")
}

/// A watch error as the server put it: `404 NotFound: the server could not find the requested resource` for
/// an API error, the client's words otherwise.
pub fn describe_watch_error(e: &watcher::Error) -> String {
    let status = match e {
        watcher::Error::InitialListFailed(kube::Error::Api(s))
        | watcher::Error::WatchStartFailed(kube::Error::Api(s))
        | watcher::Error::WatchFailed(kube::Error::Api(s))
        | watcher::Error::WatchError(s) => s,
        other => return other.to_string(),
    };
    format!("{} {}: {}", status.code, status.reason, status.message)
}

type LastError = Arc<Mutex<Option<String>>>;

struct Entry {
    cache: Box<dyn Any + Send + Sync>,
    start: Option<BoxFuture<'static, ()>>,
    /// Resolves once the cache holds its first list.
    ready: Box<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync>,
    /// The last error of the watch.
    last_error: LastError,
    kind: String,
    api_version: String,
    /// The highest resourceVersion the watch delivered (0 for a store with no watch).
    seen: Arc<AtomicU64>,
    /// What can be done with the entry without knowing its kind's type.
    #[cfg_attr(not(feature = "testing"), allow(dead_code))]
    erased: erased::Erased,
}

fn ready_fn<K: CachedKind>(
    store: &Store<K>,
) -> Box<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync> {
    let store = store.clone();
    Box::new(move || {
        let store = store.clone();
        async move {
            let _ = store.wait_until_ready().await;
        }
        .boxed()
    })
}

/// Every cache of a process, one per kind, created on first use and started together.
#[derive(Clone)]
pub struct Caches {
    client: Client,
    entries: Arc<Mutex<HashMap<TypeId, Entry>>>,
    buffer: usize,
    /// The namespaces watched for namespaced kinds; empty: all.
    namespaces: Arc<Vec<String>>,
    /// How caches that start from now on get their first lists.
    lists: Arc<RwLock<ListStrategy>>,
}

impl Debug for Caches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let kinds: Vec<&str> = entries.values().map(|e| e.kind.as_str()).collect();
        f.debug_struct("Caches").field("kinds", &kinds).finish()
    }
}

impl Caches {
    /// Caches reading through `client`, across all namespaces.
    pub fn new(client: Client) -> Self {
        Self::for_namespaces(client, Vec::<String>::new())
    }

    /// Caches that watch namespaced kinds in `namespaces` only (one watch per namespace, so a Role in each
    /// is all the access they need; none: all namespaces). Cluster-scoped kinds are watched cluster-wide.
    pub fn for_namespaces(
        client: Client,
        namespaces: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        let mut namespaces: Vec<String> = namespaces.into_iter().map(Into::into).collect();
        namespaces.sort();
        namespaces.dedup();
        Self {
            client,
            entries: Arc::default(),
            buffer: 1024,
            namespaces: Arc::new(namespaces),
            lists: Arc::default(),
        }
    }

    /// The namespaces watched for namespaced kinds (empty: all).
    pub fn namespaces(&self) -> &[String] {
        &self.namespaces
    }

    /// How caches get their first lists (default [`ListStrategy::Paged`]); set it before they start, e.g. from
    /// [`probe_list_strategy`]; [`Operator::list_strategy`](crate::Operator::list_strategy) does that for an
    /// operator.
    pub fn set_list_strategy(&self, strategy: ListStrategy) {
        *self.lists.write().unwrap_or_else(|e| e.into_inner()) = strategy;
    }

    /// How caches get their first lists.
    pub fn list_strategy(&self) -> ListStrategy {
        *self.lists.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The client the caches watch with.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The cache of `K`, created (not yet started) on first use.
    pub fn ensure<K: CachedKind>(&self) -> Cache<K> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let entry = entries.entry(TypeId::of::<K>()).or_insert_with(|| {
            let writer = reflector::store::Writer::<K>::new_shared(self.buffer, ());
            let store = writer.as_reader();
            let owners: OwnerIndex<K> = Arc::default();
            let indexes = Indexes::<K>::default();
            let writer = Arc::new(Mutex::new(Some(writer)));
            // The slots are allocated up front (48 bytes each, whatever the kind): 4,096 cost 192 KiB per kind,
            // where 65,536 cost 3 MiB (9 MiB of a 1,000-WebApp operator's 56 MiB peak on kube-apiserver). A
            // trigger stream more than 4,096 changes behind reconciles every parent once (`Changed::Lagged`).
            let (changes, _) = tokio::sync::broadcast::channel(CHANGES_CAPACITY);
            let options: Arc<RwLock<CacheOptions>> = Arc::default();
            let cache = Cache {
                store: store.clone(),
                owners: owners.clone(),
                indexes: indexes.clone(),
                writer: writer.clone(),
                changes: changes.clone(),
                options: options.clone(),
            };
            let ready_store = store.clone();
            let client = self.client.clone();
            let namespaces = if is_namespaced::<K>() {
                self.namespaces.clone()
            } else {
                Arc::default()
            };
            let relist_store = store.clone();
            let lists = self.lists.clone();
            let kind = K::kind(&()).into_owned();
            let last_error = LastError::default();
            let seen = Arc::new(AtomicU64::new(0));
            let start = {
                let seen = seen.clone();
                let kind = kind.clone();
                let last_error = last_error.clone();
                async move {
                    let Some(w) = writer.lock().unwrap_or_else(|e| e.into_inner()).take() else {
                        return;
                    };
                    let mut pending = None;
                    let mut listed: Option<HashSet<ObjectRef<K>>> = None;
                    let options = options.read().unwrap_or_else(|e| e.into_inner()).clone();
                    let strategy = *lists.read().unwrap_or_else(|e| e.into_inner());
                    let config = options.watcher_config();
                    let metadata_only = options.is_metadata_only();
                    let watch = move |config: watcher::Config| {
                        if !namespaces.is_empty() {
                            namespaces::watch(
                                &client,
                                &namespaces,
                                config,
                                metadata_only,
                                relist_store.clone(),
                            )
                        } else if metadata_only {
                            let api: Api<PartialObjectMeta<K>> = Api::all(client.clone());
                            watcher::watcher(api, config)
                                .default_backoff()
                                .filter_map(|ev| {
                                    futures::future::ready(namespaces::convert(ev, |o| {
                                        options::from_metadata::<K>(o.metadata)
                                    }))
                                })
                                .boxed()
                        } else {
                            let api: Api<K> = Api::all(client.clone());
                            watcher::watcher(api, config).default_backoff().boxed()
                        }
                    };
                    let events = lists::events(&kind, strategy, config, watch);
                    let applied = changes.clone();
                    let applied_store = store.clone();
                    let stream = events
                        .modify(strip::<K>)
                        .map(move |ev| {
                            if let Ok(ev) = &ev {
                                events::index_update(&owners, &store, &mut pending, ev);
                                indexes.update(&store, ev);
                                events::note_seen(&seen, ev);
                                events::broadcast(&changes, &store, &mut listed, ev);
                            }
                            ev
                        })
                        .reflect_shared(w)
                        .map(move |ev| {
                            if let Ok(ev) = &ev {
                                events::broadcast_applied(&applied, &applied_store, ev);
                            }
                            ev
                        });
                    futures::pin_mut!(stream);
                    while let Some(ev) = stream.next().await {
                        if let Err(e) = ev {
                            let answer = describe_watch_error(&e);
                            tracing::warn!(kind = %kind, error = %answer, "watch failed; retrying with backoff");
                            *last_error.lock().unwrap_or_else(|e| e.into_inner()) = Some(answer);
                        }
                    }
                }
                .boxed()
            };
            Entry {
                cache: Box::new(cache),
                start: Some(start),
                ready: ready_fn(&ready_store),
                last_error,
                kind,
                api_version: K::api_version(&()).into_owned(),
                seen,
                erased: erased::Erased::of::<K>(),
            }
        });
        entry
            .cache
            .downcast_ref::<Cache<K>>()
            .cloned()
            .unwrap_or_else(|| unreachable_cache::<K>())
    }

    /// Sets what the cache of `K` holds (created on first use, like [`Caches::ensure`]); the cache must not
    /// have started.
    pub fn configure<K: CachedKind>(
        &self,
        options: CacheOptions,
    ) -> Result<Cache<K>, CacheOptionsError> {
        options.check::<K>()?;
        let cache = self.ensure::<K>();
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries
            .get(&TypeId::of::<K>())
            .is_none_or(|e| e.start.is_none())
        {
            return Err(CacheOptionsError::Started {
                kind: K::kind(&()).into_owned(),
            });
        }
        *cache.options.write().unwrap_or_else(|e| e.into_inner()) = options;
        Ok(cache)
    }

    /// The cache of `K` if some controller declared it.
    pub fn get<K: CachedKind>(&self) -> Option<Cache<K>> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .get(&TypeId::of::<K>())?
            .cache
            .downcast_ref::<Cache<K>>()
            .cloned()
    }

    /// The highest resourceVersion the watch of the kind `api_version`/`kind` delivered so far: `None` when
    /// the kind is not cached, 0 before its first object. Tests use it to wait until a cache has seen a write.
    pub fn seen_resource_version(&self, api_version: &str, kind: &str) -> Option<u64> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .values()
            .find(|e| e.kind == kind && e.api_version == api_version)
            .map(|e| e.seen.load(Ordering::Acquire))
    }

    /// The kinds cached, e.g. for logs.
    pub fn kinds(&self) -> Vec<String> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let mut k: Vec<String> = entries.values().map(|e| e.kind.clone()).collect();
        k.sort();
        k
    }

    /// Adds (or replaces) the cache of `K` with one over `store`, with no watch behind it: for tests that run
    /// steps with no API server (see `operator::testing::store_from`). The owner index is built from the
    /// store's objects at this call; later changes to the store are not indexed.
    pub fn insert_store<K: CachedKind>(&self, store: Store<K>) -> Cache<K> {
        let mut index: HashMap<String, HashSet<ObjectRef<K>>> = HashMap::new();
        for obj in store.state() {
            for r in obj.owner_references() {
                index
                    .entry(r.uid.clone())
                    .or_default()
                    .insert(ObjectRef::from_obj(obj.as_ref()));
            }
        }
        let cache = Cache {
            store: store.clone(),
            owners: Arc::new(RwLock::new(index)),
            indexes: Indexes::default(),
            writer: Arc::new(Mutex::new(None)),
            changes: tokio::sync::broadcast::channel(16).0,
            options: Arc::default(),
        };
        let kind = K::kind(&()).into_owned();
        let entry = Entry {
            cache: Box::new(cache.clone()),
            start: None,
            ready: ready_fn(&store),
            last_error: LastError::default(),
            kind,
            api_version: K::api_version(&()).into_owned(),
            seen: Arc::default(),
            erased: erased::Erased::of::<K>(),
        };
        self.entries
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(TypeId::of::<K>(), entry);
        cache
    }

    /// Waits until every cache created so far holds its first list (their watches must be running).
    pub async fn ready(&self) {
        let waits: Vec<BoxFuture<'static, ()>> = {
            let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
            entries.values().map(|e| (e.ready)()).collect()
        };
        futures::future::join_all(waits).await;
    }

    /// The caches that do not hold their first list yet, by kind, with their watches' last errors.
    pub fn unsynced(&self) -> Vec<Unsynced> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let mut out: Vec<Unsynced> = entries
            .values()
            .filter(|e| (e.ready)().now_or_never().is_none())
            .map(|e| Unsynced {
                kind: e.kind.clone(),
                last_error: e
                    .last_error
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone(),
            })
            .collect();
        out.sort_by(|a, b| a.kind.cmp(&b.kind));
        out
    }

    /// Waits up to `after` until every cache created so far holds its first list; else says which did not
    /// and what the server answered their watches.
    pub async fn ready_within(&self, after: Duration) -> Result<(), NotSynced> {
        match tokio::time::timeout(after, self.ready()).await {
            Ok(()) => Ok(()),
            Err(_) => Err(NotSynced {
                after,
                unsynced: self.unsynced(),
            }),
        }
    }

    /// Takes the watch loops of caches not started yet; the caller spawns them (and aborts them on shutdown).
    pub fn take_watches(&self) -> Vec<BoxFuture<'static, ()>> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .values_mut()
            .filter_map(|e| e.start.take())
            .collect()
    }
}

/// The entry map is keyed by `TypeId`, so the stored cache always has the requested type.
fn unreachable_cache<K: CachedKind>() -> Cache<K> {
    tracing::error!(kind = %K::kind(&()), "cache entry has the wrong type; using a detached cache");
    let writer = reflector::store::Writer::<K>::new_shared(1, ());
    Cache {
        store: writer.as_reader(),
        owners: Arc::default(),
        indexes: Indexes::default(),
        writer: Arc::new(Mutex::new(None)),
        changes: tokio::sync::broadcast::channel(1).0,
        options: Arc::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
    use kube::runtime::watcher::Event;

    fn cm(name: &str, owners: &[&str]) -> ConfigMap {
        let mut c = ConfigMap::default();
        c.metadata.name = Some(name.into());
        c.metadata.namespace = Some("ns".into());
        c.metadata.owner_references = Some(
            owners
                .iter()
                .map(|uid| OwnerReference {
                    uid: uid.to_string(),
                    ..Default::default()
                })
                .collect(),
        );
        c
    }

    #[test]
    fn the_owner_index_follows_applies_and_deletes() {
        let mut writer = reflector::store::Writer::<ConfigMap>::default();
        let store = writer.as_reader();
        let owners: OwnerIndex<ConfigMap> = Arc::default();
        let mut pending = None;
        let mut feed = |ev: Event<ConfigMap>| {
            events::index_update(&owners, &store, &mut pending, &ev);
            writer.apply_watcher_event(&ev);
        };
        feed(Event::Init);
        feed(Event::InitApply(cm("a", &["p1"])));
        feed(Event::InitApply(cm("b", &["p1", "p2"])));
        feed(Event::InitDone);
        let cache = Cache {
            store: store.clone(),
            owners: owners.clone(),
            indexes: Indexes::default(),
            writer: Arc::new(Mutex::new(None)),
            changes: tokio::sync::broadcast::channel(1).0,
            options: Arc::default(),
        };
        let names = |uid: &str| {
            let mut n: Vec<String> = cache.owned_by(uid).iter().map(|c| c.name_any()).collect();
            n.sort();
            n
        };
        assert_eq!(names("p1"), ["a", "b"]);
        assert_eq!(names("p2"), ["b"]);
        // b changes owners: p2 only.
        feed(Event::Apply(cm("b", &["p2"])));
        assert_eq!(names("p1"), ["a"]);
        assert_eq!(names("p2"), ["b"]);
        // Same owners again: nothing moves.
        feed(Event::Apply(cm("b", &["p2"])));
        assert_eq!(names("p2"), ["b"]);
        feed(Event::Apply(cm("c", &["p2"])));
        assert_eq!(names("p2"), ["b", "c"]);
        feed(Event::Delete(cm("b", &["p2"])));
        assert_eq!(names("p2"), ["c"]);
        feed(Event::Delete(cm("a", &[])));
        assert!(names("p1").is_empty());
        assert!(owners.read().unwrap().get("p1").is_none());
    }
}
