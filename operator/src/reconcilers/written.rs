//! What a child step wrote that its cache may not show yet, so that a write is reported by what the API
//! answered rather than by a cache that lags.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

use kube::Resource;
use serde_json::Value;

use super::announce::Mutation;

/// How many writes are remembered at most (a safety net: an entry goes as soon as the cache shows the write).
const CAPACITY: usize = 16_384;

/// The resource version and content each child had after the last write of a pass to it, by uid, until the
/// cache shows it. One is shared by every step of a reconciler (uids are unique), so the controller forgets a
/// write when the child's watch event shows it, whether or not a pass runs then.
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
    pub(crate) fn applied(&self, cached: bool, answer: &Value) -> Option<Mutation> {
        let meta = &answer["metadata"];
        let (Some(uid), Some(version)) = (meta["uid"].as_str(), meta["resourceVersion"].as_str())
        else {
            // No server answered (commands only recorded): judge by the cache.
            return Some(if cached {
                Mutation::Updated
            } else {
                Mutation::Created
            });
        };
        let (uid, version) = (uid.to_string(), version.to_string());
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
        if let (Some(uid), Some(version)) = (&meta.uid, &meta.resource_version) {
            self.seen_version(uid, version);
        }
    }

    /// Forgets the child `uid` once the cache shows `version` of it, this step's last write or a newer one.
    pub(crate) fn seen_version(&self, uid: &str, version: &str) {
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        let caught_up = match recent.versions.get(uid) {
            // An opaque version shows the write only when it is the same one.
            Some((written, _)) => {
                crate::versions::at_least(version, written).unwrap_or(written == version)
            }
            None => false,
        };
        if caught_up {
            // Its place in `order` goes when the capacity pushes it out.
            recent.versions.remove(uid);
        }
    }
}

/// A hash of what an apply can change: the object without its status and the metadata the server keeps
/// (`resourceVersion`, `managedFields`), hashed as it stands (no copy of the object).
fn content_hash(answer: &Value) -> u64 {
    let mut h = DefaultHasher::new();
    if let Value::Object(fields) = answer {
        for (k, v) in fields {
            match (k.as_str(), v) {
                ("status", _) => {}
                ("metadata", Value::Object(meta)) => {
                    k.hash(&mut h);
                    for (mk, mv) in meta {
                        if mk != "resourceVersion" && mk != "managedFields" {
                            mk.hash(&mut h);
                            hash_value(mv, &mut h);
                        }
                    }
                }
                _ => {
                    k.hash(&mut h);
                    hash_value(v, &mut h);
                }
            }
        }
    }
    h.finish()
}

/// Feeds a JSON value to `h`, each kind tagged so that `[]` and `{}` or `"1"` and `1` differ.
fn hash_value(v: &Value, h: &mut DefaultHasher) {
    match v {
        Value::Null => 0u8.hash(h),
        Value::Bool(b) => (1u8, b).hash(h),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => (2u8, i).hash(h),
            (_, Some(u), _) => (3u8, u).hash(h),
            (_, _, f) => (4u8, f.map(f64::to_bits)).hash(h),
        },
        Value::String(s) => (5u8, s).hash(h),
        Value::Array(items) => {
            (6u8, items.len()).hash(h);
            items.iter().for_each(|i| hash_value(i, h));
        }
        Value::Object(fields) => {
            (7u8, fields.len()).hash(h);
            for (k, v) in fields {
                k.hash(h);
                hash_value(v, h);
            }
        }
    }
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

    fn json(cm: &ConfigMap) -> Value {
        serde_json::to_value(cm).unwrap()
    }

    #[test]
    fn a_repeated_apply_on_a_lagging_cache_is_no_change() {
        let written = Written::default();
        assert_eq!(
            written.applied(false, &json(&answer("u", "1", "a"))),
            Some(Mutation::Created)
        );
        assert_eq!(written.applied(false, &json(&answer("u", "1", "a"))), None);
        // Someone else wrote since (a new version, the same content): still nothing this apply did.
        assert_eq!(written.applied(false, &json(&answer("u", "2", "a"))), None);
        assert_eq!(
            written.applied(false, &json(&answer("u", "3", "b"))),
            Some(Mutation::Updated)
        );
        written.seen(&answer("u", "3", "b"));
        assert_eq!(
            written.applied(true, &json(&answer("u", "4", "c"))),
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
            written.applied(false, &json(&ConfigMap::default())),
            Some(Mutation::Created)
        );
        assert_eq!(
            written.applied(true, &json(&ConfigMap::default())),
            Some(Mutation::Updated)
        );
    }
}
