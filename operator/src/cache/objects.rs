//! How a cache holds its objects: typed, as kube's reflector store of `Arc<K>` (a parent kind's cache, which
//! the controller's work queue reads), or compact, each object as its compressed JSON ([`compact`](super::compact)),
//! decoded into a fresh `Arc<K>` on each read.
//!
//! k8s-openapi's types hold every optional field inline, set or not: a `Deployment` takes 2,496 bytes before
//! any of its strings, a `Container` 2,144, a `Service` 824. The JSON of an object holds only what is set, and
//! compresses well against another object of its kind, so a compact cache of children takes a fraction of the
//! memory of a typed one, and pays a decode per read (microseconds for a Deployment). Reads decode only what they return: a lookup by key decodes one object, a
//! label selection decodes the labels of each object and then the objects it keeps.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

use futures::FutureExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::runtime::reflector::Store;
use kube::runtime::watcher::Event;
use kube::{Resource, ResourceExt};
use serde::Deserialize;

use super::CachedKind;
use super::compact::Codec;

/// The key of a cached object: `namespace/name`, or `name` for a cluster-scoped object (names and namespaces
/// never hold a `/`).
pub(crate) type Key = Box<str>;

/// The key of the object `name` in `namespace`.
pub(crate) fn key(namespace: Option<&str>, name: &str) -> Key {
    crate::index::object_key(namespace, name).into_boxed_str()
}

/// The key of `obj`.
pub(crate) fn key_of<K: Resource>(obj: &K) -> Key {
    let meta = obj.meta();
    key(
        meta.namespace.as_deref(),
        meta.name.as_deref().unwrap_or_default(),
    )
}

/// How a cache holds its objects, decided when the caches start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// As typed values behind `Arc`, in kube's reflector store: reads share the stored value, and each object
    /// takes the full size of its type. The cache of every kind a controller reconciles as parent (kube-runtime's
    /// controller reads its store), and of kinds whose [`CacheOptions::typed`](super::CacheOptions::typed) asks
    /// for it.
    Typed,
    /// As the JSON each object serializes to (after [`strip`](super::strip)), compressed against the first object
    /// cached, decoded into a fresh value on each read: a fraction of the memory of typed values for k8s-openapi's
    /// kinds, a decode per object read. Every other
    /// cache (children, watched, tracked and referenced kinds, metadata-only caches).
    Compact,
}

/// The objects of one cache, in either form; clones share them.
pub(crate) struct Objects<K: CachedKind> {
    inner: Arc<Inner<K>>,
}

impl<K: CachedKind> Clone for Objects<K> {
    fn clone(&self) -> Self {
        Self {
            inner: self.inner.clone(),
        }
    }
}

struct Inner<K: CachedKind> {
    /// Set when the cache starts (or at once, for a cache over a given store).
    form: OnceLock<Form>,
    /// Whether something asked for the typed store before the start (a controller of the kind as parent).
    wants_typed: AtomicBool,
    /// The typed objects (empty in the compact form).
    store: Store<K>,
    /// The compact objects (empty in the typed form).
    compact: RwLock<HashMap<Key, Box<[u8]>>>,
    /// How the compact objects are encoded.
    codec: Codec,
    /// Whether the first list is stored.
    ready: tokio::sync::watch::Sender<bool>,
}

/// What a compact object's owner references, generation and deletion decode from, skipping every other
/// field.
#[derive(Deserialize)]
struct OwnersOnly {
    #[serde(default)]
    metadata: OwnersMeta,
}

#[derive(Deserialize, Default)]
struct OwnersMeta {
    #[serde(default, rename = "ownerReferences")]
    owner_references: Option<Vec<OwnerReference>>,
    #[serde(default)]
    generation: Option<i64>,
    #[serde(default, rename = "deletionTimestamp")]
    deletion_timestamp: Option<serde::de::IgnoredAny>,
}

/// What a cache's event is compared with: the previous version's owners, generation and deletion.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Previous {
    /// The uids of its owners.
    pub(crate) owner_uids: Vec<String>,
    /// Its `metadata.generation`.
    pub(crate) generation: Option<i64>,
    /// Whether its deletion had begun.
    pub(crate) deleting: bool,
}

/// What a compact object's labels decode from, skipping every other field.
#[derive(Deserialize)]
struct LabelsOnly {
    #[serde(default)]
    metadata: LabelsMeta,
}

