//! Stored objects, the resourceVersion counter, watch history and watcher fan-out.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

use imbl::OrdMap;
use serde_json::Value;
use tokio::sync::mpsc;

use super::error::{ApiError, ApiResult};
use super::registry::{Registry, ResourceType};
use super::selector::{FieldSelector, LabelSelector};

pub(crate) mod key;

pub use key::ObjKey;

/// (group, plural) of a stored resource.
pub type StorageKey = (String, String);

/// The type of a watch event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// `ADDED`.
    Added,
    /// `MODIFIED`.
    Modified,
    /// `DELETED`.
    Deleted,
}

impl EventType {
    /// The wire name.
    pub fn as_str(&self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change in a collection's history.
#[derive(Debug, Clone)]
pub struct Event {
    /// The resourceVersion the change produced.
    pub rv: u64,
    /// What happened.
    pub kind: EventType,
    /// The object after the change (for deletes, the last state).
    pub object: Arc<Value>,
    /// The object before the change.
    pub prev: Option<Arc<Value>>,
}

/// What a watcher receives.
#[derive(Debug, Clone)]
pub enum WatchItem {
    /// An event in stored form.
    Event(EventType, Arc<Value>),
    /// A bookmark at a resourceVersion; `true` marks the end of initial events.
    Bookmark(u64, bool),
}

/// Which objects a watcher or list wants.
#[derive(Debug, Clone)]
pub struct Filter {
    /// Namespace, if restricted to one.
    pub namespace: Option<String>,
    /// Label selector.
    pub labels: LabelSelector,
    /// Field selector.
    pub fields: FieldSelector,
    /// The type the request addressed (for field selector paths).
    pub rtype: Arc<ResourceType>,
}

impl Filter {
    /// Whether a stored object passes.
    pub fn matches(&self, obj: &Value) -> bool {
        let meta = &obj["metadata"];
        if let Some(ns) = &self.namespace
            && meta["namespace"].as_str().unwrap_or("") != ns
        {
            return false;
        }
        self.labels.matches(meta["labels"].as_object())
            && (self.fields.is_empty()
                || self
                    .fields
                    .matches(|field| field_value(&self.rtype, obj, field)))
    }
}

/// The value of a field selector's field on a stored object.
pub fn field_value(rtype: &ResourceType, obj: &Value, field: &str) -> Option<String> {
    let path = match field {
        "metadata.name" | "metadata.namespace" => field.to_string(),
        other => rtype
            .field_selectors
            .iter()
            .find(|(f, _)| f == other)
            .map(|(_, p)| p.clone())?,
    };
    let mut cur = obj;
    for part in path.split('.') {
        cur = cur.get(part)?;
    }
    match cur {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// A registered watcher.
#[derive(Debug)]
pub struct Watcher {
    /// Identifies the watcher for removal.
    pub id: u64,
    /// Where its items go.
    pub tx: mpsc::UnboundedSender<WatchItem>,
    /// What it watches.
    pub filter: Filter,
}

/// All objects of one stored resource, with its history and watchers.
#[derive(Debug, Default)]
pub struct Collection {
    /// Objects by key, in key order (like etcd's key space).
    pub objects: OrdMap<ObjKey, Arc<Value>>,
    /// Recent changes, oldest first.
    pub history: VecDeque<Event>,
    /// Changes with a resourceVersion up to this one have been dropped from history.
    pub compacted: u64,
    /// The resourceVersion from which watches of a custom resource are served: kube-apiserver starts a custom
    /// resource's watch cache at the first request to it, from the version its first list reads (after that
    /// request's own write). `None` until the first request or write.
    pub started: Option<u64>,
    /// Current watchers.
    pub watchers: Vec<Watcher>,
    /// Snapshots kept for paginated lists, by the list's resourceVersion.
    pub snapshots: VecDeque<(u64, OrdMap<ObjKey, Arc<Value>>)>,
}

const SNAPSHOTS_KEPT: usize = 32;

impl Collection {
    /// Sends an event to every watcher whose filter it passes, translating selector moves into ADDED/DELETED.
    fn fan_out(&mut self, ev: &Event) {
        self.watchers.retain(|w| match translate(&w.filter, ev) {
            Some((k, object)) => w.tx.send(WatchItem::Event(k, object)).is_ok(),
            None => !w.tx.is_closed(),
        });
    }

    /// Keeps a snapshot for continuing a paginated list.
    pub fn keep_snapshot(&mut self, rv: u64) {
        if self.snapshots.iter().any(|(r, _)| *r == rv) {
            return;
        }
        self.snapshots.push_back((rv, self.objects.clone()));
        while self.snapshots.len() > SNAPSHOTS_KEPT {
            self.snapshots.pop_front();
        }
    }

    /// A kept snapshot.
    pub fn snapshot(&self, rv: u64) -> Option<OrdMap<ObjKey, Arc<Value>>> {
        self.snapshots
            .iter()
            .find(|(r, _)| *r == rv)
            .map(|(_, s)| s.clone())
    }

    /// The objects as they were at `rv`, rebuilt from history.
    pub fn at(&self, rv: u64, current: u64) -> ApiResult<OrdMap<ObjKey, Arc<Value>>> {
        if rv > current {
            return Err(too_large(rv, current));
        }
        if rv < self.compacted {
            return Err(too_old(rv, self.compacted));
        }
        let mut objects = self.objects.clone();
        for ev in self.history.iter().rev().take_while(|e| e.rv > rv) {
            let key = key_of(&ev.object);
            match &ev.prev {
                Some(prev) => {
                    objects.insert(key, prev.clone());
                }
                None => {
                    objects.remove(&key);
                }
            }
        }
        Ok(objects)
    }

    /// Marks the collection's watches served from `rv` on, unless an earlier request did.
    pub fn start(&mut self, rv: u64) {
        self.started.get_or_insert(rv);
    }

    /// 410 for a watch of a custom resource from a version before its watch cache started (kube-apiserver:
    /// `too old resource version: 213 (214)`).
    pub fn watchable_from(&self, rv: u64) -> ApiResult<()> {
        match self.started {
            Some(started) if rv < started => Err(ApiError::gone(format!(
                "too old resource version: {rv} ({started})"
            ))),
            _ => Ok(()),
        }
    }

    /// Events after `rv`, or 410 when some were dropped.
    pub fn events_since(&self, rv: u64) -> ApiResult<Vec<Event>> {
        if rv < self.compacted {
            return Err(too_old(rv, self.compacted));
        }
        let start = self.history.partition_point(|e| e.rv <= rv);
        Ok(self.history.iter().skip(start).cloned().collect())
    }
}

/// What a watcher with `filter` sees of `ev`: objects moving into or out of its selection are ADDED or DELETED.
/// An object that leaves the selection is DELETED as it was before the change (the state the watcher last
/// matched), at the change's resourceVersion, as kube-apiserver's watch cache sends it.
pub fn translate(filter: &Filter, ev: &Event) -> Option<(EventType, Arc<Value>)> {
    let now = filter.matches(&ev.object);
    let before = ev.prev.as_ref().map(|p| filter.matches(p)).unwrap_or(false);
    let kind = match ev.kind {
        EventType::Added if now => EventType::Added,
        EventType::Modified if now && before => EventType::Modified,
        EventType::Modified if now => EventType::Added,
        EventType::Modified if before => {
            let Some(prev) = ev.prev.as_ref() else {
                return Some((EventType::Deleted, ev.object.clone()));
            };
            let mut left = (**prev).clone();
            left["metadata"]["resourceVersion"] = ev.object["metadata"]["resourceVersion"].clone();
            return Some((EventType::Deleted, Arc::new(left)));
        }
        EventType::Deleted if before => EventType::Deleted,
        _ => return None,
    };
    Some((kind, ev.object.clone()))
}

/// 410 for a resourceVersion older than the kept history.
pub fn too_old(rv: u64, compacted: u64) -> ApiError {
    ApiError::gone(format!(
        "too old resource version: {rv} ({})",
        compacted + 1
    ))
}

/// 504 for a resourceVersion newer than the server's.
pub fn too_large(rv: u64, current: u64) -> ApiError {
    let mut e = ApiError::new(
        504,
        "Timeout",
        format!("Too large resource version: {rv}, current: {current}"),
    );
    e.details = Some(serde_json::json!({
        "causes": [{ "reason": "ResourceVersionTooLarge", "message": "Too large resource version" }],
        "retryAfterSeconds": 1
    }));
    e
}

/// The key of a stored object.
pub fn key_of(obj: &Value) -> ObjKey {
    ObjKey::new(
        obj["metadata"]["namespace"].as_str().unwrap_or(""),
        obj["metadata"]["name"].as_str().unwrap_or(""),
    )
}

/// Location of an object: its storage and key.
pub type Location = (StorageKey, ObjKey);

/// The whole stored state, behind the server's lock.
#[derive(Debug)]
pub struct State {
    /// The last resourceVersion handed out.
    pub rv: u64,
    /// Served types.
    pub registry: Registry,
    /// Objects by storage.
    pub collections: HashMap<StorageKey, Collection>,
    /// Where each uid lives.
    pub uids: HashMap<String, Location>,
    /// Owner uid to the objects that name it in `ownerReferences`.
    pub dependents: HashMap<String, BTreeSet<Location>>,
    /// How many changes each collection keeps for watches.
    pub history_limit: usize,
    /// Whether the garbage collector and namespace controller run.
    pub controllers: bool,
    /// Whether the server reports the workload controllers' status (see [`crate::workloads`]).
    pub workload_status: bool,
    /// The Job controller the server plays: its settings and the running Jobs (see [`crate::workloads::job`]).
    pub(crate) jobs: crate::workloads::job::Jobs,
    /// Source of uids and generated-name suffixes.
    pub ids: Ids,
    /// The current time for this request, RFC 3339.
    pub now: String,
    /// The in-process webhooks (`ApiServer::serve_webhook`), which CRDs' conversion webhooks may name.
    pub webhook_handlers: crate::registry::InProcessHandlers,
    next_watcher: u64,
}

/// Generates uids and `generateName` suffixes, randomly or from a seed.
#[derive(Debug)]
pub struct Ids {
    rng: rand::rngs::StdRng,
}

impl Ids {
    /// Ids from a seed (deterministic) or from entropy.
    pub fn new(seed: Option<u64>) -> Self {
        use rand::SeedableRng;
        let rng = match seed {
            Some(s) => rand::rngs::StdRng::seed_from_u64(s),
            None => rand::rngs::StdRng::from_os_rng(),
        };
        Self { rng }
    }

    /// A new uid.
    pub fn uid(&mut self) -> String {
        use rand::RngCore;
        let mut bytes = [0u8; 16];
        self.rng.fill_bytes(&mut bytes);
        uuid::Builder::from_random_bytes(bytes)
            .into_uuid()
            .hyphenated()
            .to_string()
    }

    /// A five-character suffix for `generateName`, from the alphabet the real server uses.
    pub fn suffix(&mut self) -> String {
        use rand::Rng;
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        (0..5)
            .map(|_| ALPHABET[self.rng.random_range(0..ALPHABET.len())] as char)
            .collect()
    }
}

impl State {
    /// An empty state with the given types.
    pub fn new(
        registry: Registry,
        history_limit: usize,
        controllers: bool,
        seed: Option<u64>,
    ) -> Self {
        Self {
            rv: 0,
            registry,
            collections: HashMap::new(),
            uids: HashMap::new(),
            dependents: HashMap::new(),
            history_limit,
            controllers,
            workload_status: true,
            jobs: Default::default(),
            ids: Ids::new(seed),
            now: String::new(),
            webhook_handlers: Default::default(),
            next_watcher: 0,
        }
    }

    /// The collection of a storage key, created on first use.
    pub fn collection(&mut self, storage: &StorageKey) -> &mut Collection {
        self.collections.entry(storage.clone()).or_default()
    }

    /// A stored object.
    pub fn get(&self, storage: &StorageKey, key: &ObjKey) -> Option<Arc<Value>> {
        self.collections.get(storage)?.objects.get(key).cloned()
    }

    /// The location of the object with this uid.
    pub fn locate(&self, uid: &str) -> Option<&Location> {
        self.uids.get(uid)
    }

    /// Stores `obj` (a new object or a new version), giving it the next resourceVersion, and notifies watchers.
    pub fn put(&mut self, storage: &StorageKey, mut obj: Value) -> Arc<Value> {
        self.rv += 1;
        let rv = self.rv;
        obj["metadata"]["resourceVersion"] = Value::String(rv.to_string());
        let obj = Arc::new(obj);
        let key = key_of(&obj);
        let prev = self
            .collection(storage)
            .objects
            .insert(key.clone(), obj.clone());
        if let Some(p) = &prev {
            self.unindex(storage, &key, p);
        }
        self.index(storage, &key, &obj);
        let kind = if prev.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        self.record(
            storage,
            Event {
                rv,
                kind,
                object: obj.clone(),
                prev,
            },
        );
        obj
    }

    /// Removes an object for good, notifying watchers. Returns its last state.
    pub fn remove(&mut self, storage: &StorageKey, key: &ObjKey) -> Option<Arc<Value>> {
        let prev = self.collection(storage).objects.remove(key)?;
        self.unindex(storage, key, &prev);
        self.rv += 1;
        let rv = self.rv;
        let mut last = (*prev).clone();
        last["metadata"]["resourceVersion"] = Value::String(rv.to_string());
        let last = Arc::new(last);
        self.record(
            storage,
            Event {
                rv,
                kind: EventType::Deleted,
                object: last.clone(),
                prev: Some(prev),
            },
        );
        Some(last)
    }

    fn record(&mut self, storage: &StorageKey, ev: Event) {
        let limit = self.history_limit;
        let coll = self.collection(storage);
        coll.start(ev.rv);
        coll.fan_out(&ev);
        coll.history.push_back(ev);
        while coll.history.len() > limit {
            if let Some(old) = coll.history.pop_front() {
                coll.compacted = old.rv;
            }
        }
    }

    fn index(&mut self, storage: &StorageKey, key: &ObjKey, obj: &Value) {
        let loc = (storage.clone(), key.clone());
        if let Some(uid) = obj["metadata"]["uid"].as_str() {
            self.uids.insert(uid.to_string(), loc.clone());
        }
        for owner in owner_uids(obj) {
            self.dependents
                .entry(owner)
                .or_default()
                .insert(loc.clone());
        }
    }

    fn unindex(&mut self, storage: &StorageKey, key: &ObjKey, obj: &Value) {
        let loc = (storage.clone(), key.clone());
        if let Some(uid) = obj["metadata"]["uid"].as_str() {
            self.uids.remove(uid);
        }
        for owner in owner_uids(obj) {
            if let Some(set) = self.dependents.get_mut(&owner) {
                set.remove(&loc);
                if set.is_empty() {
                    self.dependents.remove(&owner);
                }
            }
        }
    }

    /// Drops every collection's history: watches from any earlier resourceVersion get 410 Gone.
    pub fn compact(&mut self) {
        let rv = self.rv;
        for coll in self.collections.values_mut() {
            coll.history.clear();
            coll.compacted = rv;
            coll.snapshots.clear();
        }
    }

    /// Registers a watcher and returns its id.
    pub fn add_watcher(
        &mut self,
        storage: &StorageKey,
        tx: mpsc::UnboundedSender<WatchItem>,
        filter: Filter,
    ) -> u64 {
        self.next_watcher += 1;
        let id = self.next_watcher;
        self.collection(storage)
            .watchers
            .push(Watcher { id, tx, filter });
        id
    }

    /// Removes one watcher.
    pub fn remove_watcher(&mut self, id: u64) {
        for coll in self.collections.values_mut() {
            coll.watchers.retain(|w| w.id != id);
        }
    }

    /// Closes watchers: all of them, or those of one storage key.
    pub fn drop_watchers(&mut self, storage: Option<&StorageKey>) -> usize {
        let mut n = 0;
        for (k, coll) in self.collections.iter_mut() {
            if storage.is_none_or(|s| s == k) {
                n += coll.watchers.len();
                coll.watchers.clear();
            }
        }
        n
    }

    /// The number of open watchers.
    pub fn watcher_count(&self) -> usize {
        self.collections.values().map(|c| c.watchers.len()).sum()
    }
}

/// The uids an object's `ownerReferences` name.
pub fn owner_uids(obj: &Value) -> Vec<String> {
    obj["metadata"]["ownerReferences"]
        .as_array()
        .map(|refs| {
            refs.iter()
                .filter_map(|r| r["uid"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}
