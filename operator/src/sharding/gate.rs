//! A member's side of the protocol, at the start of each pass: run it, skip it (the parent is another
//! member's, or this member handed it over and its cache has not caught up), or hand the parent over instead
//! of running it (the assigner asked with the drain label).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject};
use kube::core::ObjectMeta;
use serde_json::json;

use super::assigner::{labels, relabel_children};
use super::{AssignError, DRAIN_LABEL, SHARD_LABEL, shard_of};
use crate::cache::Caches;

/// What a controller does with a parent it is about to reconcile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Admit {
    /// Reconcile it: not sharded, or this member owns it and no hand-over was asked.
    Pass,
    /// Do nothing: it is not this member's (any more).
    Skip(&'static str),
    /// Hand it over to the member named, instead of a pass.
    HandOver {
        /// The member it goes to.
        to: String,
    },
}

/// Shared by an operator's controllers: this member's identity once it joined its group (none: not
/// sharded), and the parents it handed over whose new labels its caches do not show yet.
#[derive(Clone, Default)]
pub(crate) struct Gate {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    member: OnceLock<String>,
    client: OnceLock<Client>,
    /// Each parent handed over (by uid), with the resourceVersion it had when this member read it: while the
    /// cache still shows that version, the cache has not seen the hand-over.
    handed: Mutex<HashMap<String, String>>,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate")
            .field("member", &self.member())
            .finish()
    }
}

impl Gate {
    /// From now on, passes run only for the parents labelled with `identity`.
    pub(crate) fn join(&self, identity: &str, client: Client) {
        let _ = self.inner.client.set(client);
        let _ = self.inner.member.set(identity.to_string());
    }

    /// This member's identity, when sharded.
    pub(crate) fn member(&self) -> Option<&str> {
        self.inner.member.get().map(String::as_str)
    }

    /// What to do with the parent `meta`, as the cache shows it.
    pub(crate) fn admit(&self, meta: &ObjectMeta) -> Admit {
        let Some(me) = self.member() else {
            return Admit::Pass;
        };
        if let Some(uid) = &meta.uid {
            let mut handed = self.inner.handed.lock().unwrap_or_else(|e| e.into_inner());
            match handed.get(uid) {
                Some(version) if Some(version) == meta.resource_version.as_ref() => {
                    return Admit::Skip("handed over; the cache has not seen it yet");
                }
                Some(_) => {
                    handed.remove(uid);
                }
                None => {}
            }
        }
        if shard_of(meta) != Some(me) {
            return Admit::Skip("another member owns it");
        }
        match meta.labels.as_ref().and_then(|l| l.get(DRAIN_LABEL)) {
            Some(to) if to != me => Admit::HandOver { to: to.clone() },
            _ => Admit::Pass,
        }
    }

    /// Hands the parent `meta` (of the kind `parents`) over to `to`: relabels its children of the kinds
    /// `children` that carry this member's label (as `caches` hold them, each write guarded by the cached
    /// resourceVersion; a child whose write conflicts keeps its label, and its new owner, not finding it in
    /// its cache, reads it and labels it with its next write), then the parent, guarded by the
    /// resourceVersion read. From
    /// then on [`admit`](Self::admit) skips the parent until the cache shows a newer version. A `409` (the
    /// parent changed meanwhile: the drain was redirected or cancelled) is an error: the controller retries
    /// with the parent as its cache then shows it.
    pub(crate) async fn hand_over(
        &self,
        caches: &Caches,
        parents: &ApiResource,
        children: &[ApiResource],
        meta: &ObjectMeta,
        to: &str,
    ) -> Result<usize, AssignError> {
        let (Some(me), Some(client)) = (self.inner.member.get(), self.inner.client.get()) else {
            return Ok(0);
        };
        let mut moved = 0;
        for kind in children {
            moved += match caches.owned_metadata(
                &kind.api_version,
                &kind.kind,
                meta.uid.as_deref().unwrap_or_default(),
            ) {
                Some(owned) => relabel_cached(client, kind, meta, &owned, me, to).await?,
                None => {
                    relabel_children(client, std::slice::from_ref(kind), meta, me, to)
                        .await?
                        .0
                }
            };
        }
        let api: Api<DynamicObject> = match &meta.namespace {
            Some(ns) => Api::namespaced_with(client.clone(), ns, parents),
            None => Api::all_with(client.clone(), parents),
        };
        labels(&api, meta, json!({ SHARD_LABEL: to, DRAIN_LABEL: null }))
            .await
            .map_err(|source| AssignError::Write {
                what: format!(
                    "{} {}",
                    parents.kind,
                    meta.name.as_deref().unwrap_or_default()
                ),
                source,
            })?;
        if let (Some(uid), Some(version)) = (&meta.uid, &meta.resource_version) {
            self.inner
                .handed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(uid.clone(), version.clone());
        }
        tracing::info!(parent = %meta.name.as_deref().unwrap_or_default(), from = %me, %to, children = moved, "handed a parent over");
        Ok(moved)
    }
}

