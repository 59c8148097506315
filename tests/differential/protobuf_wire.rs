//! Protobuf answers made comparable: each is decoded with `k8s-pb` (the envelope, and the object as its
//! typed message, which must re-encode to the very bytes received) and read back to JSON field by field,
//! with the field names of the in-memory server's schema (`apiserver/src/protobuf/schema.json`), so that the
//! transcripts' normalization (uids, resourceVersions, timestamps, the namespace) applies to them.
//!
//! The JSON view keeps what the wire says: a field written with its zero value shows as `""`, `0` or
//! `false`, an absent one not at all; `Time` and `MicroTime` become RFC 3339 strings, `Quantity` its
//! string, `IntOrString` its number or string, raw JSON (`RawExtension`, `FieldsV1`) the JSON it holds,
//! `bytes` base64.

use std::sync::LazyLock;

use base64::Engine;
use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
use prost::Message;
use serde_json::{Map, Value, json};

static SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_str(include_str!("../../apiserver/src/protobuf/schema.json"))
        .expect("the protobuf schema parses")
});

/// The JSON view of an envelope (`k8s\0` and a `runtime.Unknown`): its type, the object, and whether
/// `k8s-pb`'s message of the kind decodes it and writes it back byte for byte.
pub fn envelope(bytes: &[u8]) -> Value {
    let Some(rest) = bytes.strip_prefix(b"k8s\0") else {
        return json!({ "not protobuf": String::from_utf8_lossy(bytes) });
    };
    let unknown = Unknown::decode(rest).expect("a runtime.Unknown");
    let TypeMeta { api_version, kind } = unknown.type_meta.clone().unwrap_or_default();
    let (api_version, kind) = (api_version.unwrap_or_default(), kind.unwrap_or_default());
    let raw = unknown.raw.clone().unwrap_or_default();
    let name = message_of(&api_version, &kind);
    json!({
        "typeMeta": { "apiVersion": api_version, "kind": kind },
        "contentEncoding": unknown.content_encoding,
        "contentType": unknown.content_type,
        "k8s-pb": typed_round_trip(&kind, &raw),
        "object": name.map(|n| message(&n, &raw)).unwrap_or(Value::Null),
    })
}

