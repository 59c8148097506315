//! Protobuf request bodies of every built-in kind, read by the messages of `schema.rs` into the JSON Go's
//! `encoding/json` writes of the decoded object: for the kinds and fields the per-kind mapping (`core.rs`,
//! `workloads.rs`, ...) does not carry.
//!
//! A field Go holds by value is written even when absent from the wire (as its zero), unless its JSON is
//! `omitempty` and it is zero; a pointer, list or map only when on the wire (an absent list is left out
//! where Go writes `null`: the same to the API). The types with a JSON form of their own are read as
//! `encode.rs` writes them. A zero-valued `status` at the top is left out, as the per-kind mapping does.

use base64::Engine;
use serde_json::{Map, Value, json};

use super::error::{ProtobufError, Result};
use super::schema::{self, Field, Form, Label};

/// The JSON of `raw`, an object of message `name`; a zero-valued `status` is left out unless `keep_status`.
pub(super) fn object(name: &str, raw: &[u8], keep_status: bool) -> Result<Value> {
    let mut object = message(name, raw)?;
    if !keep_status
        && let Some(o) = object.as_object_mut()
        && o.get("status").is_some_and(is_zero)
    {
        o.remove("status");
    }
    Ok(object)
}

fn bad(at: &str, why: impl Into<String>) -> ProtobufError {
    ProtobufError::Undecodable {
        at: at.into(),
        why: why.into(),
    }
}

/// A value on the wire.
enum Wire<'a> {
    Varint(u64),
    Fixed64(u64),
    Fixed32(u32),
    Bytes(&'a [u8]),
}

fn varint(b: &[u8], at: &str) -> Result<(u64, usize)> {
    let mut v = 0u64;
    for (i, byte) in b.iter().enumerate().take(10) {
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return Ok((v, i + 1));
        }
    }
    Err(bad(at, "a truncated varint"))
}

/// The fields of a message, in wire order.
fn wire_fields<'a>(mut b: &'a [u8], at: &str) -> Result<Vec<(u32, Wire<'a>)>> {
    let mut out = Vec::new();
    while !b.is_empty() {
        let (key, n) = varint(b, at)?;
        b = &b[n..];
        let number = u32::try_from(key >> 3).map_err(|_| bad(at, "a field number out of range"))?;
        let take = |b: &'a [u8], n: usize| b.get(..n).ok_or_else(|| bad(at, "a truncated field"));
        let value = match key & 7 {
            0 => {
                let (v, n) = varint(b, at)?;
                b = &b[n..];
                Wire::Varint(v)
            }
            1 => {
                let bytes = take(b, 8)?;
                b = &b[8..];
                Wire::Fixed64(u64::from_le_bytes(bytes.try_into().unwrap_or_default()))
            }
            2 => {
                let (len, n) = varint(b, at)?;
                let len = usize::try_from(len).map_err(|_| bad(at, "a length out of range"))?;
                let bytes = take(&b[n..], len)?;
                b = &b[n + len..];
                Wire::Bytes(bytes)
            }
            5 => {
                let bytes = take(b, 4)?;
                b = &b[4..];
                Wire::Fixed32(u32::from_le_bytes(bytes.try_into().unwrap_or_default()))
            }
            other => return Err(bad(at, format!("wire type {other}"))),
        };
        out.push((number, value));
    }
    Ok(out)
}

fn bytes_of<'a>(w: &Wire<'a>, at: &str) -> Result<&'a [u8]> {
    match w {
        Wire::Bytes(b) => Ok(b),
        _ => Err(bad(at, "expected a length-delimited field")),
    }
}

