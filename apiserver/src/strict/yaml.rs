//! The duplicate keys of a YAML (or JSON) server-side apply body, as `sigs.k8s.io/yaml`'s strict decoding
//! reports them: `line 7: key "g" already set in map`, one per duplicate, in document order.
//!
//! serde_yaml tells where a deserialization error happened but not where a key is; so the body is read once
//! to count the duplicates, then once per duplicate with an error raised at that duplicate, whose position
//! is the line of the key.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_yaml::Value;

/// The error text raised at the duplicate being located.
const MARKER: &str = "duplicate key located";

/// The strict errors of `body`'s duplicate keys (empty when it has none or does not parse).
pub fn duplicate_keys(body: &[u8]) -> Vec<String> {
    let mut keys = Vec::new();
    if scan(body, usize::MAX, &mut keys).is_err() {
        return Vec::new();
    }
    keys.iter()
        .enumerate()
        .map(|(n, key)| {
            let line = match scan(body, n, &mut Vec::new()) {
                Err(e) if e.to_string().contains(MARKER) => {
                    e.location().map(|l| l.line()).unwrap_or(0)
                }
                _ => 0,
            };
            format!("line {line}: key {} already set in map", go_key(key))
        })
        .collect()
}

/// Reads `body`, pushing each duplicate key to `found`; fails at the duplicate numbered `stop` (from 0).
fn scan(body: &[u8], stop: usize, found: &mut Vec<Value>) -> Result<(), serde_yaml::Error> {
    let de = serde_yaml::Deserializer::from_slice(body);
    Scan { stop, found }.deserialize(de)
}

/// A key as Go's `%#v` prints it: strings quoted, other scalars bare.
fn go_key(key: &Value) -> String {
    match key {
        Value::String(s) => format!("{s:?}"),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Null => "interface {}(nil)".to_string(),
        other => serde_yaml::to_string(other)
            .unwrap_or_default()
            .trim()
            .to_string(),
    }
}

struct Scan<'f> {
    stop: usize,
    found: &'f mut Vec<Value>,
}

impl<'de> DeserializeSeed<'de> for Scan<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Scan<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a YAML value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }
    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }
    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }
    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }
    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }
    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        loop {
            let item = Scan {
                stop: self.stop,
                found: &mut *self.found,
            };
            if seq.next_element_seed(item)?.is_none() {
                return Ok(());
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let mut keys: Vec<Value> = Vec::new();
        loop {
            let key = Key {
                keys: &keys,
                stop: self.stop,
                found: &mut *self.found,
            };
            let Some(key) = map.next_key_seed(key)? else {
                return Ok(());
            };
            if !keys.contains(&key) {
                keys.push(key);
            }
            let value = Scan {
                stop: self.stop,
                found: &mut *self.found,
            };
            map.next_value_seed(value)?;
        }
    }
}

/// A key of a map holding `keys` already: a duplicate is noted, or, when it is the one numbered `stop`,
/// refused from inside the scalar's visitor, so that serde_yaml gives the error the key's position.
struct Key<'k, 'f> {
    keys: &'k [Value],
    stop: usize,
    found: &'f mut Vec<Value>,
}

impl Key<'_, '_> {
    fn check<E: serde::de::Error>(self, key: Value) -> Result<Value, E> {
        if self.keys.contains(&key) {
            if self.found.len() == self.stop {
                return Err(E::custom(MARKER));
            }
            self.found.push(key.clone());
        }
        Ok(key)
    }
}

impl<'de> DeserializeSeed<'de> for Key<'_, '_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Key<'_, '_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a YAML key")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Value, E> {
        self.check(Value::Bool(v))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Value, E> {
        self.check(Value::from(v))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Value, E> {
        self.check(Value::from(v))
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        self.check(Value::from(v))
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        self.check(Value::String(v.to_string()))
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        self.check(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        // A complex key: read past it; Go refuses it anyway.
        while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
        Ok(Value::Null)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        while map
            .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
            .is_some()
        {}
        Ok(Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_with_the_line_of_the_key() {
        let body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  labels:\n    g: \"1\"\n    g: \"2\"\ndata:\n  a: b\n  a: c\n";
        assert_eq!(
            duplicate_keys(body),
            [
                r#"line 7: key "g" already set in map"#,
                r#"line 10: key "a" already set in map"#,
            ]
        );
    }

    #[test]
    fn json_is_yaml() {
        let body = br#"{"metadata":{"labels":{"a":"1","a":"2"}}}"#;
        assert_eq!(
            duplicate_keys(body),
            [r#"line 1: key "a" already set in map"#]
        );
        assert!(duplicate_keys(br#"{"a":1}"#).is_empty());
    }
}
