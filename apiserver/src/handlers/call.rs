//! What every verb reads from a call: the object key, write options, the decoded body and its type checks.

use serde_json::{Value, json};

use super::context::{Call, lock};
use crate::error::{ApiError, ApiResult};
use crate::lifecycle::{Part, WriteOpts};
use crate::registry::ResourceType;
use crate::request::Verb;
use crate::store::ObjKey;
use crate::table::Render;

pub(super) fn key(call: &Call<'_>) -> ObjKey {
    ObjKey::new(
        call.req.namespace.as_deref().unwrap_or(""),
        call.req.name.as_deref().unwrap_or(""),
    )
}

pub(super) fn render(call: &Call<'_>) -> Render {
    Render::from_accept(
        call.accept,
        call.query.get("includeObject"),
        call.clock.clone(),
    )
}

pub(super) fn part(call: &Call<'_>) -> Part {
    match call.req.subresource.as_deref() {
        Some("status") => Part::Status,
        Some("finalize") => Part::Finalize,
        _ => Part::Main,
    }
}

/// The field manager: `fieldManager`, or the User-Agent up to its first `/`, as the real server does.
pub(super) fn manager(call: &Call<'_>) -> String {
    call.query
        .get("fieldManager")
        .map(str::to_string)
        .unwrap_or_else(|| {
            let ua = call.user_agent.split('/').next().unwrap_or("").trim();
            if ua.is_empty() {
                "unknown".to_string()
            } else {
                ua.to_string()
            }
        })
}

pub(super) fn write_opts(call: &Call<'_>, applied: bool) -> ApiResult<WriteOpts> {
    let (strict, warn_unknown) = match call.query.get("fieldValidation") {
        None | Some("Warn") => (false, true),
        Some("Ignore") => (false, false),
        Some("Strict") => (true, false),
        Some(other) => {
            // Refused as the options object's validation refuses it: 422 on CreateOptions, UpdateOptions or
            // PatchOptions.
            let options = match call.req.verb {
                crate::request::Verb::Create => "CreateOptions",
                crate::request::Verb::Update => "UpdateOptions",
                _ => "PatchOptions",
            };
            return Err(ApiError::invalid(
                options,
                "meta.k8s.io",
                "",
                vec![crate::error::Cause {
                    reason: "FieldValueNotSupported".into(),
                    message: format!(
                        "Unsupported value: \"{other}\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""
                    ),
                    field: "fieldValidation".into(),
                }],
            ));
        }
    };
    let (body_errors, body_keys) = body_errors(call, strict || warn_unknown);
    Ok(WriteOpts {
        manager: manager(call),
        dry_run: dry_run(call)?,
        strict,
        warn_unknown,
        part: part(call),
        applied: applied || call.admission == super::context::Admission::Mutated,
        validate: call.admission != super::context::Admission::Probe,
        patch: None,
        body_errors,
        body_keys,
    })
}

/// The duplicate keys of a JSON create or update body, when `fieldValidation` asks for them (`checked`),
/// and the paths of all its keys in document order.
fn body_errors(call: &Call<'_>, checked: bool) -> (Vec<String>, Vec<String>) {
    let json_body = matches!(call.req.verb, Verb::Create | Verb::Update)
        && call.admission == super::context::Admission::None
        && !call.content_type.contains("yaml")
        && !crate::protobuf::is_protobuf(call.content_type)
        && call.req.subresource.as_deref() != Some("scale");
    if !checked || !json_body {
        return (Vec::new(), Vec::new());
    }
    crate::strict::json::decode_with_keys(call.body, crate::strict::json::Shape::Any)
        .map(|(_, errors, keys)| (errors, keys))
        .unwrap_or_default()
}

pub(super) fn dry_run(call: &Call<'_>) -> ApiResult<bool> {
    match call.query.get("dryRun") {
        None => Ok(false),
        Some("All") => Ok(true),
        Some(other) => Err(ApiError::bad_request(format!(
            "dryRun: Unsupported value: \"{other}\": supported values: \"All\""
        ))),
    }
}

/// Parses a YAML body; JSON (what clients such as kube send, even as `application/apply-patch+yaml`) is YAML
/// too and parses much faster as JSON.
pub(crate) fn parse_yaml(body: &[u8]) -> Result<Value, serde_yaml::Error> {
    match serde_json::from_slice(body) {
        Ok(v) => Ok(v),
        Err(_) => serde_yaml::from_slice(body),
    }
}