/// The JSON view of a protobuf watch stream: its length-prefixed `WatchEvent` frames.
pub fn watch_events(mut bytes: &[u8]) -> Vec<Value> {
    let mut events = Vec::new();
    while bytes.len() >= 4 {
        let len = u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
        let frame = &bytes[4..4 + len];
        bytes = &bytes[4 + len..];
        let event = k8s_pb::apimachinery::pkg::apis::meta::v1::WatchEvent::decode(frame)
            .expect("a WatchEvent");
        let raw = event.object.and_then(|o| o.raw).unwrap_or_default();
        events.push(json!({ "type": event.r#type, "object": envelope(&raw) }));
    }
    events
}

/// Complete frames at the start of `bytes`: how many bytes they take.
pub fn complete_frames(bytes: &[u8]) -> usize {
    let mut at = 0;
    while bytes.len() >= at + 4 {
        let len = u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
        if bytes.len() < at + 4 + len as usize {
            break;
        }
        at += 4 + len as usize;
    }
    at
}

fn message_of(api_version: &str, kind: &str) -> Option<String> {
    let package = if kind == "Status" {
        SCHEMA["groups"]["meta.k8s.io/v1"].as_str()
    } else {
        SCHEMA["groups"][api_version].as_str()
    }?;
    Some(format!("{package}.{kind}"))
}

/// Decodes `raw` as `k8s-pb`'s message of `kind` and encodes it again: `"same bytes"`, or what differs.
fn typed_round_trip(kind: &str, raw: &[u8]) -> Value {
    fn check<M: Message + Default>(raw: &[u8]) -> Value {
        match M::decode(raw) {
            Ok(m) if m.encode_to_vec() == raw => json!("same bytes"),
            // prost leaves out empty map values, which Go writes.
            Ok(_) => json!("decodes; prost writes it back in other bytes"),
            Err(e) => json!(format!("does not decode: {e}")),
        }
    }
    use k8s_pb::api::{
        admissionregistration::v1 as admission, apps::v1 as apps, autoscaling, batch::v1 as batch,
        certificates::v1 as certificates, coordination::v1 as coordination, core::v1 as core,
        discovery::v1 as discovery, flowcontrol::v1 as flowcontrol, networking::v1 as networking,
        node::v1 as node, policy::v1 as policy, resource::v1 as resource,
        scheduling::v1 as scheduling, storage::v1 as storage,
    };
    use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
    match kind {
        "ConfigMap" => check::<core::ConfigMap>(raw),
        "ConfigMapList" => check::<core::ConfigMapList>(raw),
        "Secret" => check::<core::Secret>(raw),
        "Service" => check::<core::Service>(raw),
        "ResourceQuota" => check::<core::ResourceQuota>(raw),
        "LimitRange" => check::<core::LimitRange>(raw),
        "PodTemplate" => check::<core::PodTemplate>(raw),
        "ReplicationController" => check::<core::ReplicationController>(raw),
        "PersistentVolume" => check::<core::PersistentVolume>(raw),
        "Deployment" => check::<apps::Deployment>(raw),
        "DeploymentList" => check::<apps::DeploymentList>(raw),
        "ControllerRevision" => check::<apps::ControllerRevision>(raw),
        "Scale" => check::<autoscaling::v1::Scale>(raw),
        "HorizontalPodAutoscaler" => check::<autoscaling::v2::HorizontalPodAutoscaler>(raw),
        "CronJob" => check::<batch::CronJob>(raw),
        "PodDisruptionBudget" => check::<policy::PodDisruptionBudget>(raw),
        "NetworkPolicy" => check::<networking::NetworkPolicy>(raw),
        "Ingress" => check::<networking::Ingress>(raw),
        "IngressClass" => check::<networking::IngressClass>(raw),
        "Lease" => check::<coordination::Lease>(raw),
        "EndpointSlice" => check::<discovery::EndpointSlice>(raw),
        "CSIStorageCapacity" => check::<storage::CSIStorageCapacity>(raw),
        "StorageClass" => check::<storage::StorageClass>(raw),
        "CSIDriver" => check::<storage::CSIDriver>(raw),
        "CSINode" => check::<storage::CSINode>(raw),
        "VolumeAttachment" => check::<storage::VolumeAttachment>(raw),
        "VolumeAttributesClass" => check::<storage::VolumeAttributesClass>(raw),
        "ResourceClaimTemplate" => check::<resource::ResourceClaimTemplate>(raw),
        "ResourceClaim" => check::<resource::ResourceClaim>(raw),
        "DeviceClass" => check::<resource::DeviceClass>(raw),
        "PriorityClass" => check::<scheduling::PriorityClass>(raw),
        "RuntimeClass" => check::<node::RuntimeClass>(raw),
        "ValidatingWebhookConfiguration" => check::<admission::ValidatingWebhookConfiguration>(raw),
        "MutatingWebhookConfiguration" => check::<admission::MutatingWebhookConfiguration>(raw),
        "ValidatingAdmissionPolicy" => check::<admission::ValidatingAdmissionPolicy>(raw),
        "ValidatingAdmissionPolicyBinding" => {
            check::<admission::ValidatingAdmissionPolicyBinding>(raw)
        }
        "CertificateSigningRequest" => check::<certificates::CertificateSigningRequest>(raw),
        "PriorityLevelConfiguration" => check::<flowcontrol::PriorityLevelConfiguration>(raw),
        "FlowSchema" => check::<flowcontrol::FlowSchema>(raw),
        "Status" => check::<meta::Status>(raw),
        "PartialObjectMetadata" => check::<meta::PartialObjectMetadata>(raw),
        "PartialObjectMetadataList" => check::<meta::PartialObjectMetadataList>(raw),
        other => json!(format!("no k8s-pb message chosen for {other}")),
    }
}

/// Reads a varint at the start of `b`: the value and its length.
fn varint(b: &[u8]) -> (u64, usize) {
    let mut v = 0u64;
    for (i, byte) in b.iter().enumerate().take(10) {
        v |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            return (v, i + 1);
        }
    }
    panic!("a truncated varint");
}

/// A decoded field value: a varint, fixed bits, or bytes.
enum Wire<'a> {
    Varint(u64),
    Fixed64(u64),
    Fixed32(u32),
    Bytes(&'a [u8]),
}

fn fields(mut b: &[u8]) -> Vec<(u64, Wire<'_>)> {
    let mut out = Vec::new();
    while !b.is_empty() {
        let (key, n) = varint(b);
        b = &b[n..];
        let (number, wire) = (key >> 3, key & 7);
        let value = match wire {
            0 => {
                let (v, n) = varint(b);
                b = &b[n..];
                Wire::Varint(v)
            }
            1 => {
                let v = u64::from_le_bytes(b[..8].try_into().expect("8 bytes"));
                b = &b[8..];
                Wire::Fixed64(v)
            }
            2 => {
                let (len, n) = varint(b);
                let v = &b[n..n + len as usize];
                b = &b[n + len as usize..];
                Wire::Bytes(v)
            }
            5 => {
                let v = u32::from_le_bytes(b[..4].try_into().expect("4 bytes"));
                b = &b[4..];
                Wire::Fixed32(v)
            }
            other => panic!("wire type {other}"),
        };
        out.push((number, value));
    }
    out
}

fn bytes_of<'a>(w: &Wire<'a>) -> &'a [u8] {
    match w {
        Wire::Bytes(b) => b,
        _ => &[],
    }
}