/// Relabels from `from` to `to` the children in `owned` (of the kind `kind`, from a cache) that the parent
/// `meta` controls and that carry `from`'s label; answers how many moved (a conflict is left as it is).
async fn relabel_cached(
    client: &Client,
    kind: &ApiResource,
    meta: &ObjectMeta,
    owned: &[ObjectMeta],
    from: &str,
    to: &str,
) -> Result<usize, AssignError> {
    let uid = meta.uid.as_deref().unwrap_or_default();
    let mut moved = 0;
    for child in owned {
        let controlled = child
            .owner_references
            .iter()
            .flatten()
            .any(|r| r.uid == uid && r.controller == Some(true));
        if !controlled || shard_of(child) != Some(from) {
            continue;
        }
        let api: Api<DynamicObject> = match &child.namespace {
            Some(ns) => Api::namespaced_with(client.clone(), ns, kind),
            None => Api::all_with(client.clone(), kind),
        };
        match labels(&api, child, json!({ SHARD_LABEL: to })).await {
            Ok(()) => moved += 1,
            Err(e) if crate::leader::is_conflict(&e) => {}
            Err(source) => {
                return Err(AssignError::Write {
                    what: format!(
                        "{} {}",
                        kind.kind,
                        child.name.as_deref().unwrap_or_default()
                    ),
                    source,
                });
            }
        }
    }
    Ok(moved)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(shard: Option<&str>, drain: Option<&str>, version: &str) -> ObjectMeta {
        let mut labels = std::collections::BTreeMap::new();
        if let Some(s) = shard {
            labels.insert(SHARD_LABEL.to_string(), s.to_string());
        }
        if let Some(d) = drain {
            labels.insert(DRAIN_LABEL.to_string(), d.to_string());
        }
        ObjectMeta {
            name: Some("web".into()),
            uid: Some("u1".into()),
            resource_version: Some(version.into()),
            labels: Some(labels),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn not_sharded_every_pass_runs() {
        let gate = Gate::default();
        assert_eq!(gate.admit(&meta(Some("b"), Some("c"), "1")), Admit::Pass);
        assert_eq!(gate.admit(&meta(None, None, "1")), Admit::Pass);
    }

    #[test]
    fn a_member_runs_its_own_parents_and_hands_over_when_asked() {
        let gate = Gate::default();
        gate.inner.member.set("a".into()).unwrap();
        assert_eq!(gate.admit(&meta(Some("a"), None, "1")), Admit::Pass);
        assert_eq!(
            gate.admit(&meta(Some("b"), None, "1")),
            Admit::Skip("another member owns it")
        );
        assert_eq!(
            gate.admit(&meta(None, None, "1")),
            Admit::Skip("another member owns it")
        );
        assert_eq!(
            gate.admit(&meta(Some("a"), Some("b"), "1")),
            Admit::HandOver { to: "b".into() }
        );
        // A drain towards itself (a stale label) is no hand-over.
        assert_eq!(gate.admit(&meta(Some("a"), Some("a"), "1")), Admit::Pass);
        // After a hand-over, the version read stays skipped even though it still shows this member's label.
        gate.inner
            .handed
            .lock()
            .unwrap()
            .insert("u1".into(), "7".into());
        assert_eq!(
            gate.admit(&meta(Some("a"), Some("b"), "7")),
            Admit::Skip("handed over; the cache has not seen it yet")
        );
        // A newer version (handed back) is judged by its labels again, and the record is gone.
        assert_eq!(gate.admit(&meta(Some("a"), None, "9")), Admit::Pass);
        assert!(gate.inner.handed.lock().unwrap().is_empty());
    }
}
