//! Garbage collection, namespace termination and CRD cleanup, run as a queue of work inside the request.

use std::collections::VecDeque;
use std::sync::Arc;

use serde_json::Value;

use super::marking::{Marking, marked};
use super::metadata::{finalizers, is_deleting, meta, meta_mut, set_finalizers_value};
use super::options::{Deleted, FOREGROUND, ORPHAN, Propagation};
use crate::crd;
use crate::store::{ObjKey, State, StorageKey, owner_uids};

/// Deferred consequences of a change, processed until none are left.
#[derive(Debug)]
pub(super) enum Task {
    /// An object was removed: collect dependents, wake waiting owners, finish namespaces and CRDs.
    Removed(StorageKey, Arc<Value>),
    /// Re-examine an object being deleted: process foreground/orphan finalizers, remove it when done.
    Check(StorageKey, ObjKey),
    /// Delete an object whose owners are gone, if that is still true.
    Collect(StorageKey, ObjKey),
    /// Delete everything in a terminating namespace.
    EmptyNamespace(String),
    /// Delete every custom object of a terminating CRD.
    CrdCleanup(String),
}

pub(super) fn run(state: &mut State, mut work: VecDeque<Task>) {
    // Each task removes or changes an object at most once per pass; the bound only guards against a bug looping.
    let mut budget = 1_000_000usize;
    while let Some(task) = work.pop_front() {
        budget = budget.saturating_sub(1);
        if budget == 0 {
            tracing::error!("lifecycle work did not settle; stopping");
            break;
        }
        match task {
            Task::Removed(storage, obj) => removed(state, &storage, &obj, &mut work),
            Task::Check(storage, key) => check(state, &storage, &key, &mut work),
            Task::Collect(storage, key) => collect(state, &storage, &key, &mut work),
            Task::EmptyNamespace(ns) => empty_namespace(state, &ns, &mut work),
            Task::CrdCleanup(name) => crd_cleanup(state, &name, &mut work),
        }
    }
}

pub(super) fn removed(
    state: &mut State,
    storage: &StorageKey,
    obj: &Value,
    work: &mut VecDeque<Task>,
) {
    let uid = meta(obj)["uid"].as_str().unwrap_or("").to_string();
    if storage.0 == "apiextensions.k8s.io" && storage.1 == "customresourcedefinitions" {
        crd::unregister(state, obj);
    }
    if state.controllers {
        if let Some(deps) = state.dependents.get(&uid) {
            for (s, k) in deps.iter() {
                work.push_back(Task::Collect(s.clone(), k.clone()));
            }
        }
        // Owners waiting in foreground deletion for this dependent.
        for owner in owner_uids(obj) {
            if let Some((s, k)) = state.locate(&owner).cloned() {
                work.push_back(Task::Check(s, k));
            }
        }
        let ns = meta(obj)["namespace"].as_str().unwrap_or("");
        if !ns.is_empty() {
            let ns_storage: StorageKey = (String::new(), "namespaces".into());
            if let Some(nsobj) = state.get(&ns_storage, &ObjKey::new("", ns))
                && is_deleting(&nsobj)
            {
                work.push_back(Task::Check(ns_storage, ObjKey::new("", ns)));
            }
        }
    }
    // CRD cleanup is part of the API server itself, not a controller.
    if let Some(crd_name) = crd::crd_of_storage(state, storage) {
        work.push_back(Task::CrdCleanup(crd_name));
    }
}

pub(super) fn update_stored(
    state: &mut State,
    storage: &StorageKey,
    key: &ObjKey,
    f: impl FnOnce(&mut Value),
) -> Option<Arc<Value>> {
    let obj = state.get(storage, key)?;
    let mut next = (*obj).clone();
    f(&mut next);
    if next == *obj {
        return Some(obj);
    }
    Some(state.put(storage, next))
}