fn message(name: &str, raw: &[u8]) -> Result<Value> {
    let m = schema::message(name).ok_or_else(|| bad(name, "no such message"))?;
    let wire = wire_fields(raw, name)?;
    match m.form {
        Form::Special => special(name, &wire),
        Form::Slice => {
            let [items] = m.fields.as_slice() else {
                return Err(bad(name, "a slice message with other fields than items"));
            };
            wire.iter()
                .map(|(_, w)| single(name, items, w))
                .collect::<Result<Vec<_>>>()
                .map(Value::Array)
        }
        Form::Struct => {
            let mut out = Map::new();
            struct_into(&mut out, name, &m.fields, &wire)?;
            Ok(Value::Object(out))
        }
    }
}

fn struct_into(
    out: &mut Map<String, Value>,
    name: &str,
    fields: &[Field],
    wire: &[(u32, Wire<'_>)],
) -> Result<()> {
    if let Some((number, _)) = wire
        .iter()
        .find(|(n, _)| !fields.iter().any(|f| f.number == *n))
    {
        return Err(bad(name, format!("unknown field {number}")));
    }
    for f in fields {
        let at = format!("{name}.{}", f.json);
        let on_wire: Vec<&Wire<'_>> = wire
            .iter()
            .filter(|(n, _)| *n == f.number)
            .map(|(_, w)| w)
            .collect();
        if f.json.is_empty() {
            // A struct embedded inline: its fields are written in this object.
            let m = schema::message(&f.ty).ok_or_else(|| bad(&f.ty, "no such message"))?;
            let mut nested = Vec::new();
            for w in &on_wire {
                nested.extend(wire_fields(bytes_of(w, &at)?, &at)?);
            }
            struct_into(out, &f.ty, &m.fields, &nested)?;
            continue;
        }
        match f.label {
            Label::Optional => {
                let value = match on_wire.last() {
                    Some(w) => single(&at, f, w)?,
                    None if f.value => zero(&at, f)?,
                    None => continue,
                };
                if f.value && f.omitempty && is_scalar(&f.ty) && is_zero(&value) {
                    continue;
                }
                out.insert(f.json.clone(), value);
            }
            Label::Repeated => {
                if !on_wire.is_empty() {
                    let items = on_wire
                        .iter()
                        .map(|w| single(&at, f, w))
                        .collect::<Result<Vec<_>>>()?;
                    out.insert(f.json.clone(), Value::Array(items));
                }
            }
            Label::Map => {
                if !on_wire.is_empty() {
                    let mut map = Map::new();
                    for w in &on_wire {
                        let entry = wire_fields(bytes_of(w, &at)?, &at)?;
                        let key = entry.iter().rev().find(|(n, _)| *n == 1).map(|(_, k)| k);
                        let key = match key {
                            Some(k) => String::from_utf8_lossy(bytes_of(k, &at)?).into_owned(),
                            None => String::new(),
                        };
                        let value = match entry.iter().rev().find(|(n, _)| *n == 2) {
                            Some((_, v)) => single(&at, f, v)?,
                            None => zero(&at, f)?,
                        };
                        map.insert(key, value);
                    }
                    out.insert(f.json.clone(), Value::Object(map));
                }
            }
        }
    }
    Ok(())
}

fn is_scalar(ty: &str) -> bool {
    !ty.contains('.')
}

/// Whether a JSON value is a zero value (recursively, for objects).
fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.values().all(is_zero),
    }
}

/// The zero of field `f`'s type, as Go writes it in JSON.
fn zero(at: &str, f: &Field) -> Result<Value> {
    Ok(match f.ty.as_str() {
        "string" | "bytes" => json!(""),
        "bool" => json!(false),
        "int32" | "int64" | "uint32" | "uint64" | "double" | "float" => json!(0),
        message => self::message(message, &[]).map_err(|e| bad(at, e.to_string()))?,
    })
}

