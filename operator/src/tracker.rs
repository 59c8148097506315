//! The tracker: objects a step read through the context, so the parent is reconciled again when they change.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use kube::core::{Selector, SelectorExt};
use kube::runtime::reflector::ObjectRef;

/// One object, or a selection of objects, that a pass read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TrackKey {
    /// `apiVersion` of the tracked kind.
    pub api_version: String,
    /// Kind.
    pub kind: String,
    /// Namespace, for namespaced kinds.
    pub namespace: Option<String>,
    /// What is tracked.
    pub what: Tracked,
}

/// A name or a label selector.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Tracked {
    /// The object with this name.
    Name(String),
    /// The objects matching this label selector (its string form).
    Selector(String),
}

impl TrackKey {
    /// Tracks one object of kind `K`.
    pub fn name<K: Resource<DynamicType = ()>>(namespace: Option<&str>, name: &str) -> Self {
        Self {
            api_version: K::api_version(&()).into_owned(),
            kind: K::kind(&()).into_owned(),
            namespace: namespace.map(str::to_string),
            what: Tracked::Name(name.to_string()),
        }
    }

    /// Tracks the objects of kind `K` matching a selector.
    pub fn selector<K: Resource<DynamicType = ()>>(
        namespace: Option<&str>,
        selector: &Selector,
    ) -> Self {
        Self {
            api_version: K::api_version(&()).into_owned(),
            kind: K::kind(&()).into_owned(),
            namespace: namespace.map(str::to_string),
            what: Tracked::Selector(selector.to_string()),
        }
    }

    fn matches<K: Resource<DynamicType = ()>>(&self, obj: &K) -> bool {
        self.matches_meta(&K::api_version(&()), &K::kind(&()), obj.meta())
    }

    /// Whether an object of this type with this metadata is tracked by the key.
    pub fn matches_meta(&self, api_version: &str, kind: &str, meta: &ObjectMeta) -> bool {
        if self.kind != kind || self.api_version != api_version {
            return false;
        }
        if self.namespace != meta.namespace {
            return false;
        }
        match &self.what {
            Tracked::Name(n) => meta.name.as_deref() == Some(n),
            Tracked::Selector(s) => s
                .parse::<SelectorString>()
                .map(|sel| {
                    sel.0
                        .matches(meta.labels.as_ref().unwrap_or(&Default::default()))
                })
                .unwrap_or(false),
        }
    }
}

/// A selector parsed back from its string form (`a=b,c in (d)`), for matching tracked selections.
struct SelectorString(Selector);

impl std::str::FromStr for SelectorString {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        let mut exprs = Vec::new();
        for part in split_top_level(s) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            use kube::core::Expression as E;
            let expr = if let Some((k, v)) = part.split_once("!=") {
                E::NotEqual(k.trim().into(), v.trim().into())
            } else if let Some((k, v)) = part.split_once('=') {
                E::Equal(k.trim().into(), v.trim_start_matches('=').trim().into())
            } else if let Some((k, rest)) = part.split_once(" notin ") {
                E::NotIn(k.trim().into(), set(rest))
            } else if let Some((k, rest)) = part.split_once(" in ") {
                E::In(k.trim().into(), set(rest))
            } else if let Some(k) = part.strip_prefix('!') {
                E::DoesNotExist(k.trim().into())
            } else {
                E::Exists(part.into())
            };
            exprs.push(expr);
        }
        Ok(SelectorString(exprs.into_iter().collect()))
    }
}

fn set(s: &str) -> std::collections::BTreeSet<String> {
    s.trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .split(',')
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect()
}

fn split_top_level(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// Which parents of kind `P` tracked what, updated after every pass.
pub struct Tracker<P: Resource<DynamicType = ()>> {
    by_parent: RwLock<HashMap<ObjectRef<P>, Vec<TrackKey>>>,
    by_kind: RwLock<HashMap<String, HashSet<ObjectRef<P>>>>,
}

impl<P: Resource<DynamicType = ()>> Default for Tracker<P> {
    fn default() -> Self {
        Self {
            by_parent: RwLock::default(),
            by_kind: RwLock::default(),
        }
    }
}

impl<P: Resource<DynamicType = ()>> std::fmt::Debug for Tracker<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.by_parent.read().map(|m| m.len()).unwrap_or(0);
        f.debug_struct("Tracker").field("parents", &n).finish()
    }
}