/// Decodes a JSON, YAML or protobuf request body into an object. Protobuf is read for built-in kinds (the
/// object, or the object written to `status`) and for every `scale` (an `autoscaling/v1` Scale, custom
/// resources' too, as kube-apiserver reads them), see [`crate::protobuf`].
pub(super) fn decode(call: &Call<'_>, rt: &ResourceType) -> ApiResult<Value> {
    if call.body.is_empty() {
        return Err(ApiError::bad_request("the request body is empty"));
    }
    if crate::protobuf::is_protobuf(call.content_type) {
        let subresource = call.req.subresource.as_deref();
        if rt.custom && subresource != Some("scale") {
            // kube-apiserver 1.35 fails such a request without an answer (its decoder of custom resources
            // dereferences a nil pointer), so there is no answer to match.
            return Err(ApiError::unsupported_media_type(format!(
                "the in-memory API server does not decode custom resources ({}) from protobuf: kube-apiserver has no protobuf messages for them; send JSON or YAML",
                rt.kind
            )));
        }
        if subresource == Some("scale")
            && let Some(named) = crate::protobuf::envelope_type(call.body)
        {
            check_scale_type(rt, &named)?;
        }
        let decoded = if subresource == Some("status") {
            crate::protobuf::decode_status(call.body)
        } else {
            crate::protobuf::decode(call.body)
        };
        return decoded.map_err(|e| {
            if e.is_malformed() {
                ApiError::bad_request(e.to_string())
            } else {
                ApiError::unsupported_media_type(e.to_string())
            }
        });
    }
    reject_binary(call.content_type)?;
    let yaml = call.content_type.contains("yaml");
    let parsed: Result<Value, String> = if yaml {
        parse_yaml(call.body).map_err(|e| e.to_string())
    } else {
        serde_json::from_slice(call.body).map_err(|e| e.to_string())
    };
    match parsed {
        Ok(v @ Value::Object(_)) => Ok(v),
        Ok(other) => Err(ApiError::bad_request(format!(
            "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}",
            json_type(&other)
        ))),
        Err(e) => Err(ApiError::bad_request(format!(
            "couldn't get version/kind; json parse error: {e}"
        ))),
    }
}

/// CBOR bodies (kube-apiserver 1.35 reads none with its `CBORServingAndStorage` gate off), and media types
/// with `protobuf` in their name that are not protobuf's own, are refused with 415 and kube-apiserver's
/// message.
pub(super) fn reject_binary(content_type: &str) -> ApiResult<()> {
    if content_type.contains("protobuf") || content_type.contains("cbor") {
        return Err(ApiError::unsupported_media_type(
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
        ));
    }
    Ok(())
}

pub(super) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Checks `apiVersion` and `kind` of a request body (`raw`, as sent) against the addressed type. A built-in
/// kind's body may leave either out: kube-apiserver's decoder takes them from the URL, and the object is
/// given them here.
pub(super) fn check_type(call: &Call<'_>, rt: &ResourceType, obj: &mut Value) -> ApiResult<()> {
    let raw = call.body;
    let kind = obj["kind"].as_str().unwrap_or("").to_string();
    let api_version = obj["apiVersion"].as_str().unwrap_or("").to_string();
    if !rt.custom {
        let kind = if kind.is_empty() {
            rt.kind.clone()
        } else {
            kind
        };
        let api_version = if api_version.is_empty() {
            rt.api_version()
        } else {
            api_version
        };
        if api_version != rt.api_version() {
            // The scheme's error, through the handler's `transformDecodeError`.
            let version = api_version.rsplit('/').next().unwrap_or_default();
            return Err(ApiError::bad_request(format!(
                "{kind} in version {version:?} cannot be handled as a {}: no kind {kind:?} is registered for \
                 version {api_version:?} in scheme \"pkg/runtime/scheme.go:111\"",
                rt.kind
            )));
        }
        if kind != rt.kind {
            return Err(wrong_builtin_kind(call, rt, &kind));
        }
        obj["apiVersion"] = json!(api_version);
        obj["kind"] = json!(kind);
        return Ok(());
    }
    if kind.is_empty() {
        // apiextensions-apiserver's decoder fails, and the handler adds the type and a summary of the body.
        let raw_text = String::from_utf8_lossy(raw);
        return Err(ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {}): Object 'Kind' is missing in '{raw_text}' ({})",
            rt.kind,
            summarize(raw)
        )));
    }
    if api_version != rt.api_version() {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({})",
            rt.api_version()
        )));
    }
    if kind != rt.kind {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({kind}) does not match the expected kind ({})",
            rt.kind
        )));
    }
    Ok(())
}

