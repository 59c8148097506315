//! What a child step wrote that its cache may not show yet, so that a write is reported by what the API
//! answered rather than by a cache that lags.

use std::sync::Mutex;

use kube::Resource;

use crate::answer::{Answer, Content};
use crate::by_write::ByWrite;
use crate::cache::{Cache, CachedKind};

use super::announce::Mutation;

/// The resource version and content each child had after the last write of a pass to it, by uid, until the
/// cache shows it. One is shared by every step of a reconciler (uids are unique), so the controller forgets a
/// write when the child's watch event shows it, whether or not a pass runs then.
///
/// When a pass runs before the cache has seen the child the previous pass created, the child is applied again
/// (a no-op): the API answers with the object of the previous write (or a later one, if a controller wrote its
/// status since), and the step reports the child unchanged instead of announcing it as created again. Only the
/// server's `201 Created` announces a child as created.
#[derive(Debug, Default)]
pub(crate) struct Written {
    recent: Mutex<Recent>,
    /// The corrections of each child, to tell a fight over its fields (`fights.rs`).
    fights: super::fights::Fights,
}

#[derive(Debug, Default)]
struct Recent {
    versions: ByWrite<Applied>,
    /// The children this step deleted, by uid, with the resource version the cache showed then.
    deleted: ByWrite<String>,
}

/// A child's version and content after this step's last write to it.
#[derive(Debug)]
struct Applied {
    version: Box<str>,
    content: u64,
}

impl Written {
    /// The corrections of each child.
    pub(crate) fn fights(&self) -> &super::fights::Fights {
        &self.fights
    }

    /// What an apply did to a child, from the API's answer and the version of the child the pass saw (`cached`:
    /// empty for a child without one, `None` when the pass saw no child):
    /// - `Created` when the server created it (`201 Created`);
    /// - `None` when it changed nothing: the answer is the version the pass saw (the server found nothing to
    ///   change, say a value it normalizes), or this step's own last write (on a cache that lags behind it), or
    ///   the version the cache shows now (`shown`, given the child's uid) of a child the pass did not see and
    ///   whose write is no longer remembered. That is a pass that read its cache before the cache showed the
    ///   previous pass's write, whose watch event cleared the memory of it before this apply answered;
    /// - `Updated` otherwise.
    ///
    /// Remembers the answer.
    pub(crate) fn applied(
        &self,
        cached: Option<&str>,
        answer: Option<&Answer>,
        shown: impl FnOnce(&str) -> Option<String>,
    ) -> Option<Mutation> {
        let Some((answer, Content { uid, version, hash })) =
            answer.and_then(|a| Some((a, a.content()?)))
        else {
            // No server answered (commands only recorded): judge by the cache.
            return Some(if cached.is_some() {
                Mutation::Updated
            } else {
                Mutation::Created
            });
        };
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        let mutation = match recent.versions.get(uid.as_str()) {
            _ if answer.created() => Some(Mutation::Created),
            _ if cached == Some(version.as_str()) => None,
            // The same write, or one that only others changed since (a status, say): this apply did nothing.
            Some(before) if *before.version == *version || before.content == hash => None,
            Some(_) => Some(Mutation::Updated),
            None if cached.is_some() => Some(Mutation::Updated),
            None if shown(&uid).as_deref() == Some(version.as_str()) => None,
            None => Some(Mutation::Updated),
        };
        recent.versions.insert(
            &uid,
            Applied {
                version: version.into(),
                content: hash,
            },
        );
        mutation
    }

    /// Remembers that this step deleted `child` (as the cache showed it), so that a pass on a cache that has not
    /// seen the deletion yet does not delete it again ([`Written::delete_pending`]).
    pub(crate) fn deleted<C: Resource>(&self, child: &C) {
        let meta = child.meta();
        let (Some(uid), Some(version)) = (&meta.uid, &meta.resource_version) else {
            return;
        };
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        recent.deleted.insert(uid, version.clone());
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
            Some(written) => crate::versions::at_least(version, &written.version)
                .unwrap_or(*written.version == *version),
            None => false,
        };
        if caught_up {
            recent.versions.remove(uid);
        }
    }
}

