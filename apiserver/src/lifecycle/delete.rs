//! Deletion: finalizers, `deletionTimestamp`, propagation and removal from the store.

use std::collections::VecDeque;
use std::sync::Arc;

use serde_json::{Value, json};

use super::gc::{Task, run};
use super::metadata::{finalizers, is_deleting, meta, meta_mut, set_finalizers_value};
use super::{Deleted, FOREGROUND, ORPHAN, Propagation};
use crate::crd;
use crate::error::{ApiError, ApiResult, Target};
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
    check_preconditions(rt, key, &obj, preconditions)?;
    let propagation = propagation.unwrap_or(Propagation::Background);
    if dry_run {
        // What the delete would answer, with nothing stored and nothing collected.
        return Ok(match marked(&obj, propagation, &state.now, &storage) {
            Marking::Remove => Deleted::Gone(obj),
            Marking::Mark(next) => Deleted::Pending(Arc::new(next)),
            Marking::Unchanged => Deleted::Pending(obj),
        });
    }
    Ok(mark_deleted(state, &storage, key, propagation))
}

/// kube-apiserver's preconditions check before a delete (`rest.BeforeDelete`): a Conflict on the kind (not the
/// resource) when the uid or resourceVersion differs.
fn check_preconditions(
    rt: &ResourceType,
    key: &ObjKey,
    obj: &Value,
    (uid, rv): (Option<String>, Option<String>),
) -> ApiResult<()> {
    let target = Target {
        group: &rt.group,
        resource: &rt.kind,
    };
    if let Some(uid) = uid {
        let actual = meta(obj)["uid"].as_str().unwrap_or("");
        if uid != actual {
            return Err(ApiError::conflict_with(
                target,
                &key.name,
                &format!(
                    "the UID in the precondition ({uid}) does not match the UID in record ({actual}). The object might have been deleted and then recreated"
                ),
            ));
        }
    }
    if let Some(rv) = rv {
        let actual = meta(obj)["resourceVersion"].as_str().unwrap_or("");
        if rv != actual {
            return Err(ApiError::conflict_with(
                target,
                &key.name,
                &format!(
                    "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion in record ({actual}). The object might have been modified"
                ),
            ));
        }
    }
    Ok(())
}

/// What a delete does to an object, before anything is stored.
enum Marking {
    /// No finalizers: the object goes.
    Remove,
    /// The object waits for its finalizers in this new state (`deletionTimestamp`, a propagation finalizer).
    Mark(Value),
    /// The object already waits and nothing changes.
    Unchanged,
}

fn marked(obj: &Value, propagation: Propagation, now: &str, storage: &StorageKey) -> Marking {
    let is_namespace = storage.0.is_empty() && storage.1 == "namespaces";
    if storage.0 == "apiextensions.k8s.io"
        && storage.1 == "customresourcedefinitions"
        && !is_deleting(obj)
    {
        let mut next = obj.clone();
        crd::status::mark_terminating(&mut next, now);
        return Marking::Mark(next);
    }
    let mut fins = finalizers(obj);
    match propagation {
        Propagation::Foreground if !fins.iter().any(|f| f == FOREGROUND) => {
            fins.push(FOREGROUND.into())
        }
        Propagation::Orphan if !fins.iter().any(|f| f == ORPHAN) => fins.push(ORPHAN.into()),
        _ => {}
    }
    let spec_finalizers = is_namespace
        && obj["spec"]["finalizers"]
            .as_array()
            .is_some_and(|a| !a.is_empty());
    if fins.is_empty() && !spec_finalizers {
        return Marking::Remove;
    }
    if is_deleting(obj) && finalizers(obj) == fins {
        return Marking::Unchanged;
    }
    let mut next = obj.clone();
    set_finalizers_value(&mut next, &fins);
    let m = meta_mut(&mut next);
    if !m.contains_key("deletionTimestamp") {
        m.insert("deletionTimestamp".into(), json!(now));
        // The namespace registry sets the timestamp alone.
        if !is_namespace {
            m.insert("deletionGracePeriodSeconds".into(), json!(0));
        }
        // kube-apiserver bumps the generation when it sets deletionTimestamp.
        if let Some(g) = m.get("generation").and_then(Value::as_i64) {
            m.insert("generation".into(), json!(g + 1));
        }
    }
    if is_namespace {
        next["status"]["phase"] = json!("Terminating");
    }
    Marking::Mark(next)
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
