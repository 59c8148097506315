//! JSON decoded as `sigs.k8s.io/json`'s `UnmarshalStrict` decodes a patch: the value, plus a strict error for
//! every duplicate key (and, for a JSON patch, every operation field Go's operation struct does not have), in
//! document order, each naming its path (`metadata.labels.a`, `[0].value.e`).

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// The fields of kube-apiserver's JSON patch operation struct.
const OPERATION_FIELDS: [&str; 4] = ["op", "path", "from", "value"];

/// How the top level of a body is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// Any JSON value (a merge or strategic merge patch).
    Any,
    /// A JSON patch: the fields of each operation other than `op`, `path`, `from` and `value` are unknown.
    Operations,
}

/// Decodes `body` as JSON, returning the value (the last of duplicate keys wins, as in Go) and the strict
/// errors (`duplicate field "a.b"`, `unknown field "[0].x"`).
pub fn decode(body: &[u8], shape: Shape) -> Result<(Value, Vec<String>), serde_json::Error> {
    decode_with_keys(body, shape).map(|(value, errors, _)| (value, errors))
}

/// [`decode`], also returning the path of every key in document order (a repeated key each time it occurs).
pub fn decode_with_keys(
    body: &[u8],
    shape: Shape,
) -> Result<(Value, Vec<String>, Vec<String>), serde_json::Error> {
    let mut errors = Vec::new();
    let mut keys = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(body);
    let value = Node {
        path: String::new(),
        errors: &mut errors,
        keys: &mut keys,
        shape,
        depth: 0,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok((value, errors, keys))
}

/// Strict errors (`unknown field "p"`, `duplicate field "p"`) in the order Go's strict decoder meets them
/// in a body whose keys are `keys` (from [`decode_with_keys`]): an unknown field where its key first occurs,
/// a duplicate where its key occurs the second time. Errors whose path is not found keep their order, last.
pub fn in_document_order(errors: Vec<String>, keys: &[String]) -> Vec<String> {
    let position = |error: &String| {
        let (nth, path) = if let Some(rest) = error.strip_prefix("duplicate field ") {
            (1, rest)
        } else if let Some(rest) = error.strip_prefix("unknown field ") {
            (0, rest)
        } else {
            return usize::MAX;
        };
        let path = path.trim_matches('"');
        keys.iter()
            .enumerate()
            .filter(|(_, k)| k.as_str() == path)
            .nth(nth)
            .map_or(usize::MAX, |(i, _)| i)
    };
    let mut keyed: Vec<(usize, String)> = errors.into_iter().map(|e| (position(&e), e)).collect();
    keyed.sort_by_key(|(at, _)| *at);
    keyed.into_iter().map(|(_, e)| e).collect()
}

/// A `.`-joined path as `sigs.k8s.io/json` prints it: fields joined with `.`, indexes as `[i]`.
pub fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// One value being decoded, at `path`.
struct Node<'e> {
    path: String,
    errors: &'e mut Vec<String>,
    keys: &'e mut Vec<String>,
    shape: Shape,
    depth: usize,
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Value, E> {
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom("a number JSON cannot hold"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        loop {
            let node = Node {
                path: format!("{}[{}]", self.path, out.len()),
                errors: &mut *self.errors,
                keys: &mut *self.keys,
                shape: self.shape,
                depth: self.depth + 1,
            };
            match seq.next_element_seed(node)? {
                Some(v) => out.push(v),
                None => return Ok(Value::Array(out)),
            }
        }
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let operation = self.shape == Shape::Operations && self.depth == 1;
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = child(&self.path, &key);
            self.keys.push(path.clone());
            if operation && !OPERATION_FIELDS.contains(&key.as_str()) {
                self.errors.push(format!("unknown field \"{path}\""));
            } else if out.contains_key(&key) {
                self.errors.push(format!("duplicate field \"{path}\""));
            }
            let node = Node {
                path,
                errors: &mut *self.errors,
                keys: &mut *self.keys,
                shape: self.shape,
                depth: self.depth + 1,
            };
            let value = map.next_value_seed(node)?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_in_document_order_with_paths() {
        let (v, errs) = decode(
            br#"{"spec":{"foo":"x","foo":"y"},"metadata":{"labels":{"b":"1","b":"2"}},"l":[{"a":1,"a":2}]}"#,
            Shape::Any,
        )
        .unwrap();
        assert_eq!(v["spec"]["foo"], "y");
        assert_eq!(
            errs,
            [
                r#"duplicate field "spec.foo""#,
                r#"duplicate field "metadata.labels.b""#,
                r#"duplicate field "l[0].a""#,
            ]
        );
    }

    #[test]
    fn unknown_and_duplicate_fields_in_document_order() {
        let body = br#"{"metadata":{"a":1,"a":2},"spec":{"x":1,"r":2,"r":3},"z":1}"#;
        let (_, dups, keys) = decode_with_keys(body, Shape::Any).unwrap();
        let errors = dups
            .into_iter()
            .chain([
                r#"unknown field "z""#.to_string(),
                r#"unknown field "spec.x""#.to_string(),
            ])
            .collect();
        assert_eq!(
            in_document_order(errors, &keys),
            [
                r#"duplicate field "metadata.a""#,
                r#"unknown field "spec.x""#,
                r#"duplicate field "spec.r""#,
                r#"unknown field "z""#,
            ]
        );
    }

    #[test]
    fn operations_have_four_fields() {
        let (_, errs) = decode(
            br#"[{"op":"add","path":"/a","value":{"e":"1","e":"2"},"extra":1,"value":3}]"#,
            Shape::Operations,
        )
        .unwrap();
        assert_eq!(
            errs,
            [
                r#"duplicate field "[0].value.e""#,
                r#"unknown field "[0].extra""#,
                r#"duplicate field "[0].value""#,
            ]
        );
    }
}