#[derive(Deserialize, Default)]
struct LabelsMeta {
    #[serde(default)]
    labels: Option<BTreeMap<String, String>>,
}

impl<K: CachedKind> Objects<K> {
    /// Objects whose form is decided when the cache starts; `store` is the typed form's store.
    pub(crate) fn new(store: Store<K>) -> Self {
        Self {
            inner: Arc::new(Inner {
                form: OnceLock::new(),
                wants_typed: AtomicBool::new(false),
                store,
                compact: RwLock::default(),
                codec: Codec::default(),
                ready: tokio::sync::watch::channel(false).0,
            }),
        }
    }

    /// Typed objects over `store`, with no watch behind them.
    pub(crate) fn typed(store: Store<K>) -> Self {
        let objects = Self::new(store);
        let _ = objects.inner.form.set(Form::Typed);
        objects
    }

    /// Asks for the typed form (honoured when asked before the start).
    pub(crate) fn want_typed(&self) {
        self.inner.wants_typed.store(true, Ordering::Release);
    }

    /// Decides the form at the start: typed when asked for before, or when `typed`.
    pub(crate) fn start(&self, typed: bool) -> Form {
        let form = if typed || self.inner.wants_typed.load(Ordering::Acquire) {
            Form::Typed
        } else {
            Form::Compact
        };
        *self.inner.form.get_or_init(|| form)
    }

    /// The form, once decided.
    pub(crate) fn form(&self) -> Option<Form> {
        self.inner.form.get().copied()
    }

    fn compact(&self) -> bool {
        self.form() == Some(Form::Compact)
    }

