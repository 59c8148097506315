//! What a delete does to an object before anything is stored: remove it, or mark it deleting (with the
//! propagation finalizer it asks for) until its finalizers are gone.

use serde_json::{Value, json};

use super::metadata::{finalizers, is_deleting, meta_mut, set_finalizers_value};
use super::options::{FOREGROUND, ORPHAN, Propagation};
use crate::crd;
use crate::store::StorageKey;

/// What a delete does to an object, before anything is stored.
pub(super) enum Marking {
    /// No finalizers: the object goes.
    Remove,
    /// The object waits for its finalizers in this new state (`deletionTimestamp`, a propagation finalizer).
    Mark(Value),
    /// The object already waits and nothing changes.
    Unchanged,
}

pub(super) fn marked(
    obj: &Value,
    propagation: Propagation,
    now: &str,
    storage: &StorageKey,
) -> Marking {
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
