//! Deletion: finalizers, `deletionTimestamp`, propagation and removal from the store.

use std::collections::VecDeque;
use std::sync::Arc;

use serde_json::{Value, json};

use super::gc::{Task, run};
use super::metadata::{finalizers, is_deleting, meta, meta_mut, set_finalizers_value};
use super::{Deleted, FOREGROUND, ORPHAN, Propagation};
use crate::error::{ApiError, ApiResult};
use crate::registry::ResourceType;
use crate::store::{ObjKey, State, StorageKey};

/// Deletes an object by key, honouring finalizers and propagation.
pub fn delete(
    state: &mut State,
    rt: &ResourceType,
    key: &ObjKey,
    propagation: Option<Propagation>,
    preconditions: (Option<String>, Option<String>),
    dry_run: bool,
) -> ApiResult<Deleted> {
    let storage = rt.storage.clone();
    let Some(obj) = state.get(&storage, key) else {
        return Err(ApiError::not_found(rt.target(), &key.name));
    };
    let (uid, rv) = preconditions;
    if let Some(uid) = uid {
        let actual = meta(&obj)["uid"].as_str().unwrap_or("");
        if uid != actual {
            return Err(ApiError::conflict_with(
                rt.target(),
                &key.name,
                &format!(
                    "Precondition failed: UID in precondition: {uid}, UID in object meta: {actual}"
                ),
            ));
        }
    }
    if let Some(rv) = rv {
        let actual = meta(&obj)["resourceVersion"].as_str().unwrap_or("");
        if rv != actual {
            return Err(ApiError::conflict_with(
                rt.target(),
                &key.name,
                &format!(
                    "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {actual}"
                ),
            ));
        }
    }
    if dry_run {
        return Ok(Deleted::Pending(obj));
    }
    let propagation = propagation.unwrap_or(Propagation::Background);
    Ok(mark_deleted(state, &storage, key, propagation))
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
    let mut fins = finalizers(&obj);
    match propagation {
        Propagation::Foreground if !fins.iter().any(|f| f == FOREGROUND) => {
            fins.push(FOREGROUND.into())
        }
        Propagation::Orphan if !fins.iter().any(|f| f == ORPHAN) => fins.push(ORPHAN.into()),
        _ => {}
    }
    let is_namespace = storage.0.is_empty() && storage.1 == "namespaces";
    let is_crd = storage.0 == "apiextensions.k8s.io" && storage.1 == "customresourcedefinitions";
    let spec_finalizers = is_namespace
        && obj["spec"]["finalizers"]
            .as_array()
            .is_some_and(|a| !a.is_empty());
    if fins.is_empty() && !spec_finalizers {
        let gone = remove(state, storage, key);
        return Deleted::Gone(gone.unwrap_or(obj));
    }
    if !is_deleting(&obj) || finalizers(&obj) != fins {
        let mut next = (*obj).clone();
        set_finalizers_value(&mut next, &fins);
        let m = meta_mut(&mut next);
        if !m.contains_key("deletionTimestamp") {
            m.insert("deletionTimestamp".into(), json!(state.now));
            m.insert("deletionGracePeriodSeconds".into(), json!(0));
            // kube-apiserver bumps the generation when it sets deletionTimestamp.
            if let Some(g) = m.get("generation").and_then(Value::as_i64) {
                m.insert("generation".into(), json!(g + 1));
            }
        }
        if is_namespace {
            next["status"]["phase"] = json!("Terminating");
        }
        state.put(storage, next);
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