impl<P: Resource<DynamicType = ()>> Tracker<P> {
    /// A shared, empty tracker.
    pub fn new() -> Arc<Self> {
        Arc::default()
    }

    /// Replaces what `parent` tracks with what its latest pass read.
    pub fn set(&self, parent: ObjectRef<P>, keys: Vec<TrackKey>) {
        let mut by_parent = self.by_parent.write().unwrap_or_else(|e| e.into_inner());
        let mut by_kind = self.by_kind.write().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = by_parent.remove(&parent) {
            for k in old {
                if let Some(s) = by_kind.get_mut(&k.kind) {
                    s.remove(&parent);
                }
            }
        }
        if keys.is_empty() {
            return;
        }
        for k in &keys {
            by_kind
                .entry(k.kind.clone())
                .or_default()
                .insert(parent.clone());
        }
        by_parent.insert(parent, keys);
    }

    /// Forgets a parent (it was deleted).
    pub fn forget(&self, parent: &ObjectRef<P>) {
        self.set(parent.clone(), Vec::new());
    }

    /// The parents that track anything.
    pub fn parents(&self) -> Vec<ObjectRef<P>> {
        self.by_parent
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .cloned()
            .collect()
    }

    /// The parents that tracked an object that just changed.
    pub fn parents_of<K: Resource<DynamicType = ()>>(&self, obj: &K) -> Vec<ObjectRef<P>> {
        let kind = K::kind(&());
        let by_kind = self.by_kind.read().unwrap_or_else(|e| e.into_inner());
        let Some(candidates) = by_kind.get(kind.as_ref()) else {
            return Vec::new();
        };
        let by_parent = self.by_parent.read().unwrap_or_else(|e| e.into_inner());
        candidates
            .iter()
            .filter(|p| {
                by_parent
                    .get(*p)
                    .is_some_and(|keys| keys.iter().any(|k| k.matches(obj)))
            })
            .cloned()
            .collect()
    }

    /// The parents that tracked an object (given by type and metadata) that just changed.
    pub fn parents_of_meta(
        &self,
        api_version: &str,
        kind: &str,
        meta: &ObjectMeta,
    ) -> Vec<ObjectRef<P>> {
        let by_kind = self.by_kind.read().unwrap_or_else(|e| e.into_inner());
        let Some(candidates) = by_kind.get(kind) else {
            return Vec::new();
        };
        let by_parent = self.by_parent.read().unwrap_or_else(|e| e.into_inner());
        candidates
            .iter()
            .filter(|p| {
                by_parent.get(*p).is_some_and(|keys| {
                    keys.iter().any(|k| k.matches_meta(api_version, kind, meta))
                })
            })
            .cloned()
            .collect()
    }

    /// What a parent tracks.
    pub fn tracked_by(&self, parent: &ObjectRef<P>) -> Vec<TrackKey> {
        self.by_parent
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(parent)
            .cloned()
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMap, Secret};

    fn cm(ns: &str, name: &str, labels: &[(&str, &str)]) -> ConfigMap {
        let mut c = ConfigMap::default();
        c.metadata.name = Some(name.into());
        c.metadata.namespace = Some(ns.into());
        c.metadata.labels = Some(
            labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        c
    }

    #[test]
    fn names_and_selectors_find_their_parents() {
        let t: Arc<Tracker<Secret>> = Tracker::new();
        let a = ObjectRef::<Secret>::new("a").within("ns");
        let b = ObjectRef::<Secret>::new("b").within("ns");
        t.set(
            a.clone(),
            vec![TrackKey::name::<ConfigMap>(Some("ns"), "settings")],
        );
        let sel: Selector = [("team", "red")].into_iter().collect();
        t.set(
            b.clone(),
            vec![TrackKey::selector::<ConfigMap>(Some("ns"), &sel)],
        );
        assert_eq!(t.parents_of(&cm("ns", "settings", &[])), vec![a.clone()]);
        assert_eq!(
            t.parents_of(&cm("ns", "other", &[("team", "red")])),
            vec![b.clone()]
        );
        assert!(t.parents_of(&cm("elsewhere", "settings", &[])).is_empty());
        t.set(a.clone(), Vec::new());
        assert!(t.parents_of(&cm("ns", "settings", &[])).is_empty());
    }
}
