//! Publishing Kubernetes events as kube's `Recorder` publishes them (a new event, or a series when the same
//! event recurs within six minutes), remembering only what a series needs of each recent event.
//!
//! kube's `Recorder` keeps every event it published for six minutes as a whole `Event` object beside its key
//! (about 2 KiB each: two copies of the object reference, the note, the reporter), and scans all of them on
//! every publish. This recorder keeps a 128-bit digest of the key and, per event, its name, namespace, count
//! and when it was last seen (about a hundred bytes), and sweeps expired entries at most every few seconds.

use std::collections::HashMap;
use std::sync::Mutex;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::Event as K8sEvent;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::Client;
use kube::Resource;
use kube::api::{Patch, PatchParams, PostParams};
use kube::runtime::events::{Event, EventType, Reporter};

/// How long a published event is remembered: a recurrence within it extends the event's series (kube's
/// `Recorder` and client-go's recorder use the same).
const TTL: SignedDuration = SignedDuration::from_mins(6);

/// How often expired entries are swept (a lookup ignores an expired entry whenever it runs).
const SWEEP_EVERY: SignedDuration = SignedDuration::from_secs(10);

/// What a series needs of a recently published event.
#[derive(Debug)]
struct Recent {
    name: Box<str>,
    namespace: Box<str>,
    count: i32,
    last_seen: Timestamp,
}

#[derive(Debug)]
struct Memory {
    recent: HashMap<Digest, Recent>,
    swept: Timestamp,
}

/// Publishes events, merging a recurrence into a series.
pub(crate) struct Recorder {
    client: Client,
    reporter: Reporter,
    memory: Mutex<Memory>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("reporter", &self.reporter)
            .finish_non_exhaustive()
    }
}

impl Recorder {
    /// A recorder whose events name `reporter`.
    pub(crate) fn new(client: Client, reporter: Reporter) -> Self {
        Self {
            client,
            reporter,
            memory: Mutex::new(Memory {
                recent: HashMap::new(),
                swept: Timestamp::now(),
            }),
        }
    }

    /// Publishes `ev` about `regarding`: a new event, or, when the same event (type, action, reason, objects)
    /// was published within six minutes, that event's series counted up.
    pub(crate) async fn publish(
        &self,
        ev: &Event,
        regarding: &ObjectReference,
    ) -> Result<(), kube::Error> {
        let now = Timestamp::now();
        let key = key(ev, regarding);
        let known = {
            let mut memory = self.memory.lock().unwrap_or_else(|e| e.into_inner());
            if memory.swept + SWEEP_EVERY < now {
                memory.recent.retain(|_, r| r.last_seen + TTL > now);
                memory.recent.shrink_to_fit();
                memory.swept = now;
            }
            memory
                .recent
                .get(&key)
                .filter(|r| r.last_seen + TTL > now)
                .map(|r| (r.name.clone(), r.namespace.clone(), r.count + 1))
        };
        let series = match known {
            Some((name, namespace, count)) => {
                let series = serde_json::json!({
                    "series": { "count": count, "lastObservedTime": MicroTime(now) }
                });
                let request = kube::core::Request::new(K8sEvent::url_path(&(), Some(&namespace)))
                    .patch(&name, &PatchParams::default(), &Patch::Merge(&series));
                match self.send(request, "patch").await {
                    Ok(_) => Some((name, namespace, count)),
                    // The event is gone (deleted, or expired on the API server first): a new one, as
                    // client-go's recorder creates one then.
                    Err(kube::Error::Api(status)) if status.code == 404 => None,
                    Err(e) => return Err(e),
                }
            }
            None => None,
        };
        let (name, namespace, count) = match series {
            Some(known) => known,
            None => {
                let event = self.generate(ev, regarding, now);
                let namespace = event.metadata.namespace.clone().unwrap_or_default();
                let body = serde_json::to_vec(&event).map_err(kube::Error::SerdeError)?;
                let request = kube::core::Request::new(K8sEvent::url_path(&(), Some(&namespace)))
                    .create(&PostParams::default(), body);
                self.send(request, "create").await?;
                let name = event.metadata.name.unwrap_or_default();
                // A recurrence makes a series of two, as kube's recorder counts.
                (name.into_boxed_str(), namespace.into_boxed_str(), 1)
            }
        };
        let mut memory = self.memory.lock().unwrap_or_else(|e| e.into_inner());
        memory.recent.insert(
            key,
            Recent {
                name,
                namespace,
                count,
                last_seen: now,
            },
        );
        Ok(())
    }

    /// Sends a write of an event and reads the answer's text only to finish the exchange (so the connection is
    /// reused): the stored event is not decoded, as kube's `Api` would decode it.
    async fn send(
        &self,
        request: Result<http::Request<Vec<u8>>, kube::core::request::Error>,
        verb: &'static str,
    ) -> Result<(), kube::Error> {
        let mut request = request.map_err(kube::Error::BuildRequest)?;
        request.extensions_mut().insert(verb);
        self.client.request_text(request).await.map(drop)
    }

