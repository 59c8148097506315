//! Objects as kube-apiserver writes them in protobuf, from their JSON, walking the messages of `schema.rs`.
//!
//! The bytes are those of Go's generated code: fields in number order; a field Go holds by value written
//! even when zero (absent from the JSON), as Go marshals every non-pointer field; a pointer, list or map
//! only when set; map entries sorted by key. The types with a JSON form of their own are written as their
//! Go `Marshal` methods write them: `Time` (RFC 3339 in JSON) as `{seconds, nanos: 0}` and nothing when
//! zero, `MicroTime` with microseconds, `Quantity` as its string, `IntOrString` as `{type, intVal,
//! strVal}`, `RawExtension`, `FieldsV1` and apiextensions' `JSON` as the raw JSON bytes, and the JSON
//! schema's `...OrBool`, `...OrArray`, `...OrStringArray` unions. A JSON value that does not fit its
//! message (an unknown field, a wrong type) is an error rather than left out, so that no body loses a field.

use base64::Engine;
use bytes::BufMut;
use prost::encoding::{WireType, encode_key, encode_varint};
use serde_json::{Map, Value};

use super::error::{MAGIC, ProtobufError, Result};
use super::schema::{self, Field, Form, Label};

/// Encodes the JSON of an object of a built-in kind (or a `metav1.Status`) in kube-apiserver's protobuf
/// encoding, as a body or an answer: `k8s\0`, then a `runtime.Unknown` naming its kind around the bytes
/// of its `generated.proto` message, as Go's generated code writes them.
///
/// ```
/// use serde_json::json;
///
/// let cm = json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "name": "a" } });
/// let bytes = kubewright_apiserver::encode_protobuf(&cm).unwrap();
/// assert!(bytes.starts_with(b"k8s\0"));
/// // Custom resources have no protobuf message.
/// let widget = json!({ "apiVersion": "example.dev/v1", "kind": "Widget" });
/// assert!(kubewright_apiserver::encode_protobuf(&widget).is_err());
/// ```
pub fn object(object: &Value) -> Result<Vec<u8>> {
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let kind = object["kind"].as_str().unwrap_or_default();
    let name = schema::message_of(api_version, kind).ok_or_else(|| ProtobufError::UnknownKind {
        api_version: api_version.into(),
        kind: kind.into(),
    })?;
    let raw = message(&name, object)?;
    let mut type_meta = Vec::new();
    string_field(&mut type_meta, 1, api_version);
    string_field(&mut type_meta, 2, kind);
    let mut out = MAGIC.to_vec();
    bytes_field(&mut out, 1, &type_meta);
    bytes_field(&mut out, 2, &raw);
    // contentEncoding and contentType, empty.
    string_field(&mut out, 3, "");
    string_field(&mut out, 4, "");
    Ok(out)
}

/// One frame of a protobuf watch: the length (four bytes, big-endian) of a `WatchEvent` whose object is
/// [`object`]'s envelope.
pub fn watch_event(event: &str, obj: &Value) -> Result<Vec<u8>> {
    let embedded = object(obj)?;
    let mut raw_extension = Vec::new();
    bytes_field(&mut raw_extension, 1, &embedded);
    let mut event_bytes = Vec::new();
    string_field(&mut event_bytes, 1, event);
    bytes_field(&mut event_bytes, 2, &raw_extension);
    let len = u32::try_from(event_bytes.len()).map_err(|_| unfit("WatchEvent", "too large"))?;
    let mut out = len.to_be_bytes().to_vec();
    out.extend_from_slice(&event_bytes);
    Ok(out)
}

fn unfit(at: &str, why: impl Into<String>) -> ProtobufError {
    ProtobufError::Unencodable {
        at: at.into(),
        why: why.into(),
    }
}

/// The bytes of message `name` from its JSON (`null` for the zero message).
fn message(name: &str, json: &Value) -> Result<Vec<u8>> {
    let m = schema::message(name).ok_or_else(|| unfit(name, "no such message"))?;
    let mut out = Vec::new();
    match m.form {
        Form::Special => special(&mut out, name, json)?,
        Form::Slice => {
            if let [items] = m.fields.as_slice() {
                let empty = Value::Array(Vec::new());
                let json = if json.is_null() { &empty } else { json };
                repeated(&mut out, name, items, json)?;
            }
        }
        Form::Struct => {
            let empty = Map::new();
            let obj = match json {
                Value::Object(o) => o,
                Value::Null => &empty,
                other => return Err(unfit(name, format!("expected an object, got {other}"))),
            };
            struct_fields(&mut out, name, &m.fields, obj, true)?;
        }
    }
    Ok(out)
}

