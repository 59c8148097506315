//! Decoding a kind from JSON text without its `metadata.managedFields`.
//!
//! kube-apiserver sends every object with its managed fields: per field manager, a tree of every field it set
//! (`fieldsV1`), which k8s-openapi decodes into a `serde_json::Value` (a map per field). The runtime never reads
//! them, and the caches drop them ([`crate::cache::strip`]); decoding them and dropping them again took about a
//! tenth of the operator's CPU while it converged on kube-apiserver. [`from_str`] passes over them in the text
//! instead: a deserializer that hands the kind's own deserializer every field of the object but that one.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::{BorrowedStrDeserializer, StrDeserializer};
use serde::de::{
    DeserializeOwned, DeserializeSeed, Deserializer, EnumAccess, IgnoredAny, MapAccess, SeqAccess,
    Visitor,
};

/// `text` decoded as `K`, with `metadata.managedFields` left out (what `serde_json::from_str` gives, less that
/// field).
pub(crate) fn from_str<K: DeserializeOwned>(text: &str) -> serde_json::Result<K> {
    let mut de = serde_json::Deserializer::from_str(text);
    let object = K::deserialize(Lean {
        de: &mut de,
        level: Level::Object,
    })?;
    de.end()?;
    Ok(object)
}

/// Where in the object a map is.
#[derive(Clone, Copy, PartialEq)]
enum Level {
    /// The object: its `metadata` is read at [`Level::Metadata`].
    Object,
    /// The object's metadata: `managedFields` is passed over.
    Metadata,
}

/// A deserializer whose maps at `level` are read through [`Fields`]; anything below is read by `de` itself.
struct Lean<D> {
    de: D,
    level: Level,
}

