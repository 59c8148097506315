//! `DeleteOptions` in protobuf, the body client-go sends with every delete and delete-collection, read as
//! kube-apiserver reads it: the envelope and the message by Go's generated code (`gogo.rs`, so a malformed
//! body gets Go's error text), into the JSON a JSON body of the same options would be.
//!
//! Which `apiVersion` and `kind` the envelope may name is the meta scheme's rule ([`options_type`]), the
//! same for a JSON or YAML body: client-go names the group-version of the client that sends it (`v1`,
//! `apps/v1`, ...), and any group-version is taken.

use serde_json::{Map, Value, json};

use super::error::{MAGIC, ProtobufError, Result};
use super::gogo::{self, GoField, GoMessage, GoType, GoValue};

const TYPE_META: GoMessage = GoMessage {
    name: "TypeMeta",
    fields: &[
        GoField {
            number: 1,
            name: "APIVersion",
            ty: GoType::Bytes,
        },
        GoField {
            number: 2,
            name: "Kind",
            ty: GoType::Bytes,
        },
    ],
};

const UNKNOWN: GoMessage = GoMessage {
    name: "Unknown",
    fields: &[
        GoField {
            number: 1,
            name: "TypeMeta",
            ty: GoType::Message(&TYPE_META),
        },
        GoField {
            number: 2,
            name: "Raw",
            ty: GoType::Bytes,
        },
        GoField {
            number: 3,
            name: "ContentEncoding",
            ty: GoType::Bytes,
        },
        GoField {
            number: 4,
            name: "ContentType",
            ty: GoType::Bytes,
        },
    ],
};

const PRECONDITIONS: GoMessage = GoMessage {
    name: "Preconditions",
    fields: &[
        GoField {
            number: 1,
            name: "UID",
            ty: GoType::Bytes,
        },
        GoField {
            number: 2,
            name: "ResourceVersion",
            ty: GoType::Bytes,
        },
    ],
};

const DELETE_OPTIONS: GoMessage = GoMessage {
    name: "DeleteOptions",
    fields: &[
        GoField {
            number: 1,
            name: "GracePeriodSeconds",
            ty: GoType::Varint,
        },
        GoField {
            number: 2,
            name: "Preconditions",
            ty: GoType::Message(&PRECONDITIONS),
        },
        GoField {
            number: 3,
            name: "OrphanDependents",
            ty: GoType::Varint,
        },
        GoField {
            number: 4,
            name: "PropagationPolicy",
            ty: GoType::Bytes,
        },
        GoField {
            number: 5,
            name: "DryRun",
            ty: GoType::Bytes,
        },
        GoField {
            number: 6,
            name: "IgnoreStoreReadErrorWithClusterBreakingPotential",
            ty: GoType::Varint,
        },
    ],
};

fn go(e: gogo::GoError) -> ProtobufError {
    ProtobufError::Unmarshal(e.0)
}

/// Decodes a protobuf `DeleteOptions` body into the JSON of the options (`propagationPolicy`,
/// `preconditions`, `orphanDependents`, `gracePeriodSeconds`, `dryRun`), after checking the envelope's type
/// with [`options_type`]. The envelope's `contentEncoding` is not read, as kube-apiserver does not read it.
pub fn decode_delete_options(body: &[u8]) -> Result<Value> {
    let rest = body.strip_prefix(MAGIC).ok_or(ProtobufError::Magic)?;
    if rest.is_empty() {
        return Err(ProtobufError::Unmarshal("empty body".into()));
    }
    let envelope = gogo::read(&UNKNOWN, rest).map_err(go)?;
    let type_meta = match gogo::last(&envelope, 1) {
        Some(GoValue::Message(fields)) => fields.clone(),
        _ => Vec::new(),
    };
    let field = |n| {
        gogo::last(&type_meta, n)
            .and_then(gogo::text)
            .unwrap_or_default()
    };
    options_type(&field(1), &field(2)).map_err(ProtobufError::Unmarshal)?;
    let raw = match gogo::last(&envelope, 2) {
        Some(GoValue::Bytes(raw)) => raw.as_slice(),
        _ => &[],
    };
    let options = gogo::read(&DELETE_OPTIONS, raw).map_err(go)?;
    Ok(delete_options_json(&options))
}