pub(super) fn check(
    state: &mut State,
    storage: &StorageKey,
    key: &ObjKey,
    work: &mut VecDeque<Task>,
) {
    let Some(obj) = state.get(storage, key) else {
        return;
    };
    if !is_deleting(&obj) {
        return;
    }
    let uid = meta(&obj)["uid"].as_str().unwrap_or("").to_string();
    let mut fins = finalizers(&obj);
    if state.controllers && fins.iter().any(|f| f == ORPHAN) {
        let deps: Vec<_> = state
            .dependents
            .get(&uid)
            .map(|d| d.iter().cloned().collect())
            .unwrap_or_default();
        for (s, k) in deps {
            update_stored(state, &s, &k, |d| {
                if let Some(refs) = d["metadata"]["ownerReferences"].as_array_mut() {
                    refs.retain(|r| r["uid"].as_str() != Some(&uid));
                    if refs.is_empty() {
                        meta_mut(d).remove("ownerReferences");
                    }
                }
            });
        }
        fins.retain(|f| f != ORPHAN);
    }
    if state.controllers && fins.iter().any(|f| f == FOREGROUND) {
        let deps: Vec<_> = state
            .dependents
            .get(&uid)
            .map(|d| d.iter().cloned().collect())
            .unwrap_or_default();
        let mut blocking = false;
        for (s, k) in deps {
            let Some(dep) = state.get(&s, &k) else {
                continue;
            };
            let blocks = meta(&dep)["ownerReferences"]
                .as_array()
                .is_some_and(|refs| {
                    refs.iter().any(|r| {
                        r["uid"].as_str() == Some(&uid)
                            && r["blockOwnerDeletion"].as_bool() == Some(true)
                    })
                });
            if !is_deleting(&dep) {
                mark_deleted(state, &s, &k, Propagation::Foreground);
            }
            if blocks && state.get(&s, &k).is_some() {
                blocking = true;
            }
        }
        if !blocking {
            fins.retain(|f| f != FOREGROUND);
        }
    }
    let is_namespace = storage.0.is_empty() && storage.1 == "namespaces";
    if is_namespace && state.controllers && namespace_is_empty(state, &key.name) {
        update_stored(state, storage, key, |n| {
            if let Some(m) = n["spec"].as_object_mut() {
                m.remove("finalizers");
            }
        });
    }
    let Some(current) = state.get(storage, key) else {
        return;
    };
    if finalizers(&current) != fins {
        update_stored(state, storage, key, |o| set_finalizers_value(o, &fins));
    }
    let Some(current) = state.get(storage, key) else {
        return;
    };
    let spec_fins = is_namespace
        && current["spec"]["finalizers"]
            .as_array()
            .is_some_and(|a| !a.is_empty());
    if finalizers(&current).is_empty()
        && !spec_fins
        && let Some(gone) = state.remove(storage, key)
    {
        work.push_back(Task::Removed(storage.clone(), gone));
    }
}

pub(super) fn collect(
    state: &mut State,
    storage: &StorageKey,
    key: &ObjKey,
    work: &mut VecDeque<Task>,
) {
    let Some(obj) = state.get(storage, key) else {
        return;
    };
    let owners = owner_uids(&obj);
    if owners.is_empty() {
        return;
    }
    let alive: Vec<&String> = owners
        .iter()
        .filter(|u| state.locate(u).is_some())
        .collect();
    if !alive.is_empty() {
        if alive.len() < owners.len() {
            let alive: Vec<String> = alive.into_iter().cloned().collect();
            update_stored(state, storage, key, |d| {
                if let Some(refs) = d["metadata"]["ownerReferences"].as_array_mut() {
                    refs.retain(|r| {
                        r["uid"]
                            .as_str()
                            .is_some_and(|u| alive.iter().any(|a| a == u))
                    });
                }
            });
        }
        return;
    }
    if is_deleting(&obj) {
        return;
    }
    // Dependents of an owner that was deleted in the foreground go the same way.
    let _ = work;
    mark_deleted(state, storage, key, Propagation::Background);
}

pub(super) fn namespace_is_empty(state: &State, ns: &str) -> bool {
    state.collections.iter().all(|((g, p), c)| {
        (g.is_empty() && p == "namespaces") || !c.objects.keys().any(|k| k.namespace == ns)
    })
}

