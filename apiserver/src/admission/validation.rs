//! Validating `ValidatingWebhookConfiguration`s and `MutatingWebhookConfiguration`s on create and update,
//! as kube-apiserver's `admissionregistration` validation does (Kubernetes 1.35), with its field paths,
//! reasons and messages (on the configuration as `defaults.rs` completed it).
//!
//! On update, what the stored configuration already gets away with stays allowed: side effects other than
//! `None`/`NoneOnDryRun`, unrecognized review versions, duplicate webhook names, invalid label values in
//! selectors; and match conditions are not checked again when no webhook's changed.

use serde_json::Value;

use super::expression;
use crate::error::Cause;
use crate::schema::dns1035_label_errors;
use crate::selector::{
    DNS1123_SUBDOMAIN_FMT, DNS1123_SUBDOMAIN_MAX_LEN, DNS1123_SUBDOMAIN_MSG, go_quote,
    is_dns1123_subdomain, label_value_errors, max_len_error, qualified_name_errors, regex_error,
};

/// The admission review versions kube-apiserver accepts.
const REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];

/// What the update allows of the stored configuration (kube-apiserver's `validationOptions`).
struct Options {
    ignore_match_conditions: bool,
    require_no_side_effects: bool,
    require_recognized_review_version: bool,
    require_unique_names: bool,
    allow_invalid_label_values: bool,
}

impl Options {
    fn for_create() -> Self {
        Options {
            ignore_match_conditions: false,
            require_no_side_effects: true,
            require_recognized_review_version: true,
            require_unique_names: true,
            allow_invalid_label_values: false,
        }
    }

    fn for_update(new: &Value, old: &Value) -> Self {
        let hooks = |o: &Value| o["webhooks"].as_array().cloned().unwrap_or_default();
        let (new_hooks, old_hooks) = (hooks(new), hooks(old));
        let conditions = |h: &Value| match &h["matchConditions"] {
            Value::Array(a) if a.is_empty() => Value::Null,
            other => other.clone(),
        };
        let same_conditions = new_hooks.len() == old_hooks.len()
            && new_hooks
                .iter()
                .zip(&old_hooks)
                .all(|(n, o)| conditions(n) == conditions(o));
        let mut names = Vec::new();
        let unique = old_hooks.iter().all(|h| {
            let name = h["name"].as_str().unwrap_or_default();
            let fresh = !names.contains(&name);
            names.push(name);
            fresh
        });
        let invalid_labels = old_hooks.iter().any(|h| {
            ["namespaceSelector", "objectSelector"].iter().any(|s| {
                let mut causes = Vec::new();
                label_selector(&h[*s], false, "", &mut causes);
                !causes.is_empty()
            })
        });
        Options {
            ignore_match_conditions: same_conditions,
            require_no_side_effects: old_hooks
                .iter()
                .all(|h| matches!(h["sideEffects"].as_str(), Some("None" | "NoneOnDryRun"))),
            require_recognized_review_version: old_hooks.iter().all(|h| {
                let versions = strings(&h["admissionReviewVersions"]);
                versions.is_empty()
                    || versions
                        .iter()
                        .any(|v| REVIEW_VERSIONS.contains(&v.as_str()))
            }),
            require_unique_names: unique,
            allow_invalid_label_values: invalid_labels,
        }
    }
}

/// The causes kube-apiserver refuses the configuration `obj` (of `kind`, defaulted, as sent) with; `old` is
/// the stored configuration on update.
pub(crate) fn validate_configuration(kind: &str, obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mutating = kind == "MutatingWebhookConfiguration";
    let options = match old {
        Some(old) => Options::for_update(obj, old),
        None => Options::for_create(),
    };
    let mut causes = Vec::new();
    let mut names: Vec<&str> = Vec::new();
    for (i, hook) in obj["webhooks"].as_array().into_iter().flatten().enumerate() {
        let path = format!("webhooks[{i}]");
        webhook(hook, mutating, &options, &path, &mut causes);
        review_versions(
            &hook["admissionReviewVersions"],
            options.require_recognized_review_version,
            &format!("{path}.admissionReviewVersions"),
            &mut causes,
        );
        let name = hook["name"].as_str().unwrap_or_default();
        if options.require_unique_names && !name.is_empty() {
            if names.contains(&name) {
                causes.push(duplicate(&format!("{path}.name"), name));
            } else {
                names.push(name);
            }
        }
    }
    causes
}