/// One value of field `f` (or of a map's values).
fn single(at: &str, f: &Field, w: &Wire<'_>) -> Result<Value> {
    let wrong = || bad(at, format!("a wire type that is not {}", f.ty));
    Ok(match (f.ty.as_str(), w) {
        ("string", Wire::Bytes(b)) => json!(String::from_utf8_lossy(b)),
        ("bytes", Wire::Bytes(b)) => json!(base64::engine::general_purpose::STANDARD.encode(b)),
        ("bool", Wire::Varint(v)) => json!(*v != 0),
        ("int32", Wire::Varint(v)) => json!(*v as i32),
        ("int64", Wire::Varint(v)) => json!(*v as i64),
        ("uint32", Wire::Varint(v)) => json!(*v as u32),
        ("uint64", Wire::Varint(v)) => json!(v),
        ("double", Wire::Fixed64(v)) => json!(f64::from_bits(*v)),
        ("float", Wire::Fixed32(v)) => json!(f32::from_bits(*v)),
        (ty, Wire::Bytes(b)) if !is_scalar(ty) => message(ty, b)?,
        _ => return Err(wrong()),
    })
}

fn special(name: &str, wire: &[(u32, Wire<'_>)]) -> Result<Value> {
    let get = |n: u32| wire.iter().rev().find(|(k, _)| *k == n).map(|(_, w)| w);
    let int = |n: u32| match get(n) {
        Some(Wire::Varint(v)) => *v,
        _ => 0,
    };
    let text = |n: u32| -> Result<String> {
        Ok(match get(n) {
            Some(w) => String::from_utf8_lossy(bytes_of(w, name)?).into_owned(),
            None => String::new(),
        })
    };
    let short = name.rsplit('.').next().unwrap_or(name);
    Ok(match short {
        "Time" | "MicroTime" if name.starts_with("k8s.io.apimachinery.pkg.apis.meta.v1.") => {
            if wire.is_empty() {
                return Ok(Value::Null);
            }
            let seconds = int(1) as i64;
            let nanos = if short == "Time" {
                0
            } else {
                int(2) as u32 / 1000 * 1000
            };
            let t = chrono::DateTime::from_timestamp(seconds, nanos)
                .ok_or_else(|| bad(name, "a time out of range"))?;
            let format = if short == "Time" {
                "%Y-%m-%dT%H:%M:%SZ"
            } else {
                "%Y-%m-%dT%H:%M:%S%.6fZ"
            };
            json!(t.format(format).to_string())
        }
        "Quantity" if name == "k8s.io.apimachinery.pkg.api.resource.Quantity" => {
            let s = text(1)?;
            json!(if s.is_empty() { "0".to_string() } else { s })
        }
        "IntOrString" if name == "k8s.io.apimachinery.pkg.util.intstr.IntOrString" => {
            match int(1) {
                1 => json!(text(3)?),
                _ => json!(int(2) as i32),
            }
        }
        "RawExtension" | "FieldsV1" | "JSON" => match get(1) {
            None => Value::Null,
            Some(w) => serde_json::from_slice(bytes_of(w, name)?)
                .map_err(|_| bad(name, "raw bytes that are not JSON"))?,
        },
        "JSONSchemaPropsOrBool" => match get(2) {
            Some(w) => props(name, w)?,
            None => json!(int(1) != 0),
        },
        "JSONSchemaPropsOrArray" => match get(1) {
            Some(w) => props(name, w)?,
            None => Value::Array(
                wire.iter()
                    .filter(|(n, _)| *n == 2)
                    .map(|(_, w)| props(name, w))
                    .collect::<Result<Vec<_>>>()?,
            ),
        },
        "JSONSchemaPropsOrStringArray" => match get(1) {
            Some(w) => props(name, w)?,
            None => Value::Array(
                wire.iter()
                    .filter(|(n, _)| *n == 2)
                    .map(|(_, w)| Ok(json!(String::from_utf8_lossy(bytes_of(w, name)?))))
                    .collect::<Result<Vec<_>>>()?,
            ),
        },
        _ => return Err(bad(name, "a type this server does not decode")),
    })
}

fn props(union: &str, w: &Wire<'_>) -> Result<Value> {
    let package = union.rsplit_once('.').map(|(p, _)| p).unwrap_or_default();
    message(&format!("{package}.JSONSchemaProps"), bytes_of(w, union)?)
}
