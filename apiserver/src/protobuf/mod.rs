//! Kube-apiserver's protobuf encoding (`application/vnd.kubernetes.protobuf`): request bodies of every
//! built-in kind and of `DeleteOptions` (what client-go's typed clients send), and responses of every
//! built-in kind.
//!
//! Both use kube-apiserver's envelope: the four bytes `k8s\0`, then a `runtime.Unknown` message whose
//! `typeMeta` names the kind and whose `raw` holds the object.
//!
//! **Requests.** client-go's generated clients (behind kubectl 1.35's `create configmap`, `create deployment`,
//! ...; `run`, `expose`, `scale`, `edit` send JSON) send `Content-Type: application/vnd.kubernetes.protobuf`
//! by default. Bodies are decoded with `k8s-pb`, prost code generated from Kubernetes' own `.proto` files,
//! and for the 16 kinds kubectl's generators create most, mapped to the JSON shape the rest of the server
//! works on (`json.rs` the value builder, `meta.rs`, `core.rs`, `workloads.rs`, `rbac.rs`, `policy.rs` the
//! kinds); every message is destructured field by field, so a new field in `k8s-pb` fails the build. A kind
//! that mapping does not know (CustomResourceDefinitions, `autoscaling/v1` Scales and every other kind of
//! `schema.json`), or a field it does not carry (pod volumes, probes, affinity, ...), is read instead by the
//! messages of `schema.json` (`decode.rs`) into the JSON Go's `encoding/json` would write; a body that does
//! not fit its message (an unknown field, a wrong wire type) is refused with 415 rather than read in part.
//! A zero-valued `status` of a decoded object is left out: Go writes one into every body, and
//! kube-apiserver resets it on create and keeps the stored one on update. Bodies written to a subresource
//! are read too: the whole object for `status` ([`decode_status`], which keeps the status whatever its
//! value), an `autoscaling/v1` Scale for `scale` (of custom resources too, as kube-apiserver reads them).
//! Custom resources have no protobuf messages: their objects in protobuf are refused with 415
//! (`crate::handlers`; kube-apiserver 1.35 fails such a request without an answer).
//!
//! `DeleteOptions`, the body of every delete and delete-collection client-go sends, is read by
//! [`decode_delete_options`] (`options.rs`) as kube-apiserver reads it: the envelope and the message by the
//! rules of Go's generated `Unmarshal` (`gogo.rs`: unknown fields skipped, a malformed body answered with
//! Go's error text, such as `unexpected EOF` or `proto: wrong wireType = 2 for field GracePeriodSeconds`),
//! the envelope naming `DeleteOptions` in any group-version (client-go names its own: `v1`, `apps/v1`, ...)
//! or no type at all, by the meta scheme's rule [`options_type`], which JSON and YAML bodies follow too.
//! `CreateOptions`, `UpdateOptions` and `PatchOptions` are never bodies: client-go sends them as query
//! parameters.
//!
//! **Responses.** When `Accept` negotiates protobuf (`crate::negotiate`; client-go's typed clients send
//! `Accept: application/vnd.kubernetes.protobuf, application/json`), objects of built-in kinds, their lists,
//! `PartialObjectMetadata`, `scale`, every `metav1.Status` and watch events are written by [`encode()`] and
//! [`watch_event`] from their JSON, walking the messages of `schema.json` (`schema.rs`): the
//! `generated.proto` files of `k8s.io/api`, `k8s.io/apimachinery`, `k8s.io/apiextensions-apiserver` and
//! `k8s.io/kube-aggregator` joined with the Go types they come from (JSON names, inline structs, pointers),
//! written by `cargo xtask protobuf-schema`. The bytes are those of Go's generated code (`encode.rs` says
//! how). Custom resources have no protobuf messages: they are answered in JSON, or 406 (`server/encoding.rs`).

mod core;
mod decode;
mod encode;
mod error;
mod gogo;
mod json;
mod meta;
mod options;
mod policy;
mod rbac;
mod schema;
mod workloads;
mod zeros;

pub use encode::{object as encode, watch_event};
use error::MAGIC;
pub use error::{ProtobufError, Result};
pub use options::{decode_delete_options, options_type};
pub use zeros::omit_zero_scalars;

use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
use prost::Message;
use serde_json::Value;

/// The media type of kube-apiserver's protobuf encoding.
pub const MEDIA_TYPE: &str = "application/vnd.kubernetes.protobuf";

/// Whether a `Content-Type` is kube-apiserver's protobuf encoding.
pub fn is_protobuf(content_type: &str) -> bool {
    content_type
        .split(';')
        .next()
        .is_some_and(|media| media.trim().eq_ignore_ascii_case(MEDIA_TYPE))
}

/// Decodes a protobuf request body (envelope and object) into the object's JSON, with `apiVersion` and
/// `kind` from the envelope.
pub fn decode(body: &[u8]) -> Result<Value> {
    decode_with(body, false)
}

