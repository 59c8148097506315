//! The tracker: objects a step read through the context, so the parent is reconciled again when they change.

use std::collections::{HashMap, HashSet};
use std::marker::PhantomData;
use std::sync::{Arc, RwLock};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::Resource;
use kube::core::{Selector, SelectorExt};
use kube::runtime::reflector::ObjectRef;

use crate::index::object_ref_of;

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

/// A parent, by its key (`namespace/name`, or `name`); shared by every index that names it.
type ParentKey = Arc<str>;

/// The parents that track one object: most objects (a child) are tracked by one.
#[derive(Debug)]
enum Parents {
    One(ParentKey),
    Many(HashSet<ParentKey>),
}

impl Parents {
    fn insert(&mut self, parent: ParentKey) {
        match self {
            Parents::One(p) if *p == parent => {}
            Parents::One(p) => *self = Parents::Many(HashSet::from([p.clone(), parent])),
            Parents::Many(set) => {
                set.insert(parent);
            }
        }
    }

    /// Removes `parent`; whether none is left.
    fn remove(&mut self, parent: &str) -> bool {
        match self {
            Parents::One(p) => &**p == parent,
            Parents::Many(set) => {
                set.remove(parent);
                set.is_empty()
            }
        }
    }

    fn iter(&self) -> impl Iterator<Item = &ParentKey> {
        let (one, many) = match self {
            Parents::One(p) => (Some(p), None),
            Parents::Many(set) => (None, Some(set.iter())),
        };
        one.into_iter().chain(many.into_iter().flatten())
    }
}

/// One thing a parent tracks, as the tracker holds it.
#[derive(Debug)]
enum Held {
    /// One object, by its index key ([`name_key`]), shared with the name index.
    Name(Arc<str>),
    /// A selection, with its selector parsed once.
    Selector(TrackKey, Option<Selector>),
}

impl Held {
    fn key(&self) -> TrackKey {
        match self {
            Held::Name(key) => {
                let mut parts = key.splitn(4, '\n');
                let mut next = || parts.next().unwrap_or_default().to_string();
                let (api_version, kind, namespace, name) = (next(), next(), next(), next());
                TrackKey {
                    api_version,
                    kind,
                    namespace: (!namespace.is_empty()).then_some(namespace),
                    what: Tracked::Name(name),
                }
            }
            Held::Selector(key, _) => key.clone(),
        }
    }
}

/// The name index's key of one object: `apiVersion`, kind, namespace (empty for none: no namespace is named
/// "") and name, each on a line of its own (none of them can hold a line break).
fn name_key(api_version: &str, kind: &str, namespace: Option<&str>, name: &str) -> String {
    format!(
        "{api_version}\n{kind}\n{}\n{name}",
        namespace.unwrap_or_default()
    )
}

#[derive(Debug, Default)]
struct Index {
    /// What each parent tracks.
    by_parent: HashMap<ParentKey, Box<[Held]>>,
    /// The parents tracking each object by name.
    by_name: HashMap<Arc<str>, Parents>,
    /// The parents tracking selections, per kind.
    selecting: HashMap<Box<str>, HashSet<ParentKey>>,
}

impl Index {
    /// Removes everything `parent` tracks.
    fn remove(&mut self, parent: &str) {
        let Some(held) = self.by_parent.remove(parent) else {
            return;
        };
        for h in held.iter() {
            match h {
                Held::Name(key) => {
                    if self.by_name.get_mut(key).is_some_and(|p| p.remove(parent)) {
                        self.by_name.remove(key);
                    }
                }
                Held::Selector(key, _) => {
                    if let Some(set) = self.selecting.get_mut(key.kind.as_str()) {
                        set.remove(parent);
                        if set.is_empty() {
                            self.selecting.remove(key.kind.as_str());
                        }
                    }
                }
            }
        }
    }

    /// What `keys` are held as: a name shares the index's copy of its key when one is there already.
    fn hold(&self, keys: Vec<TrackKey>) -> Vec<Held> {
        let mut held: Vec<Held> = Vec::with_capacity(keys.len());
        for key in keys {
            let h = match &key.what {
                Tracked::Name(name) => {
                    let k = name_key(&key.api_version, &key.kind, key.namespace.as_deref(), name);
                    match self.by_name.get_key_value(k.as_str()) {
                        Some((shared, _)) => Held::Name(shared.clone()),
                        None => Held::Name(k.into()),
                    }
                }
                Tracked::Selector(s) => {
                    let selector = s.parse::<SelectorString>().ok().map(|s| s.0);
                    Held::Selector(key, selector)
                }
            };
            if !held.iter().any(|o| o.same(&h)) {
                held.push(h);
            }
        }
        held
    }
}

