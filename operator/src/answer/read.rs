//! What the runtime reads of every answer, in one pass over its text.
//!
//! The managed fields are most of a stored object's metadata. Reading the object's fields as text and then its
//! metadata's fields again passed over them twice, and built two maps per answer; one visitor reads the same
//! in one pass.

use std::borrow::Cow;
use std::fmt;
use std::hash::{DefaultHasher, Hash, Hasher};

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::unmanaged::Key;

/// The stored object's uid and `resourceVersion`, where its status is in the text, and the hash of its content
/// ([`Answer::content`](super::Answer::content)).
#[derive(Debug, Clone, Default)]
pub(super) struct Read {
    pub(super) uid: Option<Box<str>>,
    pub(super) version: Option<Box<str>>,
    pub(super) status: Option<std::ops::Range<usize>>,
    pub(super) hash: Option<u64>,
}

impl Read {
    /// Reads `text`, checking that it is JSON. Of an object: the identity from its metadata, the status's place
    /// in `text`, and one hash of the rest, without the metadata the server keeps (`resourceVersion`,
    /// `managedFields`), its fields hashed in key order. Of any other JSON: nothing.
    pub(super) fn of(text: &str) -> serde_json::Result<Read> {
        let mut de = serde_json::Deserializer::from_str(text);
        match de
            .deserialize_map(ObjectVisitor)
            .and_then(|o| de.end().map(|()| o))
        {
            Ok(object) => Ok(object.read(text)),
            // Not an object: only checked to be JSON.
            Err(_) => serde_json::from_str::<IgnoredAny>(text).map(|_| Read::default()),
        }
    }
}

/// An object's fields, each as its JSON text, in the order they came; the metadata's fields read apart.
struct Object<'de> {
    fields: Vec<(Cow<'de, str>, Field<'de>)>,
}

enum Field<'de> {
    Text(&'de str),
    /// The metadata's fields but `managedFields`; `None` when the metadata is not an object.
    Metadata(Option<Vec<(Cow<'de, str>, &'de str)>>),
}

/// `fields` sorted by key, the last of equal keys kept (what collecting them into a map gives).
fn by_key<T>(mut fields: Vec<(Cow<'_, str>, T)>) -> Vec<(Cow<'_, str>, T)> {
    fields.reverse();
    fields.sort_by(|a, b| a.0.cmp(&b.0));
    fields.dedup_by(|later, first| later.0 == first.0);
    fields
}

impl Object<'_> {
    fn read(self, text: &str) -> Read {
        let mut read = Read::default();
        let mut h = DefaultHasher::new();
        let mut hashed = true;
        for (k, field) in by_key(self.fields) {
            match (k.as_ref(), field) {
                ("status", Field::Text(v)) => {
                    let at = v.as_ptr() as usize - text.as_ptr() as usize;
                    read.status = Some(at..at + v.len());
                }
                (_, Field::Metadata(None)) => hashed = false,
                (_, Field::Metadata(Some(meta))) => {
                    k.hash(&mut h);
                    for (mk, mv) in by_key(meta) {
                        match mk.as_ref() {
                            "resourceVersion" => read.version = serde_json::from_str(mv).ok(),
                            other => {
                                if other == "uid" {
                                    read.uid = serde_json::from_str(mv).ok();
                                }
                                (&mk, mv).hash(&mut h);
                            }
                        }
                    }
                }
                (_, Field::Text(v)) => (&k, v).hash(&mut h),
            }
        }
        read.hash = hashed.then(|| h.finish());
        read
    }
}

struct ObjectVisitor;

impl<'de> Visitor<'de> for ObjectVisitor {
    type Value = Object<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Object<'de>, A::Error> {
        let mut fields = Vec::new();
        while let Some(Key(key)) = map.next_key()? {
            let field = if key == "metadata" {
                Field::Metadata(map.next_value_seed(MetadataSeed)?)
            } else {
                Field::Text(map.next_value::<&'de RawValue>()?.get())
            };
            fields.push((key, field));
        }
        Ok(Object { fields })
    }
}

/// Reads the metadata's fields, passing over `managedFields`; any other JSON in its place reads as `None`.
struct MetadataSeed;

type MetadataFields<'de> = Option<Vec<(Cow<'de, str>, &'de str)>>;

impl<'de> DeserializeSeed<'de> for MetadataSeed {
    type Value = MetadataFields<'de>;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Self::Value, D::Error> {
        de.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for MetadataSeed {
    type Value = MetadataFields<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut fields = Vec::new();
        while let Some(Key(key)) = map.next_key()? {
            if key == "managedFields" {
                map.next_value::<IgnoredAny>()?;
            } else {
                fields.push((key, map.next_value::<&'de RawValue>()?.get()));
            }
        }
        Ok(Some(fields))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;

    /// The uid, the `resourceVersion` and the hash.
    type Identity = (Option<Box<str>>, Option<Box<str>>, Option<u64>);

    /// The reading before it was one pass: the object's fields into a map, then the metadata's.
    fn two_passes(text: &str) -> Option<Identity> {
        type Fields<'a> = BTreeMap<Cow<'a, str>, &'a RawValue>;
        let fields: Fields<'_> = serde_json::from_str(text).ok()?;
        let (mut uid, mut version, mut h, mut hashed) = (None, None, DefaultHasher::new(), true);
        for (k, v) in &fields {
            match k.as_ref() {
                "status" => {}
                "metadata" => {
                    k.hash(&mut h);
                    let Ok(meta) = serde_json::from_str::<Fields<'_>>(v.get()) else {
                        hashed = false;
                        continue;
                    };
                    for (mk, mv) in &meta {
                        match mk.as_ref() {
                            "resourceVersion" => version = serde_json::from_str(mv.get()).ok(),
                            "managedFields" => {}
                            other => {
                                if other == "uid" {
                                    uid = serde_json::from_str(mv.get()).ok();
                                }
                                (mk, mv.get()).hash(&mut h);
                            }
                        }
                    }
                }
                _ => (k, v.get()).hash(&mut h),
            }
        }
        Some((uid, version, hashed.then(|| h.finish())))
    }

    #[test]
    fn one_pass_reads_what_two_did() {
        for value in [
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "x", "uid": "u", "resourceVersion": "3", "labels": {"a": "b"},
                                "managedFields": [{"manager": "m", "fieldsV1": {"f:data": {}}}]},
                   "data": {"k": "v"}, "status": {"n": 1}}),
            json!({"metadata": {"uid": 1, "resourceVersion": ["x"]}, "spec": [1, 2]}),
            json!({"metadata": "text", "spec": {}}),
            json!({"metadata": null}),
            json!({"metadata": [1, {"a": 2}], "b": 1}),
            json!({}),
        ] {
            let text = value.to_string();
            let read = Read::of(&text).unwrap();
            assert_eq!(
                two_passes(&text),
                Some((read.uid, read.version, read.hash)),
                "{text}"
            );
        }
        // The last of repeated keys counts, as in a map.
        let text = r#"{"metadata":{"uid":"a","uid":"b"},"data":1,"data":2}"#;
        let read = Read::of(text).unwrap();
        assert_eq!(two_passes(text), Some((read.uid, read.version, read.hash)));
        assert_eq!(Read::of(text).unwrap().uid.as_deref(), Some("b"));
    }
}