/// Decodes a protobuf body written to the `status` subresource: as [`decode`], but the object's `status` is
/// read whatever its value (by the messages of the schema, as the per-kind mapping leaves every status out),
/// since it is what the write changes.
pub fn decode_status(body: &[u8]) -> Result<Value> {
    decode_with(body, true)
}

/// The `apiVersion` and `kind` a protobuf body's envelope names, if it has one that decodes.
pub fn envelope_type(body: &[u8]) -> Option<(String, String)> {
    let unknown = Unknown::decode(body.strip_prefix(MAGIC)?).ok()?;
    let TypeMeta { api_version, kind } = unknown.type_meta.unwrap_or_default();
    Some((api_version.unwrap_or_default(), kind.unwrap_or_default()))
}

fn decode_with(body: &[u8], keep_status: bool) -> Result<Value> {
    let rest = body.strip_prefix(MAGIC).ok_or(ProtobufError::Magic)?;
    let Unknown {
        type_meta,
        raw,
        content_encoding,
        content_type: _,
    } = Unknown::decode(rest).map_err(|source| ProtobufError::Decode {
        what: "runtime.Unknown".into(),
        source,
    })?;
    if let Some(encoding) = content_encoding.filter(|e| !e.is_empty()) {
        return Err(ProtobufError::ContentEncoding(encoding));
    }
    let TypeMeta { api_version, kind } = type_meta.unwrap_or_default();
    let api_version = api_version.unwrap_or_default();
    let kind = kind.unwrap_or_default();
    let raw = raw.unwrap_or_default();
    let by_schema = || {
        let name =
            schema::message_of(&api_version, &kind).ok_or_else(|| ProtobufError::UnknownKind {
                api_version: api_version.clone(),
                kind: kind.clone(),
            })?;
        decode::object(&name, &raw, keep_status)
    };
    let object = if keep_status {
        by_schema()?
    } else {
        match object(&api_version, &kind, &raw) {
            // What the per-kind mapping does not carry is read by the messages of the schema.
            Err(ProtobufError::UnknownKind { .. } | ProtobufError::Unsupported { .. }) => {
                by_schema()?
            }
            other => other?,
        }
    };
    let mut object = match object {
        Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    let mut out = serde_json::Map::new();
    out.insert("apiVersion".into(), Value::String(api_version));
    out.insert("kind".into(), Value::String(kind));
    out.append(&mut object);
    Ok(Value::Object(out))
}

/// Decodes `raw` as the message of `kind` and maps it to JSON.
fn object(api_version: &str, kind: &str, raw: &[u8]) -> Result<Value> {
    use k8s_pb::api::{apps, batch, core::v1 as corev1, rbac::v1 as rbacv1};
    match (api_version, kind) {
        ("v1", "ConfigMap") => core::config_map(message::<corev1::ConfigMap>(kind, raw)?),
        ("v1", "Secret") => core::secret(message::<corev1::Secret>(kind, raw)?),
        ("v1", "Namespace") => core::namespace(message::<corev1::Namespace>(kind, raw)?),
        ("v1", "ServiceAccount") => {
            core::service_account(message::<corev1::ServiceAccount>(kind, raw)?)
        }
        ("v1", "Service") => core::service(message::<corev1::Service>(kind, raw)?),
        ("v1", "Pod") => core::pod(message::<corev1::Pod>(kind, raw)?),
        ("apps/v1", "Deployment") => {
            workloads::deployment(message::<apps::v1::Deployment>(kind, raw)?)
        }
        ("batch/v1", "Job") => workloads::job(message::<batch::v1::Job>(kind, raw)?),
        ("batch/v1", "CronJob") => workloads::cron_job(message::<batch::v1::CronJob>(kind, raw)?),
        ("rbac.authorization.k8s.io/v1", "Role") => rbac::role(message::<rbacv1::Role>(kind, raw)?),
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => {
            rbac::cluster_role(message::<rbacv1::ClusterRole>(kind, raw)?)
        }
        ("rbac.authorization.k8s.io/v1", "RoleBinding") => {
            rbac::role_binding(message::<rbacv1::RoleBinding>(kind, raw)?)
        }
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => {
            rbac::cluster_role_binding(message::<rbacv1::ClusterRoleBinding>(kind, raw)?)
        }
        ("v1", "ResourceQuota") => {
            policy::resource_quota(message::<corev1::ResourceQuota>(kind, raw)?)
        }
        ("policy/v1", "PodDisruptionBudget") => policy::pod_disruption_budget(message::<
            k8s_pb::api::policy::v1::PodDisruptionBudget,
        >(kind, raw)?),
        ("scheduling.k8s.io/v1", "PriorityClass") => policy::priority_class(message::<
            k8s_pb::api::scheduling::v1::PriorityClass,
        >(kind, raw)?),
        _ => Err(ProtobufError::UnknownKind {
            api_version: api_version.into(),
            kind: kind.into(),
        }),
    }
}

fn message<M: Message + Default>(kind: &str, raw: &[u8]) -> Result<M> {
    M::decode(raw).map_err(|source| ProtobufError::Decode {
        what: kind.into(),
        source,
    })
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod encode_tests;
