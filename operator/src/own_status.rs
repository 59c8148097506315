//! The statuses a controller wrote that its cache may not show yet, so a pass on a parent the cache has not
//! caught up with starts from the status the controller last wrote, not from an older cached one.
//!
//! Without it, a pass triggered (by a child's event, say) before the parent's watch delivers the status the
//! previous pass wrote compares the computed status with the stale one, finds them different, and writes
//! again: a second status write for one change on a fast cluster, a `409 Conflict` on the stale
//! `resourceVersion` on a slower one.

use std::sync::Mutex;

use kube::Resource;
use serde::Serialize;
use serde_json::Value;

use crate::answer::Answer;
use crate::by_write::ByWrite;

/// A status this controller wrote: the parent's `resourceVersion` after the write, and the status.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WrittenStatus {
    pub(crate) resource_version: String,
    pub(crate) status: Value,
}

/// A written status as held until the cache shows it: its JSON text (a `Value` takes several times the bytes,
/// and a busy API server can leave thousands of statuses unconfirmed for seconds).
#[derive(Debug)]
struct Held {
    resource_version: Box<str>,
    status: Box<str>,
}

/// The last status written per parent uid, until the cache shows it.
#[derive(Debug, Default)]
pub(crate) struct OwnStatus {
    written: Mutex<ByWrite<Held>>,
}

/// Whether a cached `resourceVersion` shows a write that answered `written`. Resource versions are opaque,
/// but etcd's are numbers; when either is not, the cache is trusted.
fn caught_up(cached: &str, written: &str) -> bool {
    crate::versions::at_least(cached, written).unwrap_or(true)
}

impl OwnStatus {
    /// The status last written to `parent` when the cached copy is older than that write; forgets the write
    /// once the cache shows it (or anything newer).
    pub(crate) fn newer_than_cached<P: Resource>(&self, parent: &P) -> Option<WrittenStatus> {
        let meta = parent.meta();
        let uid = meta.uid.as_ref()?;
        let mut written = self.written.lock().unwrap_or_else(|e| e.into_inner());
        let held = written.get(uid.as_str())?;
        if caught_up(
            meta.resource_version.as_deref().unwrap_or_default(),
            &held.resource_version,
        ) {
            written.remove(uid.as_str());
            return None;
        }
        Some(WrittenStatus {
            resource_version: held.resource_version.to_string(),
            status: serde_json::from_str(&held.status).ok()?,
        })
    }

    /// Forgets the status last written to `parent` once `parent` (as the cache shows it) shows that write.
    pub(crate) fn seen<P: Resource>(&self, parent: &P) {
        let meta = parent.meta();
        let Some(uid) = meta.uid.as_ref() else { return };
        let mut written = self.written.lock().unwrap_or_else(|e| e.into_inner());
        let shown = written.get(uid.as_str()).is_some_and(|w| {
            caught_up(
                meta.resource_version.as_deref().unwrap_or_default(),
                &w.resource_version,
            )
        });
        if shown {
            written.remove(uid.as_str());
        }
    }

    /// Remembers the status written to the parent `uid`, from the API server's answer.
    pub(crate) fn wrote(&self, uid: &str, answer: &Answer) {
        let Some((version, status)) = answer.status() else {
            return;
        };
        self.written
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                uid,
                Held {
                    resource_version: version.into(),
                    status,
                },
            );
    }

    /// Forgets the parent `uid` (it was deleted).
    pub(crate) fn forget(&self, uid: &str) {
        let mut written = self.written.lock().unwrap_or_else(|e| e.into_inner());
        written.remove(uid);
    }

    /// Forgets every parent whose uid `keep` rejects.
    pub(crate) fn retain(&self, keep: impl Fn(&str) -> bool) {
        let mut written = self.written.lock().unwrap_or_else(|e| e.into_inner());
        written.retain(|uid, _| keep(uid));
    }

    /// How many parents have a write the cache does not show yet.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.written.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

/// The stored status and the computed one as JSON values, when their content differs. Equal text is equal
/// content, and the common case (a converged pass), which so reads no `Value`; different text may still be the
/// same content (a map printed in another order), which the values decide.
pub(crate) fn changed_status<S: Serialize>(
    before: &S,
    after: &S,
) -> crate::error::Result<Option<(Value, Value)>> {
    let (before, after) = (
        serde_json::to_string(before)?,
        serde_json::to_string(after)?,
    );
    if before == after {
        return Ok(None);
    }
    let before: Value = serde_json::from_str(&before)?;
    let after: Value = serde_json::from_str(&after)?;
    Ok((before != after).then_some((before, after)))
}

/// `after`, with `null` for every field `before` has and `after` lacks (in nested objects too), so that a JSON
/// merge patch of `after` over `before` gives exactly `after`.
pub(crate) fn with_removals(before: &Value, mut after: Value) -> Value {
    if let (Value::Object(b), Value::Object(a)) = (before, &mut after) {
        for (key, old) in b {
            match a.get_mut(key) {
                None => {
                    a.insert(key.clone(), Value::Null);
                }
                Some(new) => *new = with_removals(old, std::mem::take(new)),
            }
        }
    }
    after
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use serde_json::json;

    fn cached(version: &str) -> ConfigMap {
        let mut cm = ConfigMap::default();
        cm.metadata.uid = Some("u".into());
        cm.metadata.resource_version = Some(version.into());
        cm
    }

    #[test]
    fn a_stale_cache_gets_the_written_status_until_it_catches_up() {
        let own = OwnStatus::default();
        own.wrote(
            "u",
            &Answer::of(&json!({"metadata": {"resourceVersion": "7"}, "status": {"a": 1}}))
                .unwrap(),
        );
        let recalled = own.newer_than_cached(&cached("5")).expect("newer");
        assert_eq!(recalled.resource_version, "7");
        assert_eq!(recalled.status, json!({"a": 1}));
        assert!(own.newer_than_cached(&cached("7")).is_none());
        assert_eq!(own.len(), 0, "forgotten once seen");
    }

    #[test]
    fn a_newer_cached_parent_wins() {
        let own = OwnStatus::default();
        own.wrote(
            "u",
            &Answer::of(&json!({"metadata": {"resourceVersion": "7"}, "status": {}})).unwrap(),
        );
        assert!(own.newer_than_cached(&cached("9")).is_none());
        assert_eq!(own.len(), 0);
    }

    #[test]
    fn deleted_parents_are_forgotten() {
        let own = OwnStatus::default();
        let answer =
            Answer::of(&json!({"metadata": {"resourceVersion": "7"}, "status": {}})).unwrap();
        own.wrote("a", &answer);
        own.wrote("b", &answer);
        own.wrote("c", &answer);
        own.forget("a");
        assert_eq!(own.len(), 2);
        own.retain(|uid| uid == "b");
        assert_eq!(own.len(), 1);
    }
}
