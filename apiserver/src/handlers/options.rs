//! The `DeleteOptions` of a delete or delete-collection, as kube-apiserver reads them: from the body when
//! there is one (JSON, YAML or protobuf, whatever group-version it names, the query then unread but for
//! `dryRun=All`, which the server's own admission adds), from the query otherwise; then validated
//! (`ValidateDeleteOptions`: every cause in one `422`).

use serde_json::{Value, json};

use super::call::{json_type, parse_yaml};
use super::context::Call;
use crate::error::{ApiError, ApiResult, Cause};
use crate::lifecycle::Propagation;

/// What a delete takes from its options.
pub(super) struct DeleteOptions {
    /// `propagationPolicy`, or what `orphanDependents` says.
    pub(super) propagation: Option<Propagation>,
    /// `preconditions`: the uid and the resourceVersion.
    pub(super) preconditions: (Option<String>, Option<String>),
    /// `dryRun: [All]`.
    pub(super) dry_run: bool,
}

/// The media types a delete's body may be in.
const ACCEPTED: &str = "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf";

/// Reads and validates the delete options of `call`.
pub(super) fn delete_options(call: &Call<'_>) -> ApiResult<DeleteOptions> {
    let options = if call.body.is_empty() {
        from_query(call)
    } else {
        from_body(call.content_type, call.body)?
    };
    validate(&options)?;
    let propagation = match options["propagationPolicy"].as_str() {
        Some("Foreground") => Some(Propagation::Foreground),
        Some("Background") => Some(Propagation::Background),
        Some("Orphan") => Some(Propagation::Orphan),
        _ => match options["orphanDependents"].as_bool() {
            Some(true) => Some(Propagation::Orphan),
            Some(false) => Some(Propagation::Background),
            None => None,
        },
    };
    let pre = &options["preconditions"];
    Ok(DeleteOptions {
        propagation,
        preconditions: (
            pre["uid"].as_str().map(str::to_string),
            pre["resourceVersion"].as_str().map(str::to_string),
        ),
        // `dryRun=All` in the query counts beside a body too: the server's own admission runs a delete as a
        // dry run first that way (kube-apiserver reads no query beside a body).
        dry_run: options["dryRun"]
            .as_array()
            .is_some_and(|a| a.iter().any(|v| v == "All"))
            || call.query.get("dryRun") == Some("All"),
    })
}

/// The options a query carries (`propagationPolicy`, `orphanDependents`, `dryRun`), as JSON.
fn from_query(call: &Call<'_>) -> Value {
    let mut options = json!({});
    if let Some(policy) = call.query.get("propagationPolicy") {
        options["propagationPolicy"] = json!(policy);
    }
    if let Some(orphan) = call.query.get("orphanDependents") {
        options["orphanDependents"] = json!(orphan == "true");
    }
    if let Some(dry_run) = call.query.get("dryRun") {
        options["dryRun"] = json!([dry_run]);
    }
    options
}

/// The options a body carries, as JSON: decoded as the `Content-Type` says, its type checked as
/// kube-apiserver's meta scheme checks it.
fn from_body(content_type: &str, body: &[u8]) -> ApiResult<Value> {
    if crate::protobuf::is_protobuf(content_type) {
        return crate::protobuf::decode_delete_options(body)
            .map_err(|e| ApiError::bad_request(e.to_string()));
    }
    let parsed: Result<Value, String> = match content_type.to_ascii_lowercase().as_str() {
        // Without a `Content-Type`, the first media type served: JSON.
        "application/json" | "" => serde_json::from_slice(body).map_err(|e| e.to_string()),
        "application/yaml" => parse_yaml(body).map_err(|e| e.to_string()),
        _ => return Err(ApiError::unsupported_media_type(ACCEPTED)),
    };
    let options = match parsed {
        Ok(v @ Value::Object(_)) => v,
        Ok(other) => {
            return Err(ApiError::bad_request(format!(
                "couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }}",
                json_type(&other)
            )));
        }
        Err(e) => {
            return Err(ApiError::bad_request(format!(
                "couldn't get version/kind; json parse error: {e}"
            )));
        }
    };
    let text = |key: &str| options[key].as_str().unwrap_or_default().to_string();
    crate::protobuf::options_type(&text("apiVersion"), &text("kind"))
        .map_err(ApiError::bad_request)?;
    if let Some(message) = mistyped(&options) {
        return Err(ApiError::bad_request(message));
    }
    Ok(options)
}