/// Forwards deserializer methods to the wrapped deserializer, with the visitor as it is.
macro_rules! forward {
    ($($method:ident),*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
            self.de.$method(visitor)
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Lean<D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_any(Wrap::new(visitor, self.level))
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_map(Wrap::new(visitor, self.level))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.de
            .deserialize_struct(name, fields, Wrap::new(visitor, self.level))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.de.deserialize_option(Wrap::new(visitor, self.level))
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.de
            .deserialize_newtype_struct(name, Wrap::new(visitor, self.level))
    }

    forward!(
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_str,
        deserialize_string,
        deserialize_bytes,
        deserialize_byte_buf,
        deserialize_unit,
        deserialize_seq,
        deserialize_identifier,
        deserialize_ignored_any
    );

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.de.deserialize_unit_struct(name, visitor)
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.de.deserialize_tuple(len, visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.de.deserialize_tuple_struct(name, len, visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.de.deserialize_enum(name, variants, visitor)
    }

    fn is_human_readable(&self) -> bool {
        self.de.is_human_readable()
    }
}

/// A visitor whose map is read through [`Fields`] (and whose `Some` or newtype is read at the same level).
struct Wrap<V> {
    visitor: V,
    level: Level,
}

impl<V> Wrap<V> {
    fn new(visitor: V, level: Level) -> Self {
        Wrap { visitor, level }
    }
}

/// Forwards visitor methods that take one value to the wrapped visitor.
macro_rules! visit {
    ($($method:ident($ty:ty)),*) => {$(
        fn $method<E: serde::de::Error>(self, v: $ty) -> Result<V::Value, E> {
            self.visitor.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.visitor.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_map(Fields {
            map,
            level: self.level,
            metadata_next: false,
        })
    }

    fn visit_some<D: Deserializer<'de>>(self, de: D) -> Result<V::Value, D::Error> {
        self.visitor.visit_some(Lean {
            de,
            level: self.level,
        })
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, de: D) -> Result<V::Value, D::Error> {
        self.visitor.visit_newtype_struct(Lean {
            de,
            level: self.level,
        })
    }

    visit!(
        visit_bool(bool),
        visit_i64(i64),
        visit_i128(i128),
        visit_u64(u64),
        visit_u128(u128),
        visit_f64(f64),
        visit_str(&str),
        visit_borrowed_str(&'de str),
        visit_string(String),
        visit_bytes(&[u8]),
        visit_borrowed_bytes(&'de [u8]),
        visit_byte_buf(Vec<u8>)
    );

    fn visit_none<E: serde::de::Error>(self) -> Result<V::Value, E> {
        self.visitor.visit_none()
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<V::Value, E> {
        self.visitor.visit_unit()
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_seq(seq)
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.visitor.visit_enum(data)
    }
}

/// The fields of a map at `level`: the object's `metadata` is read at [`Level::Metadata`], and the metadata's
/// `managedFields` is passed over.
struct Fields<A> {
    map: A,
    level: Level,
    /// The key just read is the object's `metadata`.
    metadata_next: bool,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Fields<A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        loop {
            let Some(Key(key)) = self.map.next_key::<Key<'de>>()? else {
                return Ok(None);
            };
            match (self.level, key.as_ref()) {
                (Level::Metadata, "managedFields") => {
                    self.map.next_value::<IgnoredAny>()?;
                    continue;
                }
                (Level::Object, name) => self.metadata_next = name == "metadata",
                (Level::Metadata, _) => {}
            }
            return match key {
                Cow::Borrowed(key) => seed
                    .deserialize(BorrowedStrDeserializer::<A::Error>::new(key))
                    .map(Some),
                Cow::Owned(key) => seed
                    .deserialize(StrDeserializer::<A::Error>::new(&key))
                    .map(Some),
            };
        }
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, A::Error> {
        if std::mem::take(&mut self.metadata_next) {
            self.map.next_value_seed(Metadata(seed))
        } else {
            self.map.next_value_seed(seed)
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.map.size_hint()
    }
}

/// Reads the value of the object's `metadata` at [`Level::Metadata`].
struct Metadata<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Metadata<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Lean {
            de,
            level: Level::Metadata,
        })
    }
}

/// A map's key, borrowed from the text where it has no escapes.
pub(crate) struct Key<'de>(pub(crate) Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct KeyVisitor<'de>(PhantomData<&'de ()>);
        impl<'de> Visitor<'de> for KeyVisitor<'de> {
            type Value = Key<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field name")
            }

            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_owned())))
            }
        }
        de.deserialize_str(KeyVisitor(PhantomData))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::Deployment;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{DynamicObject, PartialObjectMeta};
    use serde_json::{Value, json};

    fn managed() -> Value {
        json!([{"manager": "m", "operation": "Apply", "apiVersion": "apps/v1", "time": "2026-01-01T00:00:00Z",
                "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}}])
    }

    fn deployment() -> Value {
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default", "managedFields": managed(),
                         "labels": {"managedFields": "a label of that name stays"},
                         "annotations": {"a": "b"}, "resourceVersion": "7"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}, "managedFields": managed()},
                                  "spec": {"containers": [{"name": "web", "image": "nginx"}]}}},
            "status": {"replicas": 2}
        })
    }

    /// What `serde_json` decodes, without the object's own managed fields.
    fn expected<K: DeserializeOwned + kube::Resource>(value: &Value) -> K {
        let mut object: K = serde_json::from_value(value.clone()).unwrap();
        object.meta_mut().managed_fields = None;
        object
    }

    #[test]
    fn a_kind_decodes_as_serde_json_decodes_it_less_its_managed_fields() {
        let value = deployment();
        let text = value.to_string();
        let ours: Deployment = from_str(&text).unwrap();
        assert_eq!(ours, expected::<Deployment>(&value));
        // Only the object's own: a pod template's metadata keeps what it has.
        let template = ours.spec.unwrap().template.metadata.unwrap();
        assert_eq!(template.managed_fields.map(|m| m.len()), Some(1));
        assert!(ours.metadata.labels.unwrap().contains_key("managedFields"));
    }

    #[test]
    fn flattened_and_partial_objects_decode_too() {
        let value = deployment();
        let text = value.to_string();
        let dynamic: DynamicObject = from_str(&text).unwrap();
        assert_eq!(dynamic, expected::<DynamicObject>(&value));
        let partial: PartialObjectMeta<Deployment> = from_str(&text).unwrap();
        assert_eq!(
            partial.metadata,
            expected::<PartialObjectMeta<Deployment>>(&value).metadata
        );
        assert_eq!(partial.metadata.managed_fields, None);
    }

    #[test]
    fn keys_written_with_escapes_are_read_alike() {
        let text = r#"{"apiVersion":"v1","kind":"ConfigMap","meta\u0064ata":{"name":"a","managed\u0046ields":[{"manager":"m"}]},"data":{"k":"v"}}"#;
        let ours: ConfigMap = from_str(text).unwrap();
        assert_eq!(ours.metadata.name.as_deref(), Some("a"));
        assert_eq!(ours.metadata.managed_fields, None);
        assert_eq!(ours.data.unwrap()["k"], "v");
    }

    #[test]
    fn errors_are_serde_jsons() {
        let bad = r#"{"metadata":{"name":1}}"#;
        let ours = from_str::<ConfigMap>(bad).unwrap_err().to_string();
        let theirs = serde_json::from_str::<ConfigMap>(bad)
            .unwrap_err()
            .to_string();
        assert_eq!(ours, theirs);
        assert!(from_str::<ConfigMap>(r#"{"metadata":{}} x"#).is_err());
        assert!(from_str::<ConfigMap>(r#"{"metadata":{"managedFields":[}}"#).is_err());
    }
}
