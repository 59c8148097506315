//! The type a cache's watch decodes its events into: the kind, decoded from its JSON text.
//!
//! kube's watch events are adjacently tagged (`{"type": .., "object": ..}`), so their derived deserializer
//! can also buffer an object that comes before its type and decode it from serde's buffer: a copy of the
//! kind's whole deserializer for that buffer, which no API server needs (kube-apiserver writes `type` first,
//! and so does the in-memory server) but every binary carries, and which stays resident (see `crate::json`).
//! [`Wire`] takes the object's text from the event and decodes the kind from it with the deserializer for
//! text that kube's answers and the cache use already, passing over the managed fields the cache would drop
//! ([`crate::unmanaged`]); an object before its type is an error saying so.

use std::borrow::Cow;

use kube::Resource;
use kube::api::ObjectMeta;
use serde::de::{DeserializeOwned, Error as _};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

/// A `K` read from a watch event's or a list's text (see the module's documentation).
#[derive(Clone, Debug)]
pub(crate) struct Wire<K>(pub(crate) K);

impl<'de, K: DeserializeOwned> Deserialize<'de> for Wire<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <&RawValue>::deserialize(deserializer).map_err(|e| {
            D::Error::custom(format_args!(
                "an object is read from its JSON text, after its watch event's type ({e})"
            ))
        })?;
        crate::unmanaged::from_str(text.get())
            .map(Wire)
            .map_err(D::Error::custom)
    }
}

impl<K: Resource> Resource for Wire<K> {
    type DynamicType = K::DynamicType;
    type Scope = K::Scope;

    fn kind(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::kind(dt)
    }

    fn group(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::group(dt)
    }

    fn version(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::version(dt)
    }

    fn api_version(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::api_version(dt)
    }

    fn plural(dt: &Self::DynamicType) -> Cow<'_, str> {
        K::plural(dt)
    }

    fn url_path(dt: &Self::DynamicType, namespace: Option<&str>) -> String {
        K::url_path(dt, namespace)
    }

    fn meta(&self) -> &ObjectMeta {
        self.0.meta()
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        self.0.meta_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::core::{ObjectList, WatchEvent};

    #[test]
    fn decodes_a_watch_event_as_kube_does() {
        let line = r#"{"type":"ADDED","object":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"7"},"data":{"k":"v"}}}"#;
        let Ok(WatchEvent::<Wire<ConfigMap>>::Added(Wire(ours))) = serde_json::from_str(line)
        else {
            panic!("not decoded as added")
        };
        let Ok(WatchEvent::<ConfigMap>::Added(theirs)) = serde_json::from_str(line) else {
            panic!("not decoded as added")
        };
        assert_eq!(ours, theirs);
        assert_eq!(ours.metadata.resource_version.as_deref(), Some("7"));
    }

    #[test]
    fn decodes_a_list_as_kube_does() {
        let text = r#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"9","continue":"c"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"},"data":{"k":"v"}}]}"#;
        let ours: ObjectList<Wire<ConfigMap>> = serde_json::from_str(text).unwrap();
        let theirs: ObjectList<ConfigMap> = serde_json::from_str(text).unwrap();
        let ours: Vec<ConfigMap> = ours.items.into_iter().map(|Wire(o)| o).collect();
        assert_eq!(ours, theirs.items);
        assert_eq!(theirs.metadata.continue_.as_deref(), Some("c"));
    }

    #[test]
    fn reports_an_object_that_does_not_decode() {
        let line = r#"{"type":"MODIFIED","object":{"metadata":{"name":1}}}"#;
        let err = serde_json::from_str::<WatchEvent<Wire<ConfigMap>>>(line).unwrap_err();
        assert!(err.to_string().contains("invalid type"), "{err}");
    }

    #[test]
    fn reports_an_object_before_its_type() {
        let line = r#"{"object":{"metadata":{"name":"a"}},"type":"ADDED"}"#;
        let err = serde_json::from_str::<WatchEvent<Wire<ConfigMap>>>(line).unwrap_err();
        assert!(
            err.to_string().contains("after its watch event's type"),
            "{err}"
        );
    }

    #[test]
    fn is_the_kind_it_wraps() {
        assert_eq!(
            Wire::<ConfigMap>::url_path(&(), Some("n")),
            "/api/v1/namespaces/n/configmaps"
        );
        assert_eq!(Wire::<ConfigMap>::plural(&()), "configmaps");
    }
}
