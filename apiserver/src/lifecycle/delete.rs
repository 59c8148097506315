//! Deletion: finalizers, `deletionTimestamp`, propagation and removal from the store.

use std::sync::Arc;

use serde_json::Value;

use super::gc::mark_deleted;
use super::marking::{Marking, marked};
use super::metadata::meta;
use super::options::{Deleted, Propagation};
use crate::error::{ApiError, ApiResult, Target};
use crate::registry::ResourceType;
use crate::store::{ObjKey, State};

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