pub(super) fn empty_namespace(state: &mut State, ns: &str, work: &mut VecDeque<Task>) {
    let mut targets = Vec::new();
    for (storage, coll) in state.collections.iter() {
        if storage.0.is_empty() && storage.1 == "namespaces" {
            continue;
        }
        let start = ObjKey::new(ns, "");
        for (k, o) in coll.objects.range(start..) {
            if k.namespace != ns {
                break;
            }
            if !is_deleting(o) {
                targets.push((storage.clone(), k.clone()));
            }
        }
    }
    for (s, k) in targets {
        mark_deleted(state, &s, &k, Propagation::Background);
    }
    work.push_back(Task::Check(
        (String::new(), "namespaces".into()),
        ObjKey::new("", ns),
    ));
}

pub(super) fn crd_cleanup(state: &mut State, name: &str, work: &mut VecDeque<Task>) {
    let crd_storage: StorageKey = (
        "apiextensions.k8s.io".into(),
        "customresourcedefinitions".into(),
    );
    let key = ObjKey::new("", name);
    let Some(crd_obj) = state.get(&crd_storage, &key) else {
        return;
    };
    if !is_deleting(&crd_obj) {
        return;
    }
    let Some(storage) = crd::storage_of(&crd_obj) else {
        return;
    };
    let targets: Vec<ObjKey> = state
        .collections
        .get(&storage)
        .map(|c| {
            c.objects
                .iter()
                .filter(|(_, o)| !is_deleting(o))
                .map(|(k, _)| k.clone())
                .collect()
        })
        .unwrap_or_default();
    for k in targets {
        mark_deleted(state, &storage, &k, Propagation::Background);
    }
    let empty = state
        .collections
        .get(&storage)
        .is_none_or(|c| c.objects.is_empty());
    if empty {
        update_stored(state, &crd_storage, &key, |o| {
            let f: Vec<String> = finalizers(o)
                .into_iter()
                .filter(|f| f != crd::CLEANUP_FINALIZER)
                .collect();
            set_finalizers_value(o, &f);
        });
        if let Some(current) = state.get(&crd_storage, &key)
            && finalizers(&current).is_empty()
            && let Some(gone) = state.remove(&crd_storage, &key)
        {
            work.push_back(Task::Removed(crd_storage, gone));
        }
    }
}

/// Starts deleting a stored object and runs whatever that triggers.
pub(super) fn mark_deleted(
    state: &mut State,
    storage: &StorageKey,
    key: &ObjKey,
    propagation: Propagation,
) -> Deleted {
    let Some(obj) = state.get(storage, key) else {
        return Deleted::Gone(Arc::new(Value::Null));
    };
    let is_namespace = storage.0.is_empty() && storage.1 == "namespaces";
    let is_crd = storage.0 == "apiextensions.k8s.io" && storage.1 == "customresourcedefinitions";
    let now = state.now.clone();
    match marked(&obj, propagation, &now, storage) {
        Marking::Remove => {
            let gone = remove(state, storage, key);
            return Deleted::Gone(gone.unwrap_or(obj));
        }
        Marking::Mark(next) => {
            state.put(storage, next);
        }
        Marking::Unchanged => {}
    }
    let mut work = VecDeque::new();
    if is_crd {
        work.push_back(Task::CrdCleanup(key.name.clone()));
    }
    if state.controllers {
        if is_namespace {
            work.push_back(Task::EmptyNamespace(key.name.clone()));
        }
        work.push_back(Task::Check(storage.clone(), key.clone()));
    }
    run(state, work);
    match state.get(storage, key) {
        Some(o) => Deleted::Pending(o),
        None => Deleted::Gone(obj),
    }
}

/// Removes an object from storage and queues the consequences.
pub(super) fn remove(state: &mut State, storage: &StorageKey, key: &ObjKey) -> Option<Arc<Value>> {
    let gone = state.remove(storage, key)?;
    let mut work = VecDeque::new();
    work.push_back(Task::Removed(storage.clone(), gone.clone()));
    run(state, work);
    Some(gone)
}