    /// The typed form's store.
    pub(crate) fn store(&self) -> &Store<K> {
        &self.inner.store
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<Key, Box<[u8]>>> {
        self.inner.compact.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The object under `key`.
    pub(crate) fn get(&self, key: &str) -> Option<Arc<K>> {
        if self.compact() {
            let bytes = self.read();
            self.decode(key, bytes.get(key)?).map(Arc::new)
        } else {
            self.inner.store.get(&crate::index::object_ref_of(key))
        }
    }

    /// Every object.
    pub(crate) fn state(&self) -> Vec<Arc<K>> {
        self.select(|_| true)
    }

    /// The objects whose keys `keep` keeps (a compact object is decoded only when kept).
    pub(crate) fn select(&self, keep: impl Fn(&str) -> bool) -> Vec<Arc<K>> {
        if self.compact() {
            self.read()
                .iter()
                .filter(|(k, _)| keep(k))
                .filter_map(|(k, b)| self.decode(k, b).map(Arc::new))
                .collect()
        } else {
            self.inner
                .store
                .state()
                .into_iter()
                .filter(|o| keep(&key_of(o.as_ref())))
                .collect()
        }
    }

    /// The objects in `namespace` (any, when `None`) whose labels `keep` keeps (a compact object is decoded
    /// whole only when kept).
    pub(crate) fn labelled(
        &self,
        namespace: Option<&str>,
        keep: impl Fn(&BTreeMap<String, String>) -> bool,
    ) -> Vec<Arc<K>> {
        let in_namespace =
            |k: &str| namespace.is_none_or(|ns| k.split_once('/').is_some_and(|(n, _)| n == ns));
        if !self.compact() {
            return self
                .inner
                .store
                .state()
                .into_iter()
                .filter(|o| in_namespace(&key_of(o.as_ref())) && keep(o.labels()))
                .collect();
        }
        let empty = BTreeMap::new();
        self.read()
            .iter()
            .filter(|(k, _)| in_namespace(k))
            .filter(|(k, b)| {
                self.inner
                    .codec
                    .decode::<LabelsOnly>(k, b)
                    .is_some_and(|l| keep(l.metadata.labels.as_ref().unwrap_or(&empty)))
            })
            .filter_map(|(k, b)| self.decode(k, b).map(Arc::new))
            .collect()
    }

    /// How many objects are held.
    pub(crate) fn len(&self) -> usize {
        if self.compact() {
            self.read().len()
        } else {
            self.inner.store.len()
        }
    }

    /// The owners, generation and deletion of the object under `key`, or `None` when the cache does not hold
    /// it (a compact object's other fields are skipped, not decoded).
    pub(crate) fn previous(&self, key: &str) -> Option<Previous> {
        let uids = |refs: &[OwnerReference]| refs.iter().map(|r| r.uid.clone()).collect();
        if self.compact() {
            let bytes = self.read();
            let meta = self
                .inner
                .codec
                .decode::<OwnersOnly>(key, bytes.get(key)?)?
                .metadata;
            Some(Previous {
                owner_uids: meta
                    .owner_references
                    .as_deref()
                    .map(uids)
                    .unwrap_or_default(),
                generation: meta.generation,
                deleting: meta.deletion_timestamp.is_some(),
            })
        } else {
            self.get(key).map(|o| Previous {
                owner_uids: uids(o.owner_references()),
                generation: o.meta().generation,
                deleting: o.meta().deletion_timestamp.is_some(),
            })
        }
    }

    fn decode(&self, key: &str, bytes: &[u8]) -> Option<K> {
        self.inner.codec.decode(key, bytes)
    }

    /// The compressed form of `obj`, to hold compact.
    fn encode(&self, obj: &K) -> Option<(Key, Box<[u8]>)> {
        self.inner.codec.encode(obj)
    }

    /// Marks the first list stored.
    pub(crate) fn mark_ready(&self) {
        self.inner.ready.send_replace(true);
    }

    /// Whether the first list is stored.
    pub(crate) async fn ready(&self) {
        let mut marked = self.inner.ready.subscribe();
        let marked = async move {
            let _ = marked.wait_for(|r| *r).await;
        };
        // A store given from outside (tests) is ready when its writer says so.
        let store = self.inner.store.clone();
        let typed = async move {
            if store.wait_until_ready().await.is_err() {
                std::future::pending::<()>().await;
            }
        };
        futures::future::select(marked.boxed(), typed.boxed()).await;
    }
}

/// Applies watch events to compact objects as kube's reflector writer applies them to its store: a list
/// replaces every object once it is complete.
pub(crate) struct CompactWriter<K: CachedKind> {
    objects: Objects<K>,
    /// The list in progress.
    pending: Option<HashMap<Key, Box<[u8]>>>,
}

impl<K: CachedKind> CompactWriter<K> {
    /// A writer of `objects`.
    pub(crate) fn new(objects: Objects<K>) -> Self {
        Self {
            objects,
            pending: None,
        }
    }

    /// Applies one event.
    pub(crate) fn apply(&mut self, ev: &Event<K>) {
        let write = || {
            self.objects
                .inner
                .compact
                .write()
                .unwrap_or_else(|e| e.into_inner())
        };
        match ev {
            Event::Init => self.pending = Some(HashMap::new()),
            Event::InitApply(o) => {
                if let (Some(pending), Some((k, b))) =
                    (self.pending.as_mut(), self.objects.encode(o))
                {
                    pending.insert(k, b);
                }
            }
            Event::InitDone => {
                if let Some(mut listed) = self.pending.take() {
                    listed.shrink_to_fit();
                    *write() = listed;
                }
                self.objects.mark_ready();
            }
            Event::Apply(o) => {
                if let Some((k, b)) = self.objects.encode(o) {
                    write().insert(k, b);
                }
            }
            Event::Delete(o) => {
                write().remove(&key_of(o));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::{Secret, Service, ServicePort, ServiceSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    use kube::CustomResource;
    use kube::runtime::reflector::store::Writer;
    use schemars::JsonSchema;
    use serde::Serialize;

    /// Encodes `obj` with `codec` (whose dictionary may be an object of another kind) and decodes it back.
    fn round_trip<K: CachedKind + PartialEq>(codec: &Codec, obj: K) {
        let (key, bytes) = codec.encode(&obj).unwrap();
        assert_eq!(key, key_of(&obj));
        let back: K = codec.decode(&key, &bytes).unwrap();
        assert_eq!(back, obj);
    }

    fn meta(name: &str) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.into()),
            namespace: Some("ns".into()),
            uid: Some(format!("uid-{name}")),
            resource_version: Some("17".into()),
            labels: Some([("app".to_string(), name.to_string())].into()),
            owner_references: Some(vec![OwnerReference {
                api_version: "example.dev/v1".into(),
                kind: "App".into(),
                name: "parent".into(),
                uid: "p1".into(),
                controller: Some(true),
                block_owner_deletion: Some(true),
            }]),
            ..ObjectMeta::default()
        }
    }

    /// A Deployment as kube-apiserver defaults it: every field the defaulting sets, set.
    fn deployment(name: &str) -> Deployment {
        let value = serde_json::json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": serde_json::to_value(meta(name)).unwrap(),
            "spec": {
                "progressDeadlineSeconds": 600,
                "replicas": 2,
                "revisionHistoryLimit": 10,
                "selector": {"matchLabels": {"app": name}},
                "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}, "type": "RollingUpdate"},
                "template": {
                    "metadata": {"labels": {"app": name}},
                    "spec": {
                        "containers": [{
                            "image": "nginx:1.27",
                            "imagePullPolicy": "IfNotPresent",
                            "name": "web",
                            "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                            "resources": {"limits": {"memory": "128Mi"}, "requests": {"cpu": "100m"}},
                            "terminationMessagePath": "/dev/termination-log",
                            "terminationMessagePolicy": "File",
                            "env": [{"name": "A", "value": ""}, {"name": "B", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}]
                        }],
                        "dnsPolicy": "ClusterFirst",
                        "restartPolicy": "Always",
                        "schedulerName": "default-scheduler",
                        "securityContext": {},
                        "terminationGracePeriodSeconds": 30,
                        "volumes": []
                    }
                }
            },
            "status": {
                "conditions": [{"type": "Available", "status": "True", "lastTransitionTime": "2026-11-25T23:00:00Z", "lastUpdateTime": "2026-11-25T23:00:01Z", "reason": "MinimumReplicasAvailable", "message": "ok"}],
                "observedGeneration": 1
            }
        });
        serde_json::from_value(value).unwrap()
    }

    #[derive(CustomResource, Serialize, Deserialize, Clone, Debug, PartialEq, JsonSchema)]
    #[kube(
        group = "example.dev",
        version = "v1",
        kind = "Widget",
        namespaced,
        derive = "PartialEq"
    )]
    struct WidgetSpec {
        size: Option<u32>,
        tags: Vec<String>,
        extra: serde_json::Value,
    }

    #[test]
    fn compact_objects_decode_to_exactly_what_was_stored() {
        let codec = Codec::default();
        round_trip(&codec, deployment("web"));
        round_trip(&codec, deployment("api"));
        round_trip(&codec, Deployment::default());
        round_trip(&Codec::default(), Deployment::default());
        round_trip(
            &codec,
            Service {
                metadata: meta("svc"),
                spec: Some(ServiceSpec {
                    ports: Some(vec![ServicePort {
                        port: 80,
                        target_port: Some(IntOrString::Int(8080)),
                        name: Some("http".into()),
                        ..ServicePort::default()
                    }]),
                    selector: Some([("app".to_string(), "svc".to_string())].into()),
                    cluster_ip: Some("10.0.0.7".into()),
                    ..ServiceSpec::default()
                }),
                ..Service::default()
            },
        );
        round_trip(
            &codec,
            Secret {
                metadata: meta("s"),
                data: Some(
                    [
                        ("bin".to_string(), ByteString((0u8..=255).collect())),
                        ("empty".to_string(), ByteString(Vec::new())),
                    ]
                    .into(),
                ),
                type_: Some("Opaque".into()),
                immutable: Some(false),
                ..Secret::default()
            },
        );
        let mut widget = Widget::new(
            "w",
            WidgetSpec {
                size: Some(3),
                tags: vec!["a".into(), String::new()],
                extra: serde_json::json!({"nested": [1, 2.5, null, {"k": "v"}]}),
            },
        );
        widget.metadata = meta("w");
        round_trip(&codec, widget);
    }

    /// An object compressed against another of its kind takes a fraction of its JSON.
    #[test]
    fn compact_objects_compress_against_their_kind() {
        let codec = Codec::default();
        let json = serde_json::to_vec(&deployment("web")).unwrap().len();
        codec.encode(&deployment("first")).unwrap();
        assert!(codec.dictionary_len() > 1_000);
        let (_, bytes) = codec.encode(&deployment("web")).unwrap();
        assert!(bytes.len() * 4 < json, "{} of {json} bytes", bytes.len());
    }

    /// What a compact cache costs per object: its bytes, and the time to encode and decode it (run with
    /// `cargo test --release -p kubewright --lib decode_cost -- --ignored --nocapture`).
    #[test]
    #[ignore = "a measurement, not a check"]
    fn decode_cost() {
        let codec = Codec::default();
        codec.encode(&deployment("first")).unwrap();
        let d = deployment("web");
        let json = serde_json::to_vec(&d).unwrap().len();
        let (key, bytes) = codec.encode(&d).unwrap();
        let rounds = 20_000;
        let time = |f: &dyn Fn()| {
            let started = std::time::Instant::now();
            for _ in 0..rounds {
                f();
            }
            started.elapsed().as_nanos() / rounds
        };
        let encode_ns = time(&|| {
            std::hint::black_box(codec.encode(std::hint::black_box(&d)));
        });
        let decode_ns = time(&|| {
            std::hint::black_box(codec.decode::<Deployment>(&key, std::hint::black_box(&bytes)));
        });
        let owners_ns = time(&|| {
            std::hint::black_box(codec.decode::<OwnersOnly>(&key, std::hint::black_box(&bytes)));
        });
        let clone_ns = time(&|| {
            std::hint::black_box(std::hint::black_box(&d).clone());
        });
        println!(
            "Deployment: {json} bytes of JSON, {} compressed; encode {encode_ns} ns, decode {decode_ns} ns, owner references only {owners_ns} ns, clone of the typed value {clone_ns} ns",
            bytes.len()
        );
    }

    #[test]
    fn a_compact_object_that_does_not_decode_is_absent() {
        let objects = Objects::<Deployment>::new(Writer::default().as_reader());
        assert_eq!(objects.start(false), Form::Compact);
        objects.inner.compact.write().unwrap().insert(
            "ns/bad".into(),
            b"{\"spec\": 7}".to_vec().into_boxed_slice(),
        );
        assert!(objects.get("ns/bad").is_none());
        assert!(objects.state().is_empty());
        assert_eq!(objects.previous("ns/bad"), None);
        assert_eq!(objects.len(), 1);
    }

    /// Both forms, fed the same events, return the same values.
    #[test]
    fn both_forms_read_alike() {
        let mut writer = Writer::<Deployment>::default();
        let typed = Objects::new(writer.as_reader());
        typed.want_typed();
        assert_eq!(typed.start(false), Form::Typed);
        let compact = Objects::new(Writer::<Deployment>::default().as_reader());
        assert_eq!(compact.start(false), Form::Compact);
        let mut compact_writer = CompactWriter::new(compact.clone());
        let mut other = deployment("other");
        other.metadata.namespace = Some("elsewhere".into());
        other.metadata.labels = None;
        other.metadata.generation = Some(3);
        other.metadata.deletion_timestamp = Some(Time(Default::default()));
        for ev in [
            Event::Init,
            Event::InitApply(deployment("web")),
            Event::InitApply(deployment("api")),
            Event::InitApply(other),
            Event::InitDone,
            Event::Apply(deployment("db")),
            Event::Delete(deployment("api")),
        ] {
            writer.apply_watcher_event(&ev);
            compact_writer.apply(&ev);
        }
        assert!(compact.ready().now_or_never().is_some());
        let sorted = |mut v: Vec<Arc<Deployment>>| {
            v.sort_by_key(|o| key_of(o.as_ref()));
            v
        };
        assert_eq!(typed.len(), 3);
        assert_eq!(compact.len(), 3);
        assert_eq!(sorted(typed.state()), sorted(compact.state()));
        for k in ["ns/web", "ns/db", "ns/api", "elsewhere/other", "web"] {
            assert_eq!(typed.get(k), compact.get(k), "{k}");
            assert_eq!(typed.previous(k), compact.previous(k), "{k}");
        }
        assert_eq!(
            compact.previous("ns/web"),
            Some(Previous {
                owner_uids: vec!["p1".into()],
                generation: None,
                deleting: false,
            })
        );
        assert_eq!(
            compact.previous("elsewhere/other"),
            Some(Previous {
                owner_uids: vec!["p1".into()],
                generation: Some(3),
                deleting: true,
            })
        );
        assert_eq!(compact.previous("ns/api"), None, "deleted");
        assert_eq!(compact.get("ns/web").as_deref(), Some(&deployment("web")));
        let labelled = |o: &Objects<Deployment>, ns| {
            sorted(o.labelled(ns, |l| l.get("app").is_some_and(|a| a == "db")))
        };
        assert_eq!(labelled(&compact, Some("ns")).len(), 1);
        assert_eq!(labelled(&typed, Some("ns")), labelled(&compact, Some("ns")));
        assert_eq!(labelled(&typed, None), labelled(&compact, None));
        let everything = |o: &Objects<Deployment>| sorted(o.labelled(None, |_| true));
        assert_eq!(everything(&compact).len(), 3);
        assert_eq!(everything(&typed), everything(&compact));
        assert_eq!(
            sorted(typed.select(|k| k.starts_with("elsewhere/"))),
            sorted(compact.select(|k| k.starts_with("elsewhere/")))
        );
    }
}