fn delete_options_json(options: &[(u32, GoValue)]) -> Value {
    let mut out = Map::new();
    let varint = |n| match gogo::last(options, n) {
        Some(GoValue::Varint(v)) => Some(*v),
        _ => None,
    };
    if let Some(v) = varint(1) {
        out.insert("gracePeriodSeconds".into(), json!(v as i64));
    }
    if let Some(GoValue::Message(pre)) = gogo::last(options, 2) {
        let mut p = Map::new();
        for (n, key) in [(1, "uid"), (2, "resourceVersion")] {
            if let Some(v) = gogo::last(pre, n).and_then(gogo::text) {
                p.insert(key.into(), json!(v));
            }
        }
        out.insert("preconditions".into(), Value::Object(p));
    }
    if let Some(v) = varint(3) {
        out.insert("orphanDependents".into(), json!(v != 0));
    }
    if let Some(v) = gogo::last(options, 4).and_then(gogo::text) {
        out.insert("propagationPolicy".into(), json!(v));
    }
    let dry_run: Vec<Value> = gogo::all(options, 5)
        .filter_map(gogo::text)
        .map(Value::String)
        .collect();
    if !dry_run.is_empty() {
        out.insert("dryRun".into(), Value::Array(dry_run));
    }
    if let Some(v) = varint(6) {
        out.insert(
            "ignoreStoreReadErrorWithClusterBreakingPotential".into(),
            json!(v != 0),
        );
    }
    Value::Object(out)
}

/// The kinds the meta scheme knows in any group-version (its unversioned kinds), with their Go types.
const UNVERSIONED: [(&str, &str); 8] = [
    ("DeleteOptions", "v1.DeleteOptions"),
    ("CreateOptions", "v1.CreateOptions"),
    ("UpdateOptions", "v1.UpdateOptions"),
    ("Status", "v1.Status"),
    ("APIVersions", "v1.APIVersions"),
    ("APIGroupList", "v1.APIGroupList"),
    ("APIGroup", "v1.APIGroup"),
    ("APIResourceList", "v1.APIResourceList"),
];

/// The kinds the meta scheme knows in `meta.k8s.io/v1` besides, with their Go types.
const META_V1: [(&str, &str); 8] = [
    ("WatchEvent", "v1.WatchEvent"),
    ("ListOptions", "v1.ListOptions"),
    ("GetOptions", "v1.GetOptions"),
    ("PatchOptions", "v1.PatchOptions"),
    ("Table", "v1.Table"),
    ("TableOptions", "v1.TableOptions"),
    ("PartialObjectMetadata", "v1.PartialObjectMetadata"),
    ("PartialObjectMetadataList", "v1.PartialObjectMetadataList"),
];

