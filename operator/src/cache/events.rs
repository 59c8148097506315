//! What each watch event does beside the store: the owner index, the highest resourceVersion seen, and the
//! changes broadcast to controllers' triggers.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use kube::ResourceExt;
use kube::runtime::reflector::{ObjectRef, Store};
use kube::runtime::watcher::Event;

use super::objects::{Key, Objects, key_of};
use super::spec_kept::SpecKept;
use super::{CachedKind, Change, OwnerIndex, Publisher};

/// Keeps the owner index in step with the objects, and notes the updates that kept their object's spec in
/// `spec_kept`. Runs before the objects take `ev`, so `objects` still hold the previous version of an applied
/// object.
pub(super) fn index_update<K: CachedKind>(
    owners: &OwnerIndex,
    objects: &Objects<K>,
    spec_kept: &SpecKept,
    pending: &mut Option<HashMap<String, HashSet<Key>>>,
    ev: &Event<K>,
) {
    let refs_of =
        |o: &K| -> Vec<String> { o.owner_references().iter().map(|r| r.uid.clone()).collect() };
    let remove = |map: &mut HashMap<String, HashSet<Key>>, uids: &[String], r: &Key| {
        for uid in uids {
            if let Some(set) = map.get_mut(uid) {
                set.remove(r);
                if set.is_empty() {
                    map.remove(uid);
                }
            }
        }
    };
    match ev {
        Event::Init => *pending = Some(HashMap::new()),
        Event::InitApply(o) => {
            if let Some(map) = pending.as_mut() {
                for uid in refs_of(o) {
                    map.entry(uid).or_default().insert(key_of(o));
                }
            }
        }
        Event::InitDone => {
            if let Some(map) = pending.take() {
                *owners.write().unwrap_or_else(|e| e.into_inner()) = map;
            }
        }
        Event::Apply(o) => {
            let r = key_of(o);
            let uids = refs_of(o);
            // Owner references rarely change: compare with the previous version (a lookup, not a scan of the
            // whole index, which made every event O(objects)). The same partial decode tells whether the
            // update kept the spec.
            let previous = objects.previous(&r).unwrap_or_default();
            let meta = o.meta();
            if previous.generation.is_some()
                && previous.generation == meta.generation
                && !previous.deleting
                && meta.deletion_timestamp.is_none()
                && previous.owner_uids == uids
            {
                spec_kept.note(meta.resource_version.as_deref());
            }
            let known = previous.owner_uids;
            if known != uids {
                let mut map = owners.write().unwrap_or_else(|e| e.into_inner());
                remove(&mut map, &known, &r);
                for uid in uids {
                    map.entry(uid).or_default().insert(r.clone());
                }
            }
        }
        Event::Delete(o) => {
            let r = key_of(o);
            let mut uids = refs_of(o);
            uids.extend(objects.previous(&r).unwrap_or_default().owner_uids);
            let mut map = owners.write().unwrap_or_else(|e| e.into_inner());
            remove(&mut map, &uids, &r);
        }
    }
}

/// Records the highest resourceVersion an event carried (resourceVersions that are not numbers are skipped:
/// they are opaque to clients, and only tests that know their server compare them).
pub(super) fn note_seen<K: CachedKind>(seen: &AtomicU64, ev: &Event<K>) {
    let obj = match ev {
        Event::Apply(o) | Event::Delete(o) | Event::InitApply(o) => o,
        Event::Init | Event::InitDone => return,
    };
    if let Some(rv) = obj.resource_version().and_then(|rv| rv.parse::<u64>().ok()) {
        seen.fetch_max(rv, Ordering::AcqRel);
    }
}

/// Tells subscribers what changed; a re-list reports objects that vanished during a watch gap as deleted.
pub(super) fn broadcast<K: CachedKind>(
    changes: &Publisher<K>,
    objects: &Objects<K>,
    listed: &mut Option<HashSet<Key>>,
    ev: &Event<K>,
) {
    let send = |c: Change<K>| changes.send(c);
    match ev {
        Event::Init => *listed = Some(HashSet::new()),
        Event::InitApply(o) => {
            if let Some(l) = listed.as_mut() {
                l.insert(key_of(o));
            }
            send(Change::Applied(Arc::new(o.clone())));
        }
        Event::InitDone => {
            if let Some(l) = listed.take() {
                for gone in objects.select(|k| !l.contains(k)) {
                    send(Change::Deleted(gone));
                }
            }
        }
        // Sent once the objects hold it (see `broadcast_applied`, and the compact writer's caller).
        Event::Apply(_) => {}
        Event::Delete(o) => send(Change::Deleted(Arc::new(o.clone()))),
    }
}

/// Tells subscribers of an object the watch applied, once a typed store holds it: the change shares the store's
/// copy instead of a copy of its own (a second copy of every object changed lived in the channel until every
/// subscriber had read it).
pub(super) fn broadcast_applied<K: CachedKind>(
    changes: &Publisher<K>,
    store: &Store<K>,
    ev: &Event<K>,
) {
    if let Event::Apply(o) = ev {
        let stored = store
            .get(&ObjectRef::from_obj(o))
            .unwrap_or_else(|| Arc::new(o.clone()));
        changes.send(Change::Applied(stored));
    }
}
