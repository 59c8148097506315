//! What a child step wrote that its cache may not show yet, so that a write is reported by what the API
//! answered rather than by a cache that lags.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use kube::Resource;

use super::announce::Mutation;

/// How many writes are remembered at most (a safety net: an entry goes as soon as the cache shows the write).
const CAPACITY: usize = 16_384;

/// The resource version each child had after this step's last write to it, by uid, until the cache shows it.
///
/// When a pass runs before the cache has seen the child the previous pass created, the child is applied again
/// (a no-op): the API answers with the uid and resource version of the previous write, and the step reports
/// the child unchanged instead of announcing it as created a second time.
#[derive(Debug, Default)]
pub(crate) struct Written {
    recent: Mutex<Recent>,
}

#[derive(Debug, Default)]
struct Recent {
    versions: HashMap<String, String>,
    order: VecDeque<String>,
}

impl Written {
    /// What an apply did to a child, from the object the API answered with: `None` when it changed nothing
    /// (the answer is this step's own last write), `Created` when the child was neither cached nor written
    /// before, `Updated` otherwise. Remembers the answer.
    pub(crate) fn applied<C: Resource>(&self, cached: bool, answer: &C) -> Option<Mutation> {
        let meta = answer.meta();
        let (Some(uid), Some(version)) = (meta.uid.clone(), meta.resource_version.clone()) else {
            // No server answered (commands only recorded): judge by the cache.
            return Some(if cached {
                Mutation::Updated
            } else {
                Mutation::Created
            });
        };
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        let before = recent.versions.get(&uid).cloned();
        let mutation = match &before {
            Some(v) if *v == version => None,
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
        recent.versions.insert(uid, version);
        mutation
    }

    /// Forgets a child once the cache shows this step's last write to it (or shows it deleted).
    pub(crate) fn seen<C: Resource>(&self, cached: &C) {
        let meta = cached.meta();
        let Some(uid) = &meta.uid else { return };
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        let caught_up = match (recent.versions.get(uid), &meta.resource_version) {
            (Some(written), Some(cached)) => {
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

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

    fn answer(uid: &str, version: &str) -> ConfigMap {
        let mut cm = ConfigMap::default();
        cm.metadata.uid = Some(uid.into());
        cm.metadata.resource_version = Some(version.into());
        cm
    }

    #[test]
    fn a_repeated_apply_on_a_lagging_cache_is_no_change() {
        let written = Written::default();
        assert_eq!(
            written.applied(false, &answer("u", "1")),
            Some(Mutation::Created)
        );
        assert_eq!(written.applied(false, &answer("u", "1")), None);
        assert_eq!(
            written.applied(false, &answer("u", "2")),
            Some(Mutation::Updated)
        );
        written.seen(&answer("u", "2"));
        assert_eq!(
            written.applied(true, &answer("u", "3")),
            Some(Mutation::Updated)
        );
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