    /// The event kube's recorder creates for a first occurrence.
    fn generate(&self, ev: &Event, regarding: &ObjectReference, now: Timestamp) -> K8sEvent {
        let controller = &self.reporter.controller;
        K8sEvent {
            action: Some(ev.action.clone()),
            reason: Some(ev.reason.clone()),
            event_time: Some(MicroTime(now)),
            regarding: Some(regarding.clone()),
            note: ev.note.clone(),
            metadata: ObjectMeta {
                // Cluster-scoped objects' events go to `default`, as kube's recorder puts them.
                namespace: Some(
                    regarding
                        .namespace
                        .clone()
                        .unwrap_or_else(|| "default".into()),
                ),
                name: Some(format!(
                    "{}.{:x}",
                    regarding.name.as_ref().unwrap_or(controller),
                    now.as_nanosecond()
                )),
                ..ObjectMeta::default()
            },
            reporting_controller: Some(controller.clone()),
            reporting_instance: Some(
                self.reporter
                    .instance
                    .clone()
                    .unwrap_or_else(|| controller.clone()),
            ),
            type_: Some(
                match ev.type_ {
                    EventType::Normal => "Normal",
                    EventType::Warning => "Warning",
                }
                .into(),
            ),
            related: ev.secondary.clone(),
            ..K8sEvent::default()
        }
    }
}

/// A digest of what makes two events the same: two independent 64-bit hashes of the key (two different
/// events share one with a chance of about 2^-128 per pair).
type Digest = (u64, u64);

/// What makes two events the same (kube's `EventKey`: type, action, reason and both objects; the reporter
/// is the recorder's own), digested.
fn key(ev: &Event, regarding: &ObjectReference) -> Digest {
    use std::hash::{Hash, Hasher};
    let text = key_text(ev, regarding);
    let mut first = std::hash::DefaultHasher::new();
    text.hash(&mut first);
    let mut second = std::hash::DefaultHasher::new();
    (0x9e37_79b9_7f4a_7c15_u64, &text).hash(&mut second);
    (first.finish(), second.finish())
}

/// The key as one string.
fn key_text(ev: &Event, regarding: &ObjectReference) -> String {
    let mut key = String::with_capacity(160);
    key.push(match ev.type_ {
        EventType::Normal => 'N',
        EventType::Warning => 'W',
    });
    for part in [ev.action.as_str(), ev.reason.as_str()] {
        key.push('\0');
        key.push_str(part);
    }
    push_reference(&mut key, regarding);
    if let Some(related) = &ev.secondary {
        push_reference(&mut key, related);
    }
    key
}

fn push_reference(key: &mut String, r: &ObjectReference) {
    for part in [
        &r.api_version,
        &r.kind,
        &r.namespace,
        &r.name,
        &r.uid,
        &r.resource_version,
        &r.field_path,
    ] {
        key.push('\0');
        key.push_str(part.as_deref().unwrap_or_default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(name: &str) -> ObjectReference {
        ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("ConfigMap".into()),
            namespace: Some("ns".into()),
            name: Some(name.into()),
            uid: Some("u".into()),
            ..ObjectReference::default()
        }
    }

    fn event(reason: &str) -> Event {
        Event {
            type_: EventType::Normal,
            reason: reason.into(),
            note: Some("note".into()),
            action: "Create".into(),
            secondary: None,
        }
    }

    #[test]
    fn the_same_event_about_the_same_object_has_the_same_key() {
        assert_eq!(
            key(&event("A"), &reference("a")),
            key(&event("A"), &reference("a"))
        );
        assert_ne!(
            key(&event("A"), &reference("a")),
            key(&event("B"), &reference("a"))
        );
        assert_ne!(
            key(&event("A"), &reference("a")),
            key(&event("A"), &reference("b"))
        );
        let mut related = event("A");
        related.secondary = Some(reference("b"));
        assert_ne!(
            key(&event("A"), &reference("a")),
            key(&related, &reference("a"))
        );
        let mut warning = event("A");
        warning.type_ = EventType::Warning;
        assert_ne!(
            key(&event("A"), &reference("a")),
            key(&warning, &reference("a"))
        );
        // The note is not part of the key (kube's recorder leaves it out too).
        let mut other_note = event("A");
        other_note.note = Some("other".into());
        assert_eq!(
            key(&event("A"), &reference("a")),
            key(&other_note, &reference("a"))
        );
    }

    #[cfg(feature = "testing")]
    #[tokio::test]
    async fn a_recurrence_counts_the_series_up_and_a_deleted_event_is_published_anew() {
        use kube::api::{Api, DeleteParams, ListParams};
        let server = crate::testing::ApiServer::new();
        let client = server.client();
        let recorder = Recorder::new(
            client.clone(),
            Reporter {
                controller: "c".into(),
                instance: None,
            },
        );
        let mut regarding = reference("a");
        regarding.namespace = Some("default".into());
        let events: Api<K8sEvent> = Api::namespaced(client, "default");
        recorder.publish(&event("A"), &regarding).await.unwrap();
        recorder.publish(&event("A"), &regarding).await.unwrap();
        let listed = events.list(&ListParams::default()).await.unwrap().items;
        assert_eq!(listed.len(), 1, "{listed:?}");
        assert_eq!(listed[0].series.as_ref().map(|s| s.count), Some(2));
        let name = listed[0].metadata.name.clone().unwrap();
        events
            .delete(&name, &DeleteParams::default())
            .await
            .unwrap();
        recorder.publish(&event("A"), &regarding).await.unwrap();
        let listed = events.list(&ListParams::default()).await.unwrap().items;
        assert_eq!(listed.len(), 1, "{listed:?}");
        assert!(listed[0].series.is_none(), "{listed:?}");
        assert_ne!(listed[0].metadata.name.as_deref(), Some(name.as_str()));
    }
}