fn webhook(hook: &Value, mutating: bool, options: &Options, path: &str, causes: &mut Vec<Cause>) {
    fully_qualified_name(
        hook["name"].as_str().unwrap_or_default(),
        &format!("{path}.name"),
        causes,
    );
    for (i, rule) in hook["rules"].as_array().into_iter().flatten().enumerate() {
        rule_with_operations(rule, &format!("{path}.rules[{i}]"), causes);
    }
    one_of(hook, "failurePolicy", &["Fail", "Ignore"], path, causes);
    one_of(hook, "matchPolicy", &["Equivalent", "Exact"], path, causes);
    let side_effects: &[&str] = if options.require_no_side_effects {
        &["None", "NoneOnDryRun"]
    } else {
        &["None", "NoneOnDryRun", "Some", "Unknown"]
    };
    if hook["sideEffects"].is_null() {
        causes.push(required(
            &format!("{path}.sideEffects"),
            &format!("must specify one of {}", side_effects.join(", ")),
        ));
    }
    one_of(hook, "sideEffects", side_effects, path, causes);
    if let Some(t) = hook["timeoutSeconds"].as_i64()
        && !(1..=30).contains(&t)
    {
        causes.push(invalid(
            &format!("{path}.timeoutSeconds"),
            &t.to_string(),
            "the timeout value must be between 1 and 30 seconds",
        ));
    }
    for selector in ["namespaceSelector", "objectSelector"] {
        label_selector(
            &hook[selector],
            options.allow_invalid_label_values,
            &format!("{path}.{selector}"),
            causes,
        );
    }
    if mutating {
        one_of(
            hook,
            "reinvocationPolicy",
            &["IfNeeded", "Never"],
            path,
            causes,
        );
    }
    client_config(
        &hook["clientConfig"],
        &format!("{path}.clientConfig"),
        causes,
    );
    if !options.ignore_match_conditions {
        match_conditions(
            &hook["matchConditions"],
            &format!("{path}.matchConditions"),
            causes,
        );
    }
}

/// `IsFullyQualifiedName`: a DNS subdomain of at least three segments.
fn fully_qualified_name(name: &str, path: &str, causes: &mut Vec<Cause>) {
    if name.is_empty() {
        causes.push(required(path, ""));
        return;
    }
    let errors = subdomain_errors(name);
    if !errors.is_empty() {
        causes.push(invalid(path, &go_quote(name), &errors.join(",")));
    } else if name.split('.').count() < 3 {
        causes.push(invalid(
            path,
            &go_quote(name),
            "should be a domain with at least three segments separated by dots",
        ));
    }
}