fn struct_fields(
    out: &mut Vec<u8>,
    name: &str,
    fields: &[Field],
    obj: &Map<String, Value>,
    strict: bool,
) -> Result<()> {
    if strict {
        let mut names: Vec<&str> = Vec::new();
        collect_names(fields, &mut names);
        // TypeMeta is embedded in the Go types without a protobuf field.
        if let Some(key) = obj
            .keys()
            .find(|k| *k != "apiVersion" && *k != "kind" && !names.contains(&k.as_str()))
        {
            return Err(unfit(name, format!("no field {key}")));
        }
    }
    let mut ordered: Vec<&Field> = fields.iter().collect();
    ordered.sort_by_key(|f| f.number);
    for f in ordered {
        let at = format!("{name}.{}", f.json);
        if f.json.is_empty() {
            // A struct embedded inline: its fields are this object's (checked above).
            let m = schema::message(&f.ty).ok_or_else(|| unfit(&f.ty, "no such message"))?;
            let mut nested = Vec::new();
            struct_fields(&mut nested, &f.ty, &m.fields, obj, false)?;
            bytes_field(out, f.number, &nested);
            continue;
        }
        let v = obj.get(&f.json).filter(|v| !v.is_null());
        match f.label {
            Label::Optional => match v {
                Some(v) => single(out, &at, f, v)?,
                None if f.value => single(out, &at, f, &Value::Null)?,
                None => {}
            },
            Label::Repeated => {
                if let Some(v) = v {
                    repeated(out, &at, f, v)?;
                }
            }
            Label::Map => {
                if let Some(v) = v {
                    map(out, &at, f, v)?;
                }
            }
        }
    }
    Ok(())
}

/// The JSON names of `fields`, those of the structs embedded inline included.
fn collect_names<'a>(fields: &'a [Field], names: &mut Vec<&'a str>) {
    for f in fields {
        if f.json.is_empty() {
            if let Some(m) = schema::message(&f.ty) {
                collect_names(&m.fields, names);
            }
        } else {
            names.push(&f.json);
        }
    }
}

/// One value of field `f` (`null` for its zero).
fn single(out: &mut Vec<u8>, at: &str, f: &Field, v: &Value) -> Result<()> {
    if is_scalar(&f.ty) {
        scalar(out, at, f.number, &f.ty, v)
    } else {
        let bytes = message(&f.ty, v)?;
        bytes_field(out, f.number, &bytes);
        Ok(())
    }
}

fn repeated(out: &mut Vec<u8>, at: &str, f: &Field, v: &Value) -> Result<()> {
    let items = v
        .as_array()
        .ok_or_else(|| unfit(at, format!("expected a list, got {v}")))?;
    for item in items {
        if item.is_null() {
            return Err(unfit(at, "a null item"));
        }
        single(out, at, f, item)?;
    }
    Ok(())
}

fn map(out: &mut Vec<u8>, at: &str, f: &Field, v: &Value) -> Result<()> {
    let obj = v
        .as_object()
        .ok_or_else(|| unfit(at, format!("expected a map, got {v}")))?;
    if f.key.as_deref() != Some("string") {
        return Err(unfit(at, "a map whose keys are not strings"));
    }
    let mut keys: Vec<&String> = obj.keys().collect();
    keys.sort();
    for key in keys {
        let mut entry = Vec::new();
        string_field(&mut entry, 1, key);
        let value = &obj[key];
        if is_scalar(&f.ty) {
            scalar(&mut entry, at, 2, &f.ty, value)?;
        } else {
            let bytes = message(&f.ty, value)?;
            bytes_field(&mut entry, 2, &bytes);
        }
        bytes_field(out, f.number, &entry);
    }
    Ok(())
}

fn is_scalar(ty: &str) -> bool {
    !ty.contains('.')
}

/// A scalar field; `null` writes its zero.
fn scalar(out: &mut Vec<u8>, at: &str, number: u32, ty: &str, v: &Value) -> Result<()> {
    let wrong = || unfit(at, format!("expected {ty}, got {v}"));
    match ty {
        "string" => string_field(
            out,
            number,
            v.as_str().or(v.is_null().then_some("")).ok_or_else(wrong)?,
        ),
        "bool" => {
            let b = if v.is_null() {
                false
            } else {
                v.as_bool().ok_or_else(wrong)?
            };
            varint_field(out, number, u64::from(b));
        }
        "int32" | "int64" => {
            let n = if v.is_null() {
                0
            } else {
                v.as_i64().ok_or_else(wrong)?
            };
            if ty == "int32" && i32::try_from(n).is_err() {
                return Err(wrong());
            }
            // Negative numbers are sign-extended to ten bytes, as Go writes `uint64(n)`.
            varint_field(out, number, n as u64);
        }
        "uint32" | "uint64" => {
            let n = if v.is_null() {
                0
            } else {
                v.as_u64().ok_or_else(wrong)?
            };
            varint_field(out, number, n);
        }
        "double" => {
            let n = if v.is_null() {
                0.0
            } else {
                v.as_f64().ok_or_else(wrong)?
            };
            encode_key(number, WireType::SixtyFourBit, out);
            out.put_f64_le(n);
        }
        "float" => {
            let n = if v.is_null() {
                0.0
            } else {
                v.as_f64().ok_or_else(wrong)?
            };
            encode_key(number, WireType::ThirtyTwoBit, out);
            out.put_f32_le(n as f32);
        }
        "bytes" => {
            let s = if v.is_null() {
                ""
            } else {
                v.as_str().ok_or_else(wrong)?
            };
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(s)
                .map_err(|e| unfit(at, format!("not base64: {e}")))?;
            bytes_field(out, number, &bytes);
        }
        other => return Err(unfit(at, format!("scalar type {other}"))),
    }
    Ok(())
}