/// The version `cache` shows now of the object `namespace/name`, if it has the uid given: what
/// [`Written::applied`] asks of a child the pass did not see.
pub(crate) fn shown_by<'a, C: CachedKind>(
    cache: &'a Cache<C>,
    namespace: Option<&'a str>,
    name: &'a str,
) -> impl FnOnce(&str) -> Option<String> + 'a {
    move |uid| {
        let shown = cache.get(namespace, name)?;
        let meta = shown.meta();
        (meta.uid.as_deref() == Some(uid))
            .then(|| meta.resource_version.clone())
            .flatten()
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

    fn json(cm: &ConfigMap) -> Answer {
        Answer::of(cm).unwrap()
    }

    fn created(cm: &ConfigMap) -> Answer {
        json(cm).with_created(true)
    }

    fn unseen(_uid: &str) -> Option<String> {
        None
    }

    #[test]
    fn a_repeated_apply_on_a_lagging_cache_is_no_change() {
        let written = Written::default();
        assert_eq!(
            written.applied(None, Some(&created(&answer("u", "1", "a"))), unseen),
            Some(Mutation::Created)
        );
        assert_eq!(
            written.applied(None, Some(&json(&answer("u", "1", "a"))), unseen),
            None
        );
        // Someone else wrote since (a new version, the same content): still nothing this apply did.
        assert_eq!(
            written.applied(None, Some(&json(&answer("u", "2", "a"))), unseen),
            None
        );
        assert_eq!(
            written.applied(None, Some(&json(&answer("u", "3", "b"))), unseen),
            Some(Mutation::Updated)
        );
        written.seen(&answer("u", "3", "b"));
        assert_eq!(
            written.applied(Some("3"), Some(&json(&answer("u", "4", "c"))), unseen),
            Some(Mutation::Updated)
        );
    }

    /// A pass reads its cache before the cache shows the child the previous pass created; the child's watch
    /// event then clears the memory of that create; the pass applies the same child again. The server did not
    /// create it, and the cache now shows the version the apply answered: nothing changed, nothing to announce.
    /// Had the pass's apply changed the child (a spec changed meanwhile), the versions differ: updated.
    #[test]
    fn a_repeated_apply_whose_memory_a_watch_event_cleared_is_no_change() {
        let written = Written::default();
        assert_eq!(
            written.applied(None, Some(&created(&answer("u", "1", "a"))), unseen),
            Some(Mutation::Created)
        );
        written.seen_version("u", "1");
        let shown = |uid: &str| (uid == "u").then(|| "1".to_string());
        assert_eq!(
            written.applied(None, Some(&json(&answer("u", "1", "a"))), shown),
            None
        );
        written.seen_version("u", "1");
        assert_eq!(
            written.applied(None, Some(&json(&answer("u", "2", "b"))), shown),
            Some(Mutation::Updated)
        );
        written.seen_version("u", "2");
        // Not created by this apply, not shown by the cache: someone else's write the cache has not shown yet.
        assert_eq!(
            written.applied(None, Some(&json(&answer("u", "3", "c"))), unseen),
            Some(Mutation::Updated)
        );
    }

    /// An apply the server found nothing to change in (a value it normalizes, say) answers the version the
    /// pass saw: nothing to announce, however often a pass repeats it.
    #[test]
    fn an_apply_that_leaves_the_version_the_pass_saw_is_no_change() {
        let written = Written::default();
        for _ in 0..2 {
            assert_eq!(
                written.applied(Some("4"), Some(&json(&answer("u", "4", "a"))), unseen),
                None
            );
        }
        assert_eq!(
            written.applied(Some("4"), Some(&json(&answer("u", "5", "b"))), unseen),
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
        for answer in [Some(json(&ConfigMap::default())), None] {
            assert_eq!(
                written.applied(None, answer.as_ref(), unseen),
                Some(Mutation::Created)
            );
            assert_eq!(
                written.applied(Some(""), answer.as_ref(), unseen),
                Some(Mutation::Updated)
            );
        }
    }
}