/// `IsDNS1123Subdomain`'s messages.
fn subdomain_errors(s: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if s.len() > DNS1123_SUBDOMAIN_MAX_LEN {
        errors.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LEN));
    }
    if !is_dns1123_subdomain(s) {
        errors.push(regex_error(
            DNS1123_SUBDOMAIN_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errors
}

fn rule_with_operations(rule: &Value, path: &str, causes: &mut Vec<Cause>) {
    let operations = strings(&rule["operations"]);
    let ops_path = format!("{path}.operations");
    if operations.is_empty() {
        causes.push(required(&ops_path, ""));
    }
    if operations.len() > 1 && operations.iter().any(|o| o == "*") {
        causes.push(invalid(
            &ops_path,
            &go_json_list(&operations),
            "if '*' is present, must not specify other operations",
        ));
    }
    for (i, op) in operations.iter().enumerate() {
        if !["*", "CONNECT", "CREATE", "DELETE", "UPDATE"].contains(&op.as_str()) {
            causes.push(not_supported(
                &format!("{ops_path}[{i}]"),
                op,
                &["*", "CONNECT", "CREATE", "DELETE", "UPDATE"],
            ));
        }
    }
    let groups = strings(&rule["apiGroups"]);
    if groups.is_empty() {
        causes.push(required(&format!("{path}.apiGroups"), ""));
    }
    if groups.len() > 1 && groups.iter().any(|g| g == "*") {
        causes.push(invalid(
            &format!("{path}.apiGroups"),
            &go_json_list(&groups),
            "if '*' is present, must not specify other API groups",
        ));
    }
    let versions = strings(&rule["apiVersions"]);
    if versions.is_empty() {
        causes.push(required(&format!("{path}.apiVersions"), ""));
    }
    if versions.len() > 1 && versions.iter().any(|v| v == "*") {
        causes.push(invalid(
            &format!("{path}.apiVersions"),
            &go_json_list(&versions),
            "if '*' is present, must not specify other API versions",
        ));
    }
    for (i, v) in versions.iter().enumerate() {
        if v.is_empty() {
            causes.push(required(&format!("{path}.apiVersions[{i}]"), ""));
        }
    }
    resources(
        &strings(&rule["resources"]),
        &format!("{path}.resources"),
        causes,
    );
    if let Some(scope) = rule["scope"].as_str()
        && !["*", "Cluster", "Namespaced"].contains(&scope)
    {
        causes.push(not_supported(
            &format!("{path}.scope"),
            scope,
            &["*", "Cluster", "Namespaced"],
        ));
    }
}

/// `validateResources`: `resource/subresource` entries with the wildcard rules.
fn resources(resources: &[String], path: &str, causes: &mut Vec<Cause>) {
    if resources.is_empty() {
        causes.push(required(path, ""));
    }
    let mut with_wildcard_sub: Vec<&str> = Vec::new();
    let mut sub_with_wildcard_resource: Vec<&str> = Vec::new();
    let (mut double, mut single, mut plain) = (false, false, false);
    for (i, entry) in resources.iter().enumerate() {
        if entry.is_empty() {
            causes.push(required(&format!("{path}[{i}]"), ""));
            continue;
        }
        double |= entry == "*/*";
        single |= entry == "*";
        let Some((res, sub)) = entry.split_once('/') else {
            plain = entry != "*";
            continue;
        };
        if with_wildcard_sub.contains(&res) {
            causes.push(invalid(
                &format!("{path}[{i}]"),
                &go_quote(entry),
                &format!("if '{res}/*' is present, must not specify {entry}"),
            ));
        }
        if sub_with_wildcard_resource.contains(&sub) {
            causes.push(invalid(
                &format!("{path}[{i}]"),
                &go_quote(entry),
                &format!("if '*/{sub}' is present, must not specify {entry}"),
            ));
        }
        if sub == "*" {
            with_wildcard_sub.push(res);
        }
        if res == "*" {
            sub_with_wildcard_resource.push(sub);
        }
    }
    if resources.len() > 1 && double {
        causes.push(invalid(
            path,
            &go_json_list(resources),
            "if '*/*' is present, must not specify other resources",
        ));
    }
    if single && plain {
        causes.push(invalid(
            path,
            &go_json_list(resources),
            "if '*' is present, must not specify other resources without subresources",
        ));
    }
}

fn review_versions(
    versions: &Value,
    require_recognized: bool,
    path: &str,
    causes: &mut Vec<Cause>,
) {
    let versions = strings(versions);
    if versions.is_empty() {
        causes.push(required(
            path,
            &format!("must specify one of {}", REVIEW_VERSIONS.join(", ")),
        ));
        return;
    }
    let mut seen: Vec<&str> = Vec::new();
    let mut recognized = false;
    for (i, v) in versions.iter().enumerate() {
        if seen.contains(&v.as_str()) {
            causes.push(invalid(
                &format!("{path}[{i}]"),
                &go_quote(v),
                "duplicate version",
            ));
            continue;
        }
        seen.push(v);
        for e in dns1035_label_errors(v) {
            causes.push(invalid(&format!("{path}[{i}]"), &go_quote(v), &e));
        }
        recognized |= REVIEW_VERSIONS.contains(&v.as_str());
    }
    if require_recognized && !recognized {
        causes.push(invalid(
            path,
            &go_json_list(&versions),
            &format!(
                "must include at least one of {}",
                REVIEW_VERSIONS.join(", ")
            ),
        ));
    }
}

/// `ValidateLabelSelector`: the keys and values of `matchLabels`, and each expression's operator, values
/// and key.
fn label_selector(
    selector: &Value,
    allow_invalid_values: bool,
    path: &str,
    causes: &mut Vec<Cause>,
) {
    if let Some(labels) = selector["matchLabels"].as_object() {
        let at = format!("{path}.matchLabels");
        for (k, v) in labels {
            for e in label_key_errors(k) {
                causes.push(invalid(&at, &go_quote(k), &e));
            }
            let v = v.as_str().unwrap_or_default();
            for e in label_value_errors(v) {
                causes.push(invalid(&at, &go_quote(v), &e));
            }
        }
    }
    for (i, expr) in selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = format!("{path}.matchExpressions[{i}]");
        let values = strings(&expr["values"]);
        match expr["operator"].as_str().unwrap_or_default() {
            "In" | "NotIn" if values.is_empty() => causes.push(required(
                &format!("{at}.values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "Exists" | "DoesNotExist" if !values.is_empty() => causes.push(forbidden(
                &format!("{at}.values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => causes.push(invalid(
                &format!("{at}.operator"),
                &go_quote(other),
                "not a valid selector operator",
            )),
        }
        let key = expr["key"].as_str().unwrap_or_default();
        for e in label_key_errors(key) {
            causes.push(invalid(&format!("{at}.key"), &go_quote(key), &e));
        }
        if !allow_invalid_values {
            for (j, v) in values.iter().enumerate() {
                for e in label_value_errors(v) {
                    causes.push(invalid(&format!("{at}.values[{j}]"), &go_quote(v), &e));
                }
            }
        }
    }
}

fn client_config(cc: &Value, path: &str, causes: &mut Vec<Cause>) {
    let url = cc["url"].as_str();
    let service = cc.get("service").filter(|s| !s.is_null());
    match (url, service) {
        (Some(url), None) => webhook_url(url, &format!("{path}.url"), causes),
        (None, Some(service)) => webhook_service(service, &format!("{path}.service"), causes),
        _ => causes.push(required(path, "exactly one of url or service is required")),
    }
}

/// `ValidateWebhookURL` (https only), on the parts Go's `url.Parse` finds.
fn webhook_url(raw: &str, path: &str, causes: &mut Vec<Cause>) {
    const FORM: &str = "; desired format: https://host[/path]";
    let url = GoUrl::parse(raw);
    if url.scheme != "https" {
        causes.push(invalid(
            path,
            &go_quote(&url.scheme),
            &format!("'https' is the only allowed URL scheme{FORM}"),
        ));
    }
    if url.host.is_empty() {
        causes.push(invalid(
            path,
            &go_quote(&url.host),
            &format!("host must be specified{FORM}"),
        ));
    }
    if let Some(user) = url.user {
        causes.push(invalid(
            path,
            &go_quote(&user),
            "user information is not permitted in the URL",
        ));
    }
    if !url.fragment.is_empty() {
        causes.push(invalid(
            path,
            &go_quote(&url.fragment),
            "fragments are not permitted in the URL",
        ));
    }
    if !url.query.is_empty() {
        causes.push(invalid(
            path,
            &go_quote(&url.query),
            "query parameters are not permitted in the URL",
        ));
    }
}

/// The parts of a URL as Go's `net/url.Parse` splits them.
struct GoUrl {
    scheme: String,
    user: Option<String>,
    host: String,
    query: String,
    fragment: String,
}

impl GoUrl {
    fn parse(raw: &str) -> GoUrl {
        let (rest, fragment) = match raw.split_once('#') {
            Some((r, f)) => (r, f.to_string()),
            None => (raw, String::new()),
        };
        let mut scheme = String::new();
        let mut rest = rest;
        if let Some((s, after)) = rest.split_once(':')
            && s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        {
            scheme = s.to_ascii_lowercase();
            rest = after;
        }
        let (rest, query) = match rest.split_once('?') {
            Some((r, q)) => (r, q.to_string()),
            None => (rest, String::new()),
        };
        let (mut user, mut host) = (None, String::new());
        if let Some(after) = rest.strip_prefix("//") {
            let authority = after.split('/').next().unwrap_or_default();
            match authority.rsplit_once('@') {
                Some((u, h)) => {
                    user = Some(u.to_string());
                    host = h.to_string();
                }
                None => host = authority.to_string(),
            }
        }
        GoUrl {
            scheme,
            user,
            host,
            query,
            fragment,
        }
    }
}

/// `ValidateWebhookService`: name, namespace, port, and a path of DNS-subdomain segments.
fn webhook_service(service: &Value, path: &str, causes: &mut Vec<Cause>) {
    if service["name"].as_str().is_none_or(str::is_empty) {
        causes.push(required(&format!("{path}.name"), ""));
    }
    if service["namespace"].as_str().is_none_or(str::is_empty) {
        causes.push(required(&format!("{path}.namespace"), ""));
    }
    let port = service["port"].as_i64().unwrap_or(0);
    if !(1..=65535).contains(&port) {
        causes.push(invalid(
            &format!("{path}.port"),
            &port.to_string(),
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    let Some(url_path) = service["path"].as_str() else {
        return;
    };
    let at = format!("{path}.path");
    if url_path == "/" || url_path.is_empty() {
        return;
    }
    if url_path == "//" {
        causes.push(invalid(
            &at,
            &go_quote(url_path),
            "segment[0] may not be empty",
        ));
        return;
    }
    if !url_path.starts_with('/') {
        causes.push(invalid(&at, &go_quote(url_path), "must start with a '/'"));
    }
    let check = url_path.get(1..).unwrap_or_default();
    let check = check.strip_suffix('/').unwrap_or(check);
    for (i, step) in check.split('/').enumerate() {
        if step.is_empty() {
            causes.push(invalid(
                &at,
                &go_quote(url_path),
                &format!("segment[{i}] may not be empty"),
            ));
            continue;
        }
        for e in subdomain_errors(step) {
            causes.push(invalid(
                &at,
                &go_quote(url_path),
                &format!("segment[{i}]: {e}"),
            ));
        }
    }
}

fn match_conditions(conditions: &Value, path: &str, causes: &mut Vec<Cause>) {
    let list = conditions.as_array().cloned().unwrap_or_default();
    if list.len() > 64 {
        causes.push(Cause {
            reason: "FieldValueTooMany".into(),
            message: format!("Too many: {}: must have at most 64 items", list.len()),
            field: path.to_string(),
        });
    }
    let mut names: Vec<String> = Vec::new();
    for (i, condition) in list.iter().enumerate() {
        let at = format!("{path}[{i}]");
        let expression = condition["expression"].as_str().unwrap_or_default().trim();
        if expression.is_empty() {
            causes.push(required(&format!("{at}.expression"), ""));
        } else if let Err(detail) = expression::check(expression) {
            causes.push(invalid(
                &format!("{at}.expression"),
                &go_quote(expression),
                &detail,
            ));
        }
        let name = condition["name"].as_str().unwrap_or_default();
        if name.is_empty() {
            causes.push(required(&format!("{at}.name"), ""));
        } else {
            for e in qualified_name_errors(name) {
                causes.push(invalid(&format!("{at}.name"), &go_quote(name), &e));
            }
            if names.iter().any(|n| n == name) {
                causes.push(duplicate(&format!("{at}.name"), name));
            } else {
                names.push(name.to_string());
            }
        }
    }
}

/// A `NotSupported` check of `hook[key]` when it is set.
fn one_of(hook: &Value, key: &str, supported: &[&str], path: &str, causes: &mut Vec<Cause>) {
    if let Some(v) = hook[key].as_str()
        && !supported.contains(&v)
    {
        causes.push(not_supported(&format!("{path}.{key}"), v, supported));
    }
}

/// A label key's errors: `IsQualifiedName`'s, naming a label key.
fn label_key_errors(key: &str) -> Vec<String> {
    qualified_name_errors(key)
        .into_iter()
        .map(|e| e.replacen("a qualified name ", "a valid label key ", 1))
        .collect()
}

/// A list of strings as the server prints a bad value that is a list: compact JSON.
fn go_json_list(values: &[String]) -> String {
    serde_json::to_string(values).unwrap_or_default()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .map(|s| s.as_str().unwrap_or_default().to_string())
        .collect()
}

fn cause(reason: &str, field: &str, message: String) -> Cause {
    Cause {
        reason: reason.into(),
        message,
        field: field.into(),
    }
}

/// `field.Required`.
fn required(field: &str, detail: &str) -> Cause {
    let message = if detail.is_empty() {
        "Required value".to_string()
    } else {
        format!("Required value: {detail}")
    };
    cause("FieldValueRequired", field, message)
}

/// `field.Invalid`, `value` already printed as Go prints it.
fn invalid(field: &str, value: &str, detail: &str) -> Cause {
    cause(
        "FieldValueInvalid",
        field,
        format!("Invalid value: {value}: {detail}"),
    )
}

/// `field.NotSupported`.
fn not_supported(field: &str, value: &str, supported: &[&str]) -> Cause {
    let supported: Vec<String> = supported.iter().map(|s| go_quote(s)).collect();
    cause(
        "FieldValueNotSupported",
        field,
        format!(
            "Unsupported value: {}: supported values: {}",
            go_quote(value),
            supported.join(", ")
        ),
    )
}

/// `field.Duplicate`.
fn duplicate(field: &str, value: &str) -> Cause {
    cause(
        "FieldValueDuplicate",
        field,
        format!("Duplicate value: {}", go_quote(value)),
    )
}

/// `field.Forbidden`.
fn forbidden(field: &str, detail: &str) -> Cause {
    cause("FieldValueForbidden", field, format!("Forbidden: {detail}"))
}

#[cfg(test)]
#[path = "validation_tests.rs"]
mod tests;
