//! Shared caches: one watch and one store per kind (typed for parent kinds, compact for the others: see
//! [`Form`]), shared by every controller in the process, with an index
//! of objects by owner uid so a reconcile finds its children without scanning.

use std::any::{Any, TypeId};
use std::collections::{HashMap, HashSet};
use std::fmt::Debug;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use kube::runtime::reflector::{self, ReflectHandle, Store};
use kube::{Client, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::index::{IndexKeys, Indexes};

mod changes;
mod compact;
mod erased;
mod events;
mod lists;
mod namespaces;
mod objects;
mod options;
mod replayed;
mod served;
mod spec_kept;
mod sync;
mod watch;
mod wire;

#[cfg(any(test, feature = "testing"))]
pub(crate) use erased::frozen_store;

pub(crate) use changes::Publisher;
pub use changes::{Changes, RecvError, TryRecvError};
pub use lists::{ListStrategy, probe_list_strategy};
pub use objects::Form;
pub(crate) use objects::{Key, Objects, key_of};
pub use options::{CacheOptions, CacheOptionsError, LIST_PAGE, OWNER_LABEL};
pub(crate) use replayed::Replayed;
pub use served::NotServed;
pub use sync::{NotSynced, Unsynced, describe_watch_error};
pub(crate) use wire::Wire;

/// The annotation `kubectl apply` keeps; stripped from cached objects with `managedFields`.
pub const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// What a kind must be to be cached.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a Kubernetes resource kind the runtime can cache",
    label = "not a Kubernetes resource kind",
    note = "a kind is a `kube::Resource` with a static type (k8s-openapi's types such as `ConfigMap`, or the root type `#[derive(CustomResource)]` generates from a spec), and `Clone`, `Debug`, `serde::Serialize` and `serde::de::DeserializeOwned`; for a custom resource, derive `CustomResource` on its spec and name the generated type"
)]
pub trait CachedKind:
    Resource<DynamicType = ()> + Clone + Serialize + DeserializeOwned + Debug + Send + Sync + 'static
{
}

impl<K> CachedKind for K where
    K: Resource<DynamicType = ()>
        + Clone
        + Serialize
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static
{
}

/// The keys of the objects each owner uid owns.
type OwnerIndex = Arc<RwLock<HashMap<String, HashSet<Key>>>>;

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

/// The cache of one kind: its objects (typed or compact, see [`Form`]), the owner index and field indexes.
///
/// Read it through its own methods ([`get`](Self::get), [`owned_by`](Self::owned_by),
/// [`indexed`](Self::indexed), [`state`](Self::state), [`labelled`](Self::labelled), [`len`](Self::len)), which
/// work in both forms; a compact cache decodes a fresh value for each object a read returns.
pub struct Cache<K: CachedKind> {
    objects: Objects<K>,
    owners: OwnerIndex,
    indexes: Indexes<K>,
    writer: Arc<Mutex<Option<reflector::store::Writer<K>>>>,
    changes: Publisher<K>,
    options: Arc<RwLock<CacheOptions>>,
    replayed: Replayed,
}

impl<K: CachedKind> Clone for Cache<K> {
    fn clone(&self) -> Self {
        Self {
            objects: self.objects.clone(),
            owners: self.owners.clone(),
            indexes: self.indexes.clone(),
            writer: self.writer.clone(),
            changes: self.changes.clone(),
            options: self.options.clone(),
            replayed: self.replayed.clone(),
        }
    }
}

impl<K: CachedKind> Cache<K> {
    /// A cache holding `objects`, with no watch behind it.
    fn detached(objects: Objects<K>, owners: OwnerIndex) -> Self {
        Self {
            objects,
            owners,
            indexes: Indexes::default(),
            writer: Arc::new(Mutex::new(None)),
            // Small: nothing is broadcast but what tests send.
            changes: Publisher::with_capacity(16),
            options: Arc::default(),
            replayed: Replayed::default(),
        }
    }

    /// kube's reflector store of the kind, for what needs one: kube-runtime's `Controller` reads the parent
    /// kind's. Asked for before the caches start, it makes the cache [typed](Form::Typed); a
    /// [compact](Form::Compact) cache's store stays empty, so read a cache through its own methods otherwise.
    pub fn store(&self) -> &Store<K> {
        if self.objects.form().is_none() {
            self.objects.want_typed();
        }
        self.objects.store()
    }

    /// How the cache holds its objects: `None` until the caches start.
    pub fn form(&self) -> Option<Form> {
        self.objects.form()
    }

