//! A CRD's several versions: what kube-apiserver checks of `spec.versions` (names, `deprecationWarning`,
//! unique names) and of `spec.conversion`, the `Warning` a deprecated version's requests get, and the
//! conversion webhook the served versions convert through.

use std::sync::Arc;

use serde_json::Value;

use crate::error::Cause;
use crate::registry::{ConversionWebhook, InProcessHandlers};

fn invalid(field: String, value: &str, message: &str) -> Cause {
    Cause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: \"{value}\": {message}"),
        field,
    }
}

fn required(field: &str, message: &str) -> Cause {
    Cause {
        reason: "FieldValueRequired".into(),
        message: if message.is_empty() {
            "Required value".into()
        } else {
            format!("Required value: {message}")
        },
        field: field.into(),
    }
}

fn forbidden(field: &str, message: &str) -> Cause {
    Cause {
        reason: "FieldValueForbidden".into(),
        message: format!("Forbidden: {message}"),
        field: field.into(),
    }
}

/// The checks of each version's name and `deprecationWarning` (`validateCustomResourceDefinitionVersion`),
/// in the versions' order.
pub fn version_causes(versions: &[Value]) -> Vec<Cause> {
    let mut causes = Vec::new();
    for (i, version) in versions.iter().enumerate() {
        let name = version["name"].as_str().unwrap_or("");
        let errors = crate::validation::dns1035_label_messages(name);
        if !errors.is_empty() {
            causes.push(invalid(
                format!("spec.versions[{i}].name"),
                name,
                &errors.join(","),
            ));
        }
        let deprecated = version["deprecated"].as_bool() == Some(true);
        if let Some(warning) = version.get("deprecationWarning").and_then(Value::as_str) {
            let field = format!("spec.versions[{i}].deprecationWarning");
            for message in warning_errors(deprecated, warning) {
                causes.push(invalid(field.clone(), warning, &message));
            }
        }
    }
    causes
}

/// `validateDeprecationWarning`.
fn warning_errors(deprecated: bool, warning: &str) -> Vec<String> {
    if !deprecated {
        return vec!["can only be set for deprecated versions".into()];
    }
    let mut errors = Vec::new();
    if warning.len() > 256 {
        errors.push("must be <= 256 characters long".into());
    }
    if warning.is_empty() {
        errors.push("must not be an empty string".into());
    }
    for (i, c) in warning.char_indices() {
        if c.is_control() {
            errors.push(format!(
                "must only contain printable UTF-8 characters; control character found at index {i}"
            ));
            break;
        }
    }
    errors
}

/// Whether two versions share a name (`must contain unique version names`).
pub fn names_repeat(versions: &[Value]) -> bool {
    let mut seen = std::collections::BTreeSet::new();
    versions
        .iter()
        .any(|v| !seen.insert(v["name"].as_str().unwrap_or("")))
}

/// `ValidateCustomResourceDefinitionStoredVersions`: `status.storedVersions` names the storage version and
/// only versions in `spec.versions`.
pub fn stored_versions_causes(stored: &Value, versions: &[Value]) -> Vec<Cause> {
    let names: Vec<&str> = stored
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if names.is_empty() {
        // Go's nil slice, as the create's status has it before a storage version is found.
        return vec![Cause {
            reason: "FieldValueInvalid".into(),
            message: "Invalid value: null: must have at least one stored version".into(),
            field: "status.storedVersions".into(),
        }];
    }
    let mut causes = Vec::new();
    for version in versions {
        let name = version["name"].as_str().unwrap_or("");
        if version["storage"].as_bool() == Some(true) && !names.contains(&name) {
            causes.push(Cause {
                reason: "FieldValueInvalid".into(),
                message: format!("Invalid value: {stored}: must have the storage version {name}"),
                field: "status.storedVersions".into(),
            });
        }
    }
    for (i, name) in names.iter().enumerate() {
        if !versions.iter().any(|v| v["name"].as_str() == Some(name)) {
            causes.push(invalid(
                format!("status.storedVersions[{i}]"),
                name,
                &format!(
                    "missing from spec.versions; {name} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in {name} and removes {name} from status.storedVersions"
                ),
            ));
        }
    }
    causes
}