impl Held {
    fn same(&self, other: &Held) -> bool {
        match (self, other) {
            (Held::Name(a), Held::Name(b)) => a == b,
            (Held::Selector(a, _), Held::Selector(b, _)) => a == b,
            _ => false,
        }
    }
}

/// Which parents of kind `P` tracked what, updated after every pass.
///
/// Objects tracked by name are indexed by their kind, namespace and name, so a change finds the parents that
/// track it in one lookup, however many parents there are; selections are matched against each changed object
/// of their kind, with selectors parsed once.
pub struct Tracker<P: Resource<DynamicType = ()>> {
    index: RwLock<Index>,
    parent: PhantomData<fn() -> P>,
}

impl<P: Resource<DynamicType = ()>> Default for Tracker<P> {
    fn default() -> Self {
        Self {
            index: RwLock::default(),
            parent: PhantomData,
        }
    }
}

impl<P: Resource<DynamicType = ()>> std::fmt::Debug for Tracker<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.index.read().map(|i| i.by_parent.len()).unwrap_or(0);
        f.debug_struct("Tracker").field("parents", &n).finish()
    }
}

fn parent_key<P: Resource<DynamicType = ()>>(parent: &ObjectRef<P>) -> String {
    crate::index::object_key(parent.namespace.as_deref(), &parent.name)
}