    /// An object by namespace and name.
    pub fn get(&self, namespace: Option<&str>, name: &str) -> Option<Arc<K>> {
        self.objects.get(&objects::key(namespace, name))
    }

    /// Every object the cache holds, in no particular order (a compact cache decodes them all: prefer a
    /// lookup where one serves).
    pub fn state(&self) -> Vec<Arc<K>> {
        self.objects.state()
    }

    /// The objects in `namespace` (every namespace when `None`) whose labels `keep` keeps; a compact cache
    /// decodes each object's labels, and whole only the objects kept.
    pub fn labelled(
        &self,
        namespace: Option<&str>,
        keep: impl Fn(&std::collections::BTreeMap<String, String>) -> bool,
    ) -> Vec<Arc<K>> {
        self.objects.labelled(namespace, keep)
    }

    /// How many objects the cache holds.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// Whether the cache holds no object.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The objects whose `ownerReferences` name `uid`.
    pub fn owned_by(&self, uid: &str) -> Vec<Arc<K>> {
        let keys: Vec<Key> = {
            let owners = self.owners.read().unwrap_or_else(|e| e.into_inner());
            owners
                .get(uid)
                .map(|keys| keys.iter().cloned().collect())
                .unwrap_or_default()
        };
        keys.iter().filter_map(|k| self.objects.get(k)).collect()
    }

    /// Adds the field index `name`, filing every object under the keys `keys` computes from it (a second index
    /// of the same name is ignored). The index follows the cache's watch from then on; objects already
    /// cached are filed at once.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use k8s_openapi::api::core::v1::Pod;
    /// # fn f(cache: kubewright::Cache<Pod>) {
    /// // Pods by the node they run on.
    /// cache.add_index("node", Arc::new(|p: &Pod| {
    ///     p.spec.iter().filter_map(|s| s.node_name.clone()).collect()
    /// }));
    /// let on_node_a = cache.indexed("node", "a");
    /// # }
    /// ```
    pub fn add_index(&self, name: &str, keys: IndexKeys<K>) {
        self.indexes.add(name, keys, &self.objects);
    }

    /// The objects the field index `name` files under `key` (none when there is no such index).
    pub fn indexed(&self, name: &str, key: &str) -> Vec<Arc<K>> {
        self.indexes
            .lookup(name, key)
            .iter()
            .filter_map(|k| self.objects.get(k))
            .collect()
    }

    /// A new subscription to the kind's changes through kube's reflector, for the controller's parent stream:
    /// makes the cache [typed](Form::Typed). `None` once the cache has started. Crate-private: kube's
    /// `ReflectHandle` is semver-exempt (`unstable-runtime`); authors subscribe with [`Cache::changes`].
    pub(crate) fn subscribe(&self) -> Option<ReflectHandle<K>> {
        let handle = self
            .writer
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .and_then(|w| w.subscribe());
        if handle.is_some() {
            self.objects.want_typed();
        }
        handle
    }

    /// Which of the kind's events replay a list rather than show a change (see [`Replayed`]).
    pub(crate) fn replayed(&self) -> &Replayed {
        &self.replayed
    }

    /// Broadcasts a change as the watch would (for tests of trigger streams).
    #[cfg(test)]
    pub(crate) fn broadcast(&self, change: Change<K>) {
        self.changes.send(change);
    }

    /// Every change from now on, including deletes (a subscriber more than 4,096 changes behind gets
    /// [`RecvError::Lagged`]).
    pub fn changes(&self) -> Changes<K> {
        self.changes.subscribe()
    }