fn varint_of(w: &Wire<'_>) -> u64 {
    match w {
        Wire::Varint(v) => *v,
        _ => 0,
    }
}

/// The JSON view of message `name`.
fn message(name: &str, raw: &[u8]) -> Value {
    let m = &SCHEMA["messages"][name];
    let wire = fields(raw);
    match m["form"].as_str() {
        Some("special") => special(name, &wire),
        Some("slice") => Value::Array(
            wire.iter()
                .map(|(_, w)| scalar(&m["fields"][0]["type"], w))
                .collect(),
        ),
        _ => {
            let mut out = Map::new();
            struct_into(&mut out, name, &wire);
            Value::Object(out)
        }
    }
}

fn struct_into(out: &mut Map<String, Value>, name: &str, wire: &[(u64, Wire<'_>)]) {
    let schema_fields = SCHEMA["messages"][name]["fields"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for (number, w) in wire {
        let Some(f) = schema_fields.iter().find(|f| f["number"] == json!(number)) else {
            out.insert(format!("<unknown field {number}>"), json!(true));
            continue;
        };
        let json_name = f["json"].as_str().unwrap_or_default();
        let ty = f["type"].as_str().unwrap_or_default();
        let is_message = ty.contains('.');
        if json_name.is_empty() {
            let nested = fields(bytes_of(w));
            struct_into(out, ty, &nested);
            continue;
        }
        let value = |w: &Wire<'_>| {
            if is_message {
                message(ty, bytes_of(w))
            } else {
                scalar(&f["type"], w)
            }
        };
        match f["label"].as_str() {
            Some("repeated") => {
                let list = out.entry(json_name).or_insert_with(|| json!([]));
                if let Value::Array(a) = list {
                    a.push(value(w));
                }
            }
            Some("map") => {
                let entry = fields(bytes_of(w));
                let key = entry
                    .iter()
                    .find(|(n, _)| *n == 1)
                    .map(|(_, k)| String::from_utf8_lossy(bytes_of(k)).into_owned())
                    .unwrap_or_default();
                let v = entry
                    .iter()
                    .find(|(n, _)| *n == 2)
                    .map(|(_, v)| value(v))
                    .unwrap_or(Value::Null);
                let map = out.entry(json_name).or_insert_with(|| json!({}));
                if let Value::Object(m) = map {
                    m.insert(key, v);
                }
            }
            _ => {
                out.insert(json_name.to_string(), value(w));
            }
        }
    }
}

fn scalar(ty: &Value, w: &Wire<'_>) -> Value {
    match (ty.as_str().unwrap_or_default(), w) {
        ("string", Wire::Bytes(b)) => json!(String::from_utf8_lossy(b)),
        ("bytes", Wire::Bytes(b)) => json!(base64::engine::general_purpose::STANDARD.encode(b)),
        ("bool", Wire::Varint(v)) => json!(*v != 0),
        ("int32", Wire::Varint(v)) => json!(*v as i32),
        ("int64", Wire::Varint(v)) => json!(*v as i64),
        ("uint32" | "uint64", Wire::Varint(v)) => json!(v),
        ("double", Wire::Fixed64(v)) => json!(f64::from_bits(*v)),
        ("float", Wire::Fixed32(v)) => json!(f32::from_bits(*v)),
        (ty, _) => json!(format!("<{ty} of another wire type>")),
    }
}

fn special(name: &str, wire: &[(u64, Wire<'_>)]) -> Value {
    let get = |n: u64| wire.iter().find(|(k, _)| *k == n).map(|(_, w)| w);
    let short = name.rsplit('.').next().unwrap_or_default();
    match short {
        "Time" | "MicroTime" => {
            if wire.is_empty() {
                return Value::Null;
            }
            let seconds = get(1).map(varint_of).unwrap_or_default() as i64;
            let nanos = get(2).map(varint_of).unwrap_or_default() as u32;
            let t = chrono::DateTime::from_timestamp(seconds, nanos).expect("a time");
            json!(t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true))
        }
        "Quantity" => json!(String::from_utf8_lossy(
            get(1).map(bytes_of).unwrap_or_default()
        )),
        "IntOrString" => match get(1).map(varint_of) {
            Some(1) => json!(String::from_utf8_lossy(
                get(3).map(bytes_of).unwrap_or_default()
            )),
            _ => json!(get(2).map(varint_of).unwrap_or_default() as i64 as i32),
        },
        "RawExtension" | "FieldsV1" | "JSON" => match get(1) {
            Some(w) => serde_json::from_slice(bytes_of(w))
                .unwrap_or_else(|_| json!(String::from_utf8_lossy(bytes_of(w)))),
            None => Value::Null,
        },
        other => json!(format!("<{other}>")),
    }
}