/// kube-apiserver's refusal of a body of another kind of the addressed version: its scheme decodes a kind it
/// knows (a kind of the group-version, or its list) and fails to convert it to the addressed internal type;
/// a kind it does not know it cannot decode.
fn wrong_builtin_kind(call: &Call<'_>, rt: &ResourceType, kind: &str) -> ApiError {
    let version = &rt.version;
    let registered = lock(call.state).is_ok_and(|state| {
        let base = kind.strip_suffix("List").unwrap_or(kind);
        state.registry.by_kind(&rt.group, version, kind).is_some()
            || state.registry.by_kind(&rt.group, version, base).is_some()
    });
    let cause = if registered {
        // The internal types' Go package: `core` for the core group, else the group's first label.
        let internal = match rt.group.split('.').next() {
            Some("") | None => "core",
            Some(first) => first,
        };
        format!(
            "converting ({version}.{kind}) to ({internal}.{}): unknown conversion",
            rt.kind
        )
    } else {
        format!(
            "no kind {kind:?} is registered for version {:?} in scheme \"pkg/runtime/scheme.go:111\"",
            rt.api_version()
        )
    };
    ApiError::bad_request(format!(
        "{kind} in version {version:?} cannot be handled as a {}: {cause}",
        rt.kind
    ))
}

/// Checks the type a protobuf body written to `scale` names: an `autoscaling/v1` Scale, or kube-apiserver's
/// `400` (for a custom resource, the scale scope's own wording, which names no kind).
fn check_scale_type(rt: &ResourceType, (api_version, kind): &(String, String)) -> ApiResult<()> {
    if kind == "Scale" && api_version == "autoscaling/v1" {
        return Ok(());
    }
    if rt.custom {
        return Err(ApiError::bad_request(
            "no kind is registered for the type v1.Scale in scheme \"pkg/runtime/scheme.go:111\"",
        ));
    }
    let version = api_version.rsplit('/').next().unwrap_or("");
    Err(ApiError::bad_request(format!(
        "{kind} in version \"{version}\" cannot be handled as a Scale: no kind \"{kind}\" is registered for version \"{api_version}\" in scheme \"pkg/runtime/scheme.go:111\""
    )))
}

/// apiserver's `summarizeData(body, 30)`: a JSON body's first 30 bytes, another body's in hex.
fn summarize(raw: &[u8]) -> String {
    const MAX: usize = 30;
    let (head, more) = if raw.len() > MAX {
        (&raw[..MAX], " ...")
    } else {
        (raw, "")
    };
    match raw.first() {
        None => "<empty>".into(),
        Some(b'{') => format!("{}{more}", String::from_utf8_lossy(head)),
        Some(_) => format!(
            "{}{more}",
            head.iter().map(|b| format!("{b:02x}")).collect::<String>()
        ),
    }
}

/// The type check of an applied configuration, as kube-apiserver's field manager words it (a missing kind or
/// apiVersion is just another type).
pub(super) fn check_applied_type(rt: &ResourceType, obj: &Value) -> ApiResult<()> {
    let kind = obj["kind"].as_str().unwrap_or("");
    let api_version = obj["apiVersion"].as_str().unwrap_or("");
    if api_version != rt.api_version() || kind != rt.kind {
        // Go's GroupVersionKind.String(): the core group is empty, so `/v1, Kind=ConfigMap`.
        let group_version = if api_version.contains('/') {
            api_version.to_string()
        } else {
            format!("/{api_version}")
        };
        return Err(ApiError::bad_request(format!(
            "invalid object type: {group_version}, Kind={kind}"
        )));
    }
    Ok(())
}

/// Makes the body's namespace agree with the path's.
pub(super) fn reconcile_namespace(
    call: &Call<'_>,
    rt: &ResourceType,
    obj: &mut Value,
) -> ApiResult<()> {
    if !obj["metadata"].is_object() {
        obj["metadata"] = json!({});
    }
    let meta = obj["metadata"]
        .as_object_mut()
        .ok_or_else(|| ApiError::bad_request("metadata must be an object"))?;
    if rt.namespaced {
        let path_ns = call.req.namespace.clone().unwrap_or_default();
        if let Some(body_ns) = meta.get("namespace").and_then(Value::as_str)
            && !body_ns.is_empty()
            && body_ns != path_ns
        {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        meta.insert("namespace".into(), json!(path_ns));
    } else {
        meta.remove("namespace");
    }
    Ok(())
}

pub(super) fn reconcile_name(call: &Call<'_>, obj: &mut Value) -> ApiResult<()> {
    let url = call.req.name.clone().unwrap_or_default();
    if !obj["metadata"].is_object() {
        obj["metadata"] = json!({});
    }
    match obj["metadata"]["name"].as_str() {
        Some(n) if !n.is_empty() && n != url => Err(ApiError::bad_request(format!(
            "the name of the object ({n}) does not match the name on the URL ({url})"
        ))),
        _ => {
            obj["metadata"]["name"] = json!(url);
            Ok(())
        }
    }
}