/// Whether a delete's body may be read as `DeleteOptions`, given the `apiVersion` and `kind` it names (JSON,
/// YAML or the protobuf envelope), as kube-apiserver's meta scheme decides: a missing kind or version is
/// `meta.k8s.io/v1 DeleteOptions`'s, and `DeleteOptions` is taken in every group-version. Another kind the
/// scheme knows cannot be converted; one it does not know is not registered. The error is kube-apiserver's
/// text (a `400`).
pub fn options_type(api_version: &str, kind: &str) -> std::result::Result<(), String> {
    // An apiVersion with more than one `/` does not parse and counts as absent.
    let version = if api_version.matches('/').count() > 1 {
        ""
    } else {
        api_version
    };
    let version = if version.is_empty() {
        "meta.k8s.io/v1"
    } else {
        version
    };
    let kind = if kind.is_empty() {
        "DeleteOptions"
    } else {
        kind
    };
    let known = UNVERSIONED
        .iter()
        .chain(META_V1.iter().filter(|_| version == "meta.k8s.io/v1"))
        .chain(
            META_V1[4..]
                .iter()
                .filter(|_| version == "meta.k8s.io/v1beta1"),
        )
        .find(|(k, _)| *k == kind);
    match known {
        Some(("DeleteOptions", _)) => Ok(()),
        Some((_, go_type)) => Err(format!(
            "converting ({go_type}) to (v1.DeleteOptions): unknown conversion"
        )),
        None => Err(format!(
            "no kind \"{kind}\" is registered for version \"{version}\" in scheme \"pkg/runtime/scheme.go:111\""
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_pb::apimachinery::pkg::apis::meta::v1::{DeleteOptions, Preconditions};
    use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
    use prost::Message;

    fn envelope(api_version: &str, kind: &str, raw: Vec<u8>) -> Vec<u8> {
        let unknown = Unknown {
            type_meta: Some(TypeMeta {
                api_version: Some(api_version.into()),
                kind: Some(kind.into()),
            }),
            raw: Some(raw),
            content_encoding: Some(String::new()),
            content_type: Some(String::new()),
        };
        let mut bytes = MAGIC.to_vec();
        bytes.extend(unknown.encode_to_vec());
        bytes
    }

    #[test]
    fn options_as_client_go_sends_them_read_to_json() {
        let options = DeleteOptions {
            grace_period_seconds: Some(0),
            preconditions: Some(Preconditions {
                uid: Some("u".into()),
                resource_version: None,
            }),
            propagation_policy: Some("Foreground".into()),
            dry_run: vec!["All".into()],
            ..Default::default()
        };
        let body = envelope("apps/v1", "DeleteOptions", options.encode_to_vec());
        assert_eq!(
            decode_delete_options(&body).expect("decodes"),
            json!({
                "gracePeriodSeconds": 0, "preconditions": { "uid": "u" },
                "propagationPolicy": "Foreground", "dryRun": ["All"],
            })
        );
        let empty = envelope("v1", "DeleteOptions", Vec::new());
        assert_eq!(decode_delete_options(&empty).expect("decodes"), json!({}));
    }

    #[test]
    fn the_envelope_may_name_any_group_version_but_no_other_kind() {
        for (api_version, kind) in [
            ("v1", "DeleteOptions"),
            ("meta.k8s.io/v1", "DeleteOptions"),
            ("example.dev/v9", "DeleteOptions"),
            ("", ""),
            ("v1", ""),
        ] {
            assert_eq!(
                options_type(api_version, kind),
                Ok(()),
                "{api_version} {kind}"
            );
        }
        assert_eq!(
            options_type("v1", "ConfigMap").expect_err("refused"),
            "no kind \"ConfigMap\" is registered for version \"v1\" in scheme \"pkg/runtime/scheme.go:111\""
        );
        assert_eq!(
            options_type("", "ConfigMap").expect_err("refused"),
            "no kind \"ConfigMap\" is registered for version \"meta.k8s.io/v1\" in scheme \"pkg/runtime/scheme.go:111\""
        );
        assert_eq!(
            options_type("v1", "Status").expect_err("refused"),
            "converting (v1.Status) to (v1.DeleteOptions): unknown conversion"
        );
        assert_eq!(
            options_type("meta.k8s.io/v1", "ListOptions").expect_err("refused"),
            "converting (v1.ListOptions) to (v1.DeleteOptions): unknown conversion"
        );
        assert!(
            options_type("v1", "WatchEvent")
                .expect_err("refused")
                .starts_with("no kind")
        );
        let body = envelope("v1", "ConfigMap", Vec::new());
        assert!(matches!(
            decode_delete_options(&body),
            Err(ProtobufError::Unmarshal(_))
        ));
    }

    #[test]
    fn malformed_bodies_get_gos_errors() {
        let error = |body: &[u8]| {
            let e = decode_delete_options(body).expect_err("an error");
            assert!(e.is_malformed(), "{e}");
            e.to_string()
        };
        assert_eq!(
            error(&envelope("v1", "DeleteOptions", b"\x22\x0aFore".to_vec())),
            "unexpected EOF"
        );
        assert_eq!(
            error(&envelope("v1", "DeleteOptions", b"\x0a\x01x".to_vec())),
            "proto: wrong wireType = 2 for field GracePeriodSeconds"
        );
        assert_eq!(
            error(&envelope("v1", "DeleteOptions", b"\x00\x01".to_vec())),
            "proto: DeleteOptions: illegal tag 0 (wire type 0)"
        );
        assert_eq!(error(b"k8s\0"), "empty body");
        assert_eq!(error(b"k8s\0\x0a\x05ab"), "unexpected EOF");
        assert_eq!(
            error(b"xyz"),
            "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
        );
        // An unknown field is skipped, as Go skips it.
        let unknown = envelope("v1", "DeleteOptions", b"\xa2\x06\x01x".to_vec());
        assert_eq!(decode_delete_options(&unknown).expect("decodes"), json!({}));
    }
}
