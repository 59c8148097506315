//! The cache of one kind in both forms: its owner index and field indexes follow the watch, and reads return
//! equal values.

use super::*;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{OwnerReference, Time};
use kube::runtime::watcher::Event;

fn cm(name: &str, owners: &[&str]) -> ConfigMap {
    let mut c = ConfigMap::default();
    c.metadata.name = Some(name.into());
    c.metadata.namespace = Some("ns".into());
    c.metadata.owner_references = Some(
        owners
            .iter()
            .map(|uid| OwnerReference {
                uid: uid.to_string(),
                ..Default::default()
            })
            .collect(),
    );
    c
}

/// Takes a watch event as the watch loop does.
type Feed = Box<dyn FnMut(&Event<ConfigMap>)>;

/// A cache of either form fed watch events as the watch feeds them (indexes first, then the objects).
struct Fed {
    cache: Cache<ConfigMap>,
    feed: Feed,
}

fn fed(form: Form) -> Fed {
    let mut writer = reflector::store::Writer::<ConfigMap>::default();
    let objects = Objects::new(writer.as_reader());
    if form == Form::Typed {
        objects.want_typed();
    }
    assert_eq!(objects.start(false), form);
    let cache = Cache::detached(objects.clone(), Arc::default());
    cache.add_index(
        "data",
        Arc::new(|c: &ConfigMap| c.data.iter().flat_map(|d| d.values().cloned()).collect()),
    );
    let mut compact = objects::CompactWriter::new(objects.clone());
    let owners = cache.owners.clone();
    let indexes = cache.indexes.clone();
    let spec_kept = cache.replayed.spec_kept().clone();
    let mut pending = None;
    let feed = Box::new(move |ev: &Event<ConfigMap>| {
        events::index_update(&owners, &objects, &spec_kept, &mut pending, ev);
        indexes.update(&objects, ev);
        match form {
            Form::Typed => writer.apply_watcher_event(ev),
            Form::Compact => compact.apply(ev),
        }
    });
    Fed { cache, feed }
}

#[test]
fn the_owner_index_follows_applies_and_deletes() {
    for form in [Form::Typed, Form::Compact] {
        let Fed { cache, mut feed } = fed(form);
        let mut feed = |ev: Event<ConfigMap>| feed(&ev);
        feed(Event::Init);
        feed(Event::InitApply(cm("a", &["p1"])));
        feed(Event::InitApply(cm("b", &["p1", "p2"])));
        feed(Event::InitDone);
        let names = |uid: &str| {
            let mut n: Vec<String> = cache.owned_by(uid).iter().map(|c| c.name_any()).collect();
            n.sort();
            n
        };
        assert_eq!(names("p1"), ["a", "b"]);
        assert_eq!(names("p2"), ["b"]);
        // b changes owners: p2 only.
        feed(Event::Apply(cm("b", &["p2"])));
        assert_eq!(names("p1"), ["a"]);
        assert_eq!(names("p2"), ["b"]);
        // Same owners again: nothing moves.
        feed(Event::Apply(cm("b", &["p2"])));
        assert_eq!(names("p2"), ["b"]);
        feed(Event::Apply(cm("c", &["p2"])));
        assert_eq!(names("p2"), ["b", "c"]);
        feed(Event::Delete(cm("b", &["p2"])));
        assert_eq!(names("p2"), ["c"]);
        feed(Event::Delete(cm("a", &[])));
        assert!(names("p1").is_empty());
        assert!(cache.owners.read().unwrap().get("p1").is_none());
    }
}

#[test]
fn both_forms_return_equal_values() {
    let mut typed = fed(Form::Typed);
    let mut compact = fed(Form::Compact);
    fn with_data(name: &str, owners: &[&str], value: &str) -> ConfigMap {
        let mut c = cm(name, owners);
        c.data = Some([("k".to_string(), value.to_string())].into());
        c.metadata.labels = Some([("tier".to_string(), value.to_string())].into());
        c
    }
    let events = vec![
        Event::Init,
        Event::InitApply(with_data("a", &["p1"], "x")),
        Event::InitApply(with_data("b", &["p1", "p2"], "y")),
        Event::InitDone,
        Event::Apply(with_data("c", &["p2"], "x")),
        Event::Apply(with_data("a", &["p1"], "y")),
    ];
    for ev in &events {
        (typed.feed)(ev);
        (compact.feed)(ev);
    }
    let sorted = |mut v: Vec<Arc<ConfigMap>>| {
        v.sort_by_key(|c| c.name_any());
        v
    };
    let (t, c) = (&typed.cache, &compact.cache);
    assert_eq!(
        (t.form(), c.form()),
        (Some(Form::Typed), Some(Form::Compact))
    );
    for name in ["a", "b", "c", "d"] {
        assert_eq!(t.get(Some("ns"), name), c.get(Some("ns"), name));
    }
    assert_eq!(
        c.get(Some("ns"), "a").as_deref(),
        Some(&with_data("a", &["p1"], "y"))
    );
    for uid in ["p1", "p2", "p3"] {
        assert_eq!(sorted(t.owned_by(uid)), sorted(c.owned_by(uid)));
    }
    assert_eq!(sorted(c.owned_by("p2")).len(), 2);
    for key in ["x", "y", "z"] {
        assert_eq!(
            sorted(t.indexed("data", key)),
            sorted(c.indexed("data", key))
        );
    }
    assert_eq!(c.indexed("data", "y").len(), 2);
    assert_eq!(sorted(t.state()), sorted(c.state()));
    let tier_x =
        |l: &std::collections::BTreeMap<String, String>| l.get("tier").is_some_and(|t| t == "x");
    assert_eq!(
        sorted(t.labelled(Some("ns"), tier_x)),
        sorted(c.labelled(Some("ns"), tier_x))
    );
    assert_eq!((t.len(), c.len()), (3, 3));
}

#[test]
fn an_update_that_keeps_the_generation_owners_and_no_deletion_kept_the_spec() {
    for form in [Form::Typed, Form::Compact] {
        let Fed { cache, mut feed } = fed(form);
        let mut feed = |ev: Event<ConfigMap>| feed(&ev);
        let at = |version: u64, generation: Option<i64>, owners: &[&str]| {
            let mut c = cm("a", owners);
            c.metadata.resource_version = Some(version.to_string());
            c.metadata.generation = generation;
            c
        };
        let kept = |version: u64| cache.replayed.spec_kept().kept(Some(&version.to_string()));
        feed(Event::Init);
        feed(Event::InitDone);
        feed(Event::Apply(at(10, Some(1), &["p1"])));
        assert!(!kept(10), "{form:?}: created, not kept");
        feed(Event::Apply(at(11, Some(1), &["p1"])));
        assert!(kept(11), "{form:?}: its status or metadata changed");
        feed(Event::Apply(at(12, Some(2), &["p1"])));
        assert!(!kept(12), "{form:?}: its spec changed");
        feed(Event::Apply(at(13, Some(2), &["p1", "p2"])));
        assert!(!kept(13), "{form:?}: its owners changed");
        let mut deleting = at(14, Some(2), &["p1", "p2"]);
        deleting.metadata.deletion_timestamp = Some(Time(Default::default()));
        feed(Event::Apply(deleting));
        assert!(!kept(14), "{form:?}: its deletion began");
        feed(Event::Apply(at(15, None, &["p1"])));
        feed(Event::Apply(at(16, None, &["p1"])));
        assert!(!kept(16), "{form:?}: no generation to tell by");
    }
}