    /// Waits until the first list has been stored.
    pub async fn ready(&self) {
        self.objects.ready().await;
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
    /// The resource (plural) and whether it is namespaced, as the kind's type declares them.
    plural: String,
    namespaced: bool,
    /// Whether a watch fills the cache (not a store given by a test).
    watched: bool,
    /// The highest resourceVersion the watch delivered (0 for a store with no watch).
    seen: Arc<AtomicU64>,
    /// Which events replay a list (the cache's own, shared).
    replayed: Replayed,
    /// The cache's options (its own, shared), for changes made without its type.
    options: Arc<RwLock<CacheOptions>>,
    /// What can be done with the entry without knowing its kind's type.
    erased: erased::Erased,
}

fn ready_fn<K: CachedKind>(
    objects: &Objects<K>,
) -> Box<dyn Fn() -> BoxFuture<'static, ()> + Send + Sync> {
    let objects = objects.clone();
    Box::new(move || {
        let objects = objects.clone();
        async move { objects.ready().await }.boxed()
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
    /// Whether each kind asked about has a `status` subresource, as discovery answered.
    statuses: Arc<Mutex<HashMap<TypeId, bool>>>,
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
            statuses: Arc::default(),
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
            let objects = Objects::new(writer.as_reader());
            // Each subscriber's queue grows as it fills; one more than `changes::CAPACITY` behind reconciles
            // every parent once (`Changed::Lagged`).
            let changes = Publisher::default();
            let cache = Cache {
                objects: objects.clone(),
                owners: Arc::default(),
                indexes: Indexes::<K>::default(),
                writer: Arc::new(Mutex::new(Some(writer))),
                changes,
                options: Arc::default(),
                replayed: Replayed::default(),
            };
            let namespaces = if is_namespaced::<K>() {
                self.namespaces.clone()
            } else {
                Arc::default()
            };
            let kind = K::kind(&()).into_owned();
            let last_error = LastError::default();
            let seen = Arc::new(AtomicU64::new(0));
            let replayed = cache.replayed.clone();
            let options = cache.options.clone();
            let start = watch::run(watch::Watch {
                cache: cache.clone(),
                client: self.client.clone(),
                namespaces,
                lists: self.lists.clone(),
                kind: kind.clone(),
                last_error: last_error.clone(),
                seen: seen.clone(),
            });
            Entry {
                cache: Box::new(cache),
                start: Some(start),
                ready: ready_fn(&objects),
                last_error,
                kind,
                api_version: K::api_version(&()).into_owned(),
                plural: K::plural(&()).into_owned(),
                namespaced: is_namespaced::<K>(),
                watched: true,
                seen,
                replayed,
                options,
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

    /// Which events of the cached kind `api_version`/`kind` replay a list (see [`Replayed`]); `None` when the
    /// kind is not cached.
    pub(crate) fn replayed_of(&self, api_version: &str, kind: &str) -> Option<Replayed> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .values()
            .find(|e| e.kind == kind && e.api_version == api_version)
            .map(|e| e.replayed.clone())
    }

    /// The kinds cached, e.g. for logs.
    pub fn kinds(&self) -> Vec<String> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let mut k: Vec<String> = entries.values().map(|e| e.kind.clone()).collect();
        k.sort();
        k
    }

    /// Adds (or replaces) the cache of `K` with one over `store`, with no watch behind it: for tests that run
    /// steps with no API server (see `kubewright::testing::store_from`). The owner index is built from the
    /// store's objects at this call; later changes to the store are not indexed.
    pub fn insert_store<K: CachedKind>(&self, store: Store<K>) -> Cache<K> {
        let mut index: HashMap<String, HashSet<Key>> = HashMap::new();
        for obj in store.state() {
            for r in obj.owner_references() {
                index
                    .entry(r.uid.clone())
                    .or_default()
                    .insert(objects::key_of(obj.as_ref()));
            }
        }
        let objects = Objects::typed(store);
        let cache = Cache::detached(objects.clone(), Arc::new(RwLock::new(index)));
        let kind = K::kind(&()).into_owned();
        let entry = Entry {
            cache: Box::new(cache.clone()),
            start: None,
            ready: ready_fn(&objects),
            last_error: LastError::default(),
            kind,
            api_version: K::api_version(&()).into_owned(),
            plural: K::plural(&()).into_owned(),
            namespaced: is_namespaced::<K>(),
            watched: false,
            seen: Arc::default(),
            replayed: cache.replayed.clone(),
            options: cache.options.clone(),
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

    /// Narrows the cache of the kind `api_version`/`kind` to the objects labelled with `selector` too (a
    /// sharded operator's member holds only its own parents and their children): added to the cache's label
    /// selector. `false` when no such cache exists; an error when it has started.
    pub(crate) fn narrow(
        &self,
        api_version: &str,
        kind: &str,
        selector: &str,
    ) -> Result<bool, CacheOptionsError> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let Some(entry) = entries
            .values()
            .find(|e| e.api_version == api_version && e.kind == kind)
        else {
            return Ok(false);
        };
        if entry.start.is_none() {
            return Err(CacheOptionsError::Started {
                kind: kind.to_string(),
            });
        }
        let mut options = entry.options.write().unwrap_or_else(|e| e.into_inner());
        *options = options.clone().and_labels(selector);
        Ok(true)
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
    Cache::detached(Objects::typed(writer.as_reader()), Arc::default())
}

#[cfg(test)]
mod tests;
