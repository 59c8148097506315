//! What a child step wrote that its cache may not show yet, so that a write is reported by what the API
//! answered rather than by a cache that lags.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use kube::Resource;
use serde::Serialize;

use super::announce::Mutation;

/// How many writes are remembered at most (a safety net: an entry goes as soon as the cache shows the write).
const CAPACITY: usize = 16_384;

/// The resource version and content each child had after this step's last write to it, by uid, until the
/// cache shows it.
///
/// When a pass runs before the cache has seen the child the previous pass created, the child is applied again
/// (a no-op): the API answers with the object of the previous write (or a later one, if a controller wrote its
/// status since), and the step reports the child unchanged instead of announcing it as created again.
#[derive(Debug, Default)]
pub(crate) struct Written {
    recent: Mutex<Recent>,
}

#[derive(Debug, Default)]
struct Recent {
    versions: HashMap<String, (String, u64)>,
    order: VecDeque<String>,
    /// The children this step deleted, by uid, with the resource version the cache showed then.
    deleted: HashMap<String, String>,
    deleted_order: VecDeque<String>,
}

impl Written {
    /// What an apply did to a child, from the object the API answered with: `None` when it changed nothing
    /// (the answer is this step's own last write), `Created` when the child was neither cached nor written
    /// before, `Updated` otherwise. Remembers the answer.
    pub(crate) fn applied<C: Resource + Serialize>(
        &self,
        cached: bool,
        answer: &C,
    ) -> Option<Mutation> {
        let meta = answer.meta();
        let (Some(uid), Some(version)) = (meta.uid.clone(), meta.resource_version.clone()) else {
            // No server answered (commands only recorded): judge by the cache.
            return Some(if cached {
                Mutation::Updated
            } else {
                Mutation::Created
            });
        };
        let content = content_hash(answer);
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        let before = recent.versions.get(&uid).cloned();
        let mutation = match &before {
            // The same write, or one that only others changed since (a status, say): this apply did nothing.
            Some((v, c)) if *v == version || *c == content => None,
            Some(_) => Some(Mutation::Updated),
            None if cached => Some(Mutation::Updated),
            None => Some(Mutation::Created),
        };
        if before.is_none() {
            // Entries removed by `seen` keep their place here until pushed out, so this stays bounded.
            recent.order.push_back(uid.clone());
            while recent.order.len() > CAPACITY {
                if let Some(old) = recent.order.pop_front() {
                    recent.versions.remove(&old);
                }
            }
        }
        recent.versions.insert(uid, (version, content));
        mutation
    }

    /// Remembers that this step deleted `child` (as the cache showed it), so that a pass on a cache that has not
    /// seen the deletion yet does not delete it again ([`Written::delete_pending`]).
    pub(crate) fn deleted<C: Resource>(&self, child: &C) {
        let meta = child.meta();
        let (Some(uid), Some(version)) = (meta.uid.clone(), meta.resource_version.clone()) else {
            return;
        };
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        if recent.deleted.insert(uid.clone(), version).is_none() {
            recent.deleted_order.push_back(uid);
            while recent.deleted_order.len() > CAPACITY {
                if let Some(old) = recent.deleted_order.pop_front() {
                    recent.deleted.remove(&old);
                }
            }
        }
    }

    /// Whether `cached` is a child this step already deleted, as the cache showed it before the deletion: the
    /// cache lags behind the delete, and the child is on its way out.
    pub(crate) fn delete_pending<C: Resource>(&self, cached: &C) -> bool {
        let meta = cached.meta();
        let (Some(uid), Some(version)) = (&meta.uid, &meta.resource_version) else {
            return false;
        };
        let recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        recent.deleted.get(uid) == Some(version)
    }

    /// Forgets a child once the cache shows this step's last write to it (or shows it deleted).
    pub(crate) fn seen<C: Resource>(&self, cached: &C) {
        let meta = cached.meta();
        let Some(uid) = &meta.uid else { return };
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        let caught_up = match (recent.versions.get(uid), &meta.resource_version) {
            (Some((written, _)), Some(cached)) => {
                written == cached
                    // Resource versions are opaque, but etcd's are numbers: a newer one shows the write too.
                    || matches!((written.parse::<u64>(), cached.parse::<u64>()), (Ok(w), Ok(c)) if c > w)
            }
            _ => false,
        };
        if caught_up {
            // Its place in `order` goes when the capacity pushes it out.
            recent.versions.remove(uid);
        }
    }
}

/// A hash of what an apply can change: the object without its status and the metadata the server keeps.
fn content_hash<C: Serialize>(object: &C) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut value = serde_json::to_value(object).unwrap_or_default();
    if let Some(o) = value.as_object_mut() {
        o.remove("status");
        if let Some(m) = o.get_mut("metadata").and_then(|m| m.as_object_mut()) {
            m.remove("resourceVersion");
            m.remove("managedFields");
        }
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    value.to_string().hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    fn answer(uid: &str, version: &str, text: &str) -> ConfigMap {
        let mut cm = ConfigMap::default();
        cm.metadata.uid = Some(uid.into());
        cm.metadata.resource_version = Some(version.into());
        cm.data = Some([("text".to_string(), text.to_string())].into());
        cm
    }

    #[test]
    fn a_repeated_apply_on_a_lagging_cache_is_no_change() {
        let written = Written::default();
        assert_eq!(
            written.applied(false, &answer("u", "1", "a")),
            Some(Mutation::Created)
        );
        assert_eq!(written.applied(false, &answer("u", "1", "a")), None);
        // Someone else wrote since (a new version, the same content): still nothing this apply did.
        assert_eq!(written.applied(false, &answer("u", "2", "a")), None);
        assert_eq!(
            written.applied(false, &answer("u", "3", "b")),
            Some(Mutation::Updated)
        );
        written.seen(&answer("u", "3", "b"));
        assert_eq!(
            written.applied(true, &answer("u", "4", "c")),
            Some(Mutation::Updated)
        );
    }

    #[test]
    fn a_delete_is_pending_until_the_cache_moves_on() {
        let written = Written::default();
        let cached = answer("u", "5", "a");
        assert!(!written.delete_pending(&cached));
        written.deleted(&cached);
        assert!(written.delete_pending(&cached));
        // The cache shows a newer version (its deletion, say): it is not the copy that was deleted.
        assert!(!written.delete_pending(&answer("u", "6", "a")));
        assert!(!written.delete_pending(&answer("v", "5", "a")));
    }

    #[test]
    fn without_an_answer_the_cache_decides() {
        let written = Written::default();
        assert_eq!(
            written.applied(false, &ConfigMap::default()),
            Some(Mutation::Created)
        );
        assert_eq!(
            written.applied(true, &ConfigMap::default()),
            Some(Mutation::Updated)
        );
    }
}