/// The checks of `spec.conversion` (`validateCustomResourceConversion`), with the field paths of
/// kube-apiserver's internal form (`spec.conversion.webhookClientConfig`, `spec.conversion.conversionReviewVersions`).
pub fn conversion_causes(spec: &Value) -> Vec<Cause> {
    let conversion = &spec["conversion"];
    if !conversion.is_object() {
        return Vec::new();
    }
    let mut causes = Vec::new();
    let strategy = conversion["strategy"].as_str().unwrap_or("");
    let webhook = &conversion["webhook"];
    let client = webhook.get("clientConfig").filter(|c| c.is_object());
    let reviews: Vec<&str> = webhook["conversionReviewVersions"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    match strategy {
        "None" | "Webhook" => {}
        "" => causes.push(required("spec.conversion.strategy", "")),
        other => causes.push(Cause {
            reason: "FieldValueNotSupported".into(),
            message: format!(
                "Unsupported value: \"{other}\": supported values: \"None\", \"Webhook\""
            ),
            field: "spec.conversion.strategy".into(),
        }),
    }
    if strategy == "Webhook" {
        if spec["preserveUnknownFields"].as_bool() == Some(true) {
            causes.push(invalid(
                "spec.conversion.strategy".into(),
                strategy,
                "must be None if spec.preserveUnknownFields is true",
            ));
        }
        let at = "spec.conversion.webhookClientConfig";
        match client {
            None => causes.push(required(at, "required when strategy is set to Webhook")),
            Some(cc) => {
                let url = cc.get("url").and_then(Value::as_str);
                let service = cc.get("service").filter(|s| s.is_object());
                if url.is_some() == service.is_some() {
                    causes.push(required(at, "exactly one of url or service is required"));
                } else if let Some(url) = url {
                    url_causes(&format!("{at}.url"), url, &mut causes);
                } else if let Some(service) = service {
                    for key in ["name", "namespace"] {
                        if service[key].as_str().unwrap_or("").is_empty() {
                            causes.push(required(&format!("{at}.service.{key}"), ""));
                        }
                    }
                }
            }
        }
        let at = "spec.conversion.conversionReviewVersions";
        if reviews.is_empty() {
            causes.push(required(at, ""));
        } else {
            let mut seen = std::collections::BTreeSet::new();
            for (i, v) in reviews.iter().enumerate() {
                if !seen.insert(*v) {
                    causes.push(invalid(format!("{at}[{i}]"), v, "duplicate version"));
                    continue;
                }
                for message in crate::validation::dns1035_label_messages(v) {
                    causes.push(invalid(format!("{at}[{i}]"), v, &message));
                }
            }
            if !reviews.iter().any(|v| *v == "v1" || *v == "v1beta1") {
                let listed = Value::from(reviews.clone());
                causes.push(Cause {
                    reason: "FieldValueInvalid".into(),
                    message: format!(
                        "Invalid value: {listed}: must include at least one of v1, v1beta1"
                    ),
                    field: at.into(),
                });
            }
        }
    } else {
        if client.is_some() {
            causes.push(forbidden(
                "spec.conversion.webhookClientConfig",
                "should not be set when strategy is not set to Webhook",
            ));
        }
        if !reviews.is_empty() {
            causes.push(forbidden(
                "spec.conversion.conversionReviewVersions",
                "should not be set when strategy is not set to Webhook",
            ));
        }
    }
    causes
}

/// `ValidateWebhookURL` with https forced.
fn url_causes(field: &str, raw: &str, causes: &mut Vec<Cause>) {
    const FORM: &str = "; desired format: https://host[/path]";
    match url::Url::parse(raw) {
        Err(e) => causes.push(required(
            field,
            &format!("url must be a valid URL: {e}{FORM}"),
        )),
        Ok(u) => {
            if u.scheme() != "https" {
                let message = format!("'https' is the only allowed URL scheme{FORM}");
                causes.push(invalid(field.into(), u.scheme(), &message));
            }
            if u.host_str().unwrap_or("").is_empty() {
                causes.push(invalid(
                    field.into(),
                    "",
                    &format!("host must be specified{FORM}"),
                ));
            }
            if let Some(q) = u.query().filter(|q| !q.is_empty()) {
                causes.push(invalid(
                    field.into(),
                    q,
                    "query parameters are not permitted in the URL",
                ));
            }
            if let Some(f) = u.fragment().filter(|f| !f.is_empty()) {
                causes.push(invalid(
                    field.into(),
                    f,
                    "fragments are not permitted in the URL",
                ));
            }
        }
    }
}

/// The `Warning` requests to a deprecated version get: its `deprecationWarning`, or
/// `GROUP/VERSION KIND is deprecated` (kube-apiserver's default).
pub fn deprecation_warning(spec: &Value, version: &Value) -> Option<String> {
    if version["deprecated"].as_bool() != Some(true) {
        return None;
    }
    if let Some(text) = version.get("deprecationWarning").and_then(Value::as_str) {
        return Some(text.to_string());
    }
    let group = spec["group"].as_str().unwrap_or("");
    let name = version["name"].as_str().unwrap_or("");
    let kind = spec["names"]["kind"].as_str().unwrap_or("");
    let message = format!("{group}/{name} {kind} is deprecated");
    // `defaultDeprecationWarning`: the first served version not deprecated that kube-aware order puts
    // before this one.
    let newer = spec["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|v| v["served"].as_bool() == Some(true) && v["deprecated"].as_bool() != Some(true))
        .filter_map(|v| v["name"].as_str())
        .filter(|v| kube_aware_key(v) < kube_aware_key(name))
        .min_by_key(|v| kube_aware_key(v));
    Some(match newer {
        Some(newer) => format!("{message}; use {group}/{newer} {kind}"),
        None => message,
    })
}

/// The conversion webhook of a CRD whose strategy is `Webhook`.
pub fn conversion_webhook(
    spec: &Value,
    handlers: &InProcessHandlers,
) -> Option<Arc<ConversionWebhook>> {
    let conversion = &spec["conversion"];
    if conversion["strategy"].as_str() != Some("Webhook") {
        return None;
    }
    let webhook = &conversion["webhook"];
    Some(Arc::new(ConversionWebhook {
        client_config: webhook["clientConfig"].clone(),
        review_versions: webhook["conversionReviewVersions"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        handlers: handlers.clone(),
    }))
}

/// The order kube-apiserver lists a CRD group's versions in (`CompareKubeAwareVersionStrings`): GA versions
/// by major version, then betas, then alphas (each by major then minor version, highest first), then any other
/// name alphabetically. The first is the group's preferred version.
pub fn kube_aware_key(
    version: &str,
) -> (u8, std::cmp::Reverse<u64>, std::cmp::Reverse<u64>, String) {
    use std::cmp::Reverse;
    let other = (3, Reverse(0), Reverse(0), version.to_string());
    let Some(rest) = version.strip_prefix('v') else {
        return other;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let (major, tail) = rest.split_at(digits);
    let Ok(major) = major.parse::<u64>() else {
        return other;
    };
    if tail.is_empty() {
        return (0, Reverse(major), Reverse(0), String::new());
    }
    for (class, prefix) in [(1, "beta"), (2, "alpha")] {
        if let Some(minor) = tail.strip_prefix(prefix)
            && !minor.is_empty()
            && minor.bytes().all(|b| b.is_ascii_digit())
            && let Ok(minor) = minor.parse::<u64>()
        {
            return (class, Reverse(major), Reverse(minor), String::new());
        }
    }
    other
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kube_aware_order() {
        let mut versions = vec![
            "foo", "v1alpha1", "v1", "v2beta1", "v2", "v1beta2", "v1beta1",
        ];
        versions.sort_by_key(|v| kube_aware_key(v));
        assert_eq!(
            versions,
            [
                "v2", "v1", "v2beta1", "v1beta2", "v1beta1", "v1alpha1", "foo"
            ]
        );
    }

    #[test]
    fn webhook_needs_a_client_and_review_versions() {
        let causes = conversion_causes(&json!({"conversion": {"strategy": "Webhook"}}));
        let fields: Vec<&str> = causes.iter().map(|c| c.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.conversion.webhookClientConfig",
                "spec.conversion.conversionReviewVersions"
            ]
        );
    }

    #[test]
    fn none_forbids_webhook_settings() {
        let causes = conversion_causes(&json!({"conversion": {"strategy": "None", "webhook": {
            "clientConfig": {"url": "https://x"}, "conversionReviewVersions": ["v1"]}}}));
        assert_eq!(causes.len(), 2);
        assert!(causes.iter().all(|c| c.reason == "FieldValueForbidden"));
    }

    #[test]
    fn default_deprecation_warning() {
        let spec = json!({"group": "example.dev", "names": {"kind": "Widget"}});
        let warning = deprecation_warning(&spec, &json!({"name": "v1", "deprecated": true}));
        assert_eq!(
            warning.as_deref(),
            Some("example.dev/v1 Widget is deprecated")
        );
        assert_eq!(deprecation_warning(&spec, &json!({"name": "v1"})), None);
    }
}