/// The messages whose JSON form is their own.
fn special(out: &mut Vec<u8>, name: &str, v: &Value) -> Result<()> {
    let short = name.rsplit('.').next().unwrap_or(name);
    let wrong = || unfit(name, format!("unexpected JSON {v}"));
    match (name, short) {
        (_, "Time") if name.starts_with("k8s.io.apimachinery.pkg.apis.meta.v1.") => {
            if let Some(s) = v.as_str() {
                let t = chrono::DateTime::parse_from_rfc3339(s).map_err(|_| wrong())?;
                varint_field(out, 1, t.timestamp() as u64);
                varint_field(out, 2, 0);
            } else if !v.is_null() {
                return Err(wrong());
            }
        }
        (_, "MicroTime") if name.starts_with("k8s.io.apimachinery.pkg.apis.meta.v1.") => {
            if let Some(s) = v.as_str() {
                let t = chrono::DateTime::parse_from_rfc3339(s).map_err(|_| wrong())?;
                let micros = t.timestamp_subsec_micros();
                varint_field(out, 1, t.timestamp() as u64);
                varint_field(out, 2, u64::from(micros * 1000));
            } else if !v.is_null() {
                return Err(wrong());
            }
        }
        ("k8s.io.apimachinery.pkg.api.resource.Quantity", _) => {
            let s = match v {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Null => "0".into(),
                _ => return Err(wrong()),
            };
            string_field(out, 1, &s);
        }
        ("k8s.io.apimachinery.pkg.util.intstr.IntOrString", _) => {
            let (ty, int, s) = match v {
                Value::Number(n) => {
                    let n = n
                        .as_i64()
                        .and_then(|n| i32::try_from(n).ok())
                        .ok_or_else(wrong)?;
                    (0, n, "")
                }
                Value::String(s) => (1, 0, s.as_str()),
                Value::Null => (0, 0, ""),
                _ => return Err(wrong()),
            };
            varint_field(out, 1, ty);
            varint_field(out, 2, i64::from(int) as u64);
            string_field(out, 3, s);
        }
        ("k8s.io.apimachinery.pkg.runtime.RawExtension", _)
        | ("k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1", _)
        | (_, "JSON") => {
            if !v.is_null() {
                let raw = serde_json::to_vec(v).map_err(|_| wrong())?;
                bytes_field(out, 1, &raw);
            }
        }
        (_, "JSONSchemaPropsOrBool") => match v {
            Value::Bool(b) => varint_field(out, 1, u64::from(*b)),
            Value::Object(_) => {
                varint_field(out, 1, 1);
                schema_props(out, name, 2, v)?;
            }
            Value::Null => varint_field(out, 1, 0),
            _ => return Err(wrong()),
        },
        (_, "JSONSchemaPropsOrArray") => match v {
            Value::Object(_) => schema_props(out, name, 1, v)?,
            Value::Array(items) => {
                for item in items {
                    schema_props(out, name, 2, item)?;
                }
            }
            Value::Null => {}
            _ => return Err(wrong()),
        },
        (_, "JSONSchemaPropsOrStringArray") => match v {
            Value::Object(_) => schema_props(out, name, 1, v)?,
            Value::Array(items) => {
                for item in items {
                    string_field(out, 2, item.as_str().ok_or_else(wrong)?);
                }
            }
            Value::Null => {}
            _ => return Err(wrong()),
        },
        _ => return Err(unfit(name, "a type this server does not encode")),
    }
    Ok(())
}

/// A `JSONSchemaProps` of the package of the union `union`, as field `number`.
fn schema_props(out: &mut Vec<u8>, union: &str, number: u32, v: &Value) -> Result<()> {
    let package = union.rsplit_once('.').map(|(p, _)| p).unwrap_or_default();
    let bytes = message(&format!("{package}.JSONSchemaProps"), v)?;
    bytes_field(out, number, &bytes);
    Ok(())
}

fn varint_field(out: &mut Vec<u8>, number: u32, v: u64) {
    encode_key(number, WireType::Varint, out);
    encode_varint(v, out);
}

fn bytes_field(out: &mut Vec<u8>, number: u32, bytes: &[u8]) {
    encode_key(number, WireType::LengthDelimited, out);
    encode_varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}

fn string_field(out: &mut Vec<u8>, number: u32, s: &str) {
    bytes_field(out, number, s.as_bytes());
}