/// What Go's JSON decoder says of the first field of a `DeleteOptions` body whose value has the wrong type
/// (`json: cannot unmarshal string into Go struct field DeleteOptions.gracePeriodSeconds of type int64`).
fn mistyped(options: &Value) -> Option<String> {
    // Go names the innermost struct, and the number itself only when it does not fit an integer field.
    let wrong = |field: &str, v: &Value, go_type: &str| {
        let what = match v {
            Value::Number(n) if go_type == "int64" => format!("number {n}"),
            other => json_type(other).to_string(),
        };
        let owner = if field.starts_with("preconditions.") {
            "Preconditions"
        } else {
            "DeleteOptions"
        };
        format!(
            "json: cannot unmarshal {what} into Go struct field {owner}.{field} of type {go_type}"
        )
    };
    let check = |field: &str, v: &Value, go_type: &str| -> Option<String> {
        let fits = match go_type {
            "int64" => v.is_null() || v.as_i64().is_some(),
            "bool" => v.is_null() || v.is_boolean(),
            "[]string" => v.is_null() || v.is_array(),
            _ => v.is_null() || v.is_string(),
        };
        (!fits).then(|| wrong(field, v, go_type))
    };
    let field = |key: &str| options.get(key).unwrap_or(&Value::Null);
    check("gracePeriodSeconds", field("gracePeriodSeconds"), "int64")
        .or_else(|| match field("preconditions") {
            Value::Null => None,
            Value::Object(pre) => {
                let get = |k: &str| pre.get(k).unwrap_or(&Value::Null);
                check("preconditions.uid", get("uid"), "types.UID").or_else(|| {
                    check(
                        "preconditions.resourceVersion",
                        get("resourceVersion"),
                        "string",
                    )
                })
            }
            other => Some(wrong("preconditions", other, "v1.Preconditions")),
        })
        .or_else(|| check("orphanDependents", field("orphanDependents"), "bool"))
        .or_else(|| {
            check(
                "propagationPolicy",
                field("propagationPolicy"),
                "v1.DeletionPropagation",
            )
        })
        .or_else(|| {
            check("dryRun", field("dryRun"), "[]string").or_else(|| {
                field("dryRun")
                    .as_array()
                    .and_then(|items| items.iter().find_map(|i| check("dryRun", i, "string")))
            })
        })
}

/// `ValidateDeleteOptions`: both `orphanDependents` and `propagationPolicy`, an unknown policy, a dry run
/// other than `All`.
fn validate(options: &Value) -> ApiResult<()> {
    let mut causes = Vec::new();
    let policy = options["propagationPolicy"].as_str();
    if let Some(policy) = policy
        && !options["orphanDependents"].is_null()
    {
        causes.push(Cause {
            reason: "FieldValueInvalid".into(),
            message: format!(
                "Invalid value: \"{policy}\": orphanDependents and deletionPropagation cannot be both set"
            ),
            field: "propagationPolicy".into(),
        });
    }
    if let Some(policy) = policy
        && !matches!(policy, "Foreground" | "Background" | "Orphan")
    {
        causes.push(Cause {
            reason: "FieldValueNotSupported".into(),
            message: format!(
                "Unsupported value: \"{policy}\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
            ),
            field: "propagationPolicy".into(),
        });
    }
    let dry_run: Vec<&str> = options["dryRun"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if dry_run.iter().any(|v| *v != "All") {
        causes.push(Cause {
            reason: "FieldValueNotSupported".into(),
            message: format!(
                "Unsupported value: {}: supported values: \"All\"",
                serde_json::to_string(&dry_run).unwrap_or_default()
            ),
            field: "dryRun".into(),
        });
    }
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(
            "DeleteOptions",
            "meta.k8s.io",
            "",
            causes,
        ))
    }
}