impl<P: Resource<DynamicType = ()>> Tracker<P> {
    /// A shared, empty tracker.
    pub fn new() -> Arc<Self> {
        Arc::default()
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Index> {
        self.index.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Replaces what `parent` tracks with what its latest pass read.
    pub fn set(&self, parent: ObjectRef<P>, keys: Vec<TrackKey>) {
        let key = parent_key(&parent);
        let mut index = self.index.write().unwrap_or_else(|e| e.into_inner());
        let held = index.hold(keys);
        // A converged parent's pass reads what the one before read.
        if let Some(old) = index.by_parent.get(key.as_str())
            && old.len() == held.len()
            && old.iter().zip(&held).all(|(a, b)| a.same(b))
        {
            return;
        }
        index.remove(&key);
        if held.is_empty() {
            return;
        }
        let parent: ParentKey = key.into();
        for h in &held {
            match h {
                Held::Name(name) => match index.by_name.get_mut(name) {
                    Some(parents) => parents.insert(parent.clone()),
                    None => {
                        index
                            .by_name
                            .insert(name.clone(), Parents::One(parent.clone()));
                    }
                },
                Held::Selector(key, _) => {
                    index
                        .selecting
                        .entry(key.kind.as_str().into())
                        .or_default()
                        .insert(parent.clone());
                }
            }
        }
        index.by_parent.insert(parent, held.into_boxed_slice());
    }

    /// Adds `key` to what `parent` tracks, keeping the rest (a pass tracks each key as it reads it;
    /// [`set`](Self::set) at its end drops what it no longer read).
    pub fn add(&self, parent: &ObjectRef<P>, key: &TrackKey) {
        let mut keys = self.tracked_by(parent);
        if keys.contains(key) {
            return;
        }
        keys.push(key.clone());
        self.set(parent.clone(), keys);
    }

    /// Forgets a parent (it was deleted).
    pub fn forget(&self, parent: &ObjectRef<P>) {
        let key = parent_key(parent);
        self.index
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&key);
    }

    /// The parents that track anything.
    pub fn parents(&self) -> Vec<ObjectRef<P>> {
        self.read()
            .by_parent
            .keys()
            .map(|k| object_ref_of(k))
            .collect()
    }

    /// The parents that tracked an object that just changed.
    pub fn parents_of<K: Resource<DynamicType = ()>>(&self, obj: &K) -> Vec<ObjectRef<P>> {
        self.parents_of_meta(&K::api_version(&()), &K::kind(&()), obj.meta())
    }

    /// The parents that tracked an object (given by type and metadata) that just changed.
    pub fn parents_of_meta(
        &self,
        api_version: &str,
        kind: &str,
        meta: &ObjectMeta,
    ) -> Vec<ObjectRef<P>> {
        let index = self.read();
        let mut found: Vec<&ParentKey> = Vec::new();
        if let Some(name) = &meta.name {
            let key = name_key(api_version, kind, meta.namespace.as_deref(), name);
            if let Some(parents) = index.by_name.get(key.as_str()) {
                found.extend(parents.iter());
            }
        }
        if let Some(selecting) = index.selecting.get(kind) {
            let by_name = found.len();
            for parent in selecting {
                let matches = index.by_parent.get(parent).is_some_and(|held| {
                    held.iter().any(|h| match h {
                        Held::Selector(key, selector) => {
                            key.kind == kind
                                && key.api_version == api_version
                                && key.namespace == meta.namespace
                                && selector.as_ref().is_some_and(|s| {
                                    s.matches(meta.labels.as_ref().unwrap_or(&Default::default()))
                                })
                        }
                        Held::Name(_) => false,
                    })
                });
                if matches && !found[..by_name].contains(&parent) {
                    found.push(parent);
                }
            }
        }
        found.into_iter().map(|k| object_ref_of(k)).collect()
    }

    /// What a parent tracks.
    pub fn tracked_by(&self, parent: &ObjectRef<P>) -> Vec<TrackKey> {
        self.read()
            .by_parent
            .get(parent_key(parent).as_str())
            .map(|held| held.iter().map(Held::key).collect())
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

    #[test]
    fn an_object_many_parents_track_is_found_for_each_until_each_forgets_it() {
        let t: Arc<Tracker<Secret>> = Tracker::new();
        let parents: Vec<_> = (0..3)
            .map(|i| ObjectRef::<Secret>::new(&format!("p{i}")).within("ns"))
            .collect();
        for p in &parents {
            t.set(
                p.clone(),
                vec![
                    TrackKey::name::<ConfigMap>(Some("ns"), "shared"),
                    TrackKey::name::<ConfigMap>(Some("ns"), &format!("own-{}", p.name)),
                ],
            );
        }
        let mut found = t.parents_of(&cm("ns", "shared", &[]));
        found.sort_by(|a, b| a.name.cmp(&b.name));
        assert_eq!(found, parents);
        assert_eq!(
            t.parents_of(&cm("ns", "own-p1", &[])),
            vec![parents[1].clone()]
        );
        t.forget(&parents[0]);
        assert_eq!(t.parents_of(&cm("ns", "shared", &[])).len(), 2);
        assert!(t.parents_of(&cm("ns", "own-p0", &[])).is_empty());
        t.set(parents[1].clone(), Vec::new());
        t.forget(&parents[2]);
        assert!(t.parents_of(&cm("ns", "shared", &[])).is_empty());
        assert!(t.parents().is_empty());
        let index = t.read();
        assert!(index.by_name.is_empty() && index.selecting.is_empty());
    }

    #[test]
    fn a_parent_tracking_an_object_twice_is_found_once_and_keeps_its_keys() {
        let t: Arc<Tracker<Secret>> = Tracker::new();
        let a = ObjectRef::<Secret>::new("a").within("ns");
        let sel: Selector = [("team", "red")].into_iter().collect();
        let keys = vec![
            TrackKey::name::<ConfigMap>(Some("ns"), "settings"),
            TrackKey::selector::<ConfigMap>(Some("ns"), &sel),
            TrackKey::name::<ConfigMap>(None, "cluster-wide"),
        ];
        t.set(a.clone(), keys.clone());
        assert_eq!(
            t.parents_of(&cm("ns", "settings", &[("team", "red")])),
            vec![a.clone()]
        );
        assert_eq!(t.tracked_by(&a), keys);
        let mut cluster_wide = ConfigMap::default();
        cluster_wide.metadata.name = Some("cluster-wide".into());
        assert_eq!(t.parents_of(&cluster_wide), vec![a.clone()]);
        assert!(t.parents_of(&cm("ns", "cluster-wide", &[])).is_empty());
        // A key of another kind with the same name is not the tracked one.
        let mut secret = Secret::default();
        secret.metadata.name = Some("settings".into());
        secret.metadata.namespace = Some("ns".into());
        assert!(t.parents_of(&secret).is_empty());
    }
}
