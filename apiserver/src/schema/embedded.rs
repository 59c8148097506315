//! Embedded resources (`x-kubernetes-embedded-resource`): `apiVersion`, `kind` and the checked parts of
//! `metadata`.

use serde_json::{Map, Value};

use super::compile::is_meta_key;
use super::errors::FieldError;
use super::go_format::sorted_keys;
use super::go_regex::{dns1035_re, dns1123_label_re, dns1123_subdomain_re, re_match};
use super::node::Node;
use super::pruning::{go_json_type, object_meta_decode_error};
use super::verdict::{child, index_path, key_path};

pub(super) fn embedded_validate(
    x: &Value,
    s: Option<&Node>,
    pth: &str,
    root: bool,
    out: &mut Vec<FieldError>,
) {
    let Some(s) = s else { return };
    match x {
        Value::Object(m) => {
            if s.embedded_resource && !root {
                validate_embedded_resource(m, pth, out);
            }
            for k in sorted_keys(m) {
                if root && is_meta_key(&k) {
                    continue;
                }
                let Some(v) = m.get(&k) else { continue };
                if let Some(prop) = s.properties.get(&k) {
                    embedded_validate(v, Some(prop), &child(pth, &k), false, out);
                } else if let Some(ap) = &s.additional_properties {
                    embedded_validate(v, ap.schema(), &key_path(pth, &k), false, out);
                }
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                embedded_validate(v, s.items.as_deref(), &index_path(pth, i), false, out);
            }
        }
        _ => {}
    }
}

pub(super) fn validate_embedded_resource(
    m: &Map<String, Value>,
    pth: &str,
    out: &mut Vec<FieldError>,
) {
    if !m.contains_key("apiVersion") {
        out.push(FieldError::required(child(pth, "apiVersion"), ""));
    }
    if !m.contains_key("kind") {
        out.push(FieldError::required(child(pth, "kind"), ""));
    }
    for k in sorted_keys(m) {
        let Some(v) = m.get(&k) else { continue };
        match k.as_str() {
            "apiVersion" => match v {
                Value::String(s) if s.is_empty() => {
                    out.push(FieldError::invalid(
                        child(pth, "apiVersion"),
                        v.clone(),
                        "must not be empty",
                    ));
                }
                Value::String(s) => {
                    if s != "/" && s.matches('/').count() > 1 {
                        out.push(FieldError::invalid(
                            child(pth, "apiVersion"),
                            v.clone(),
                            format!("unexpected GroupVersion string: {s}"),
                        ));
                    }
                }
                _ => out.push(FieldError::invalid(
                    child(pth, "apiVersion"),
                    v.clone(),
                    "must be a string",
                )),
            },
            "kind" => match v {
                Value::String(s) if s.is_empty() => {
                    out.push(FieldError::invalid(
                        child(pth, "kind"),
                        v.clone(),
                        "must not be empty",
                    ));
                }
                Value::String(s) => {
                    let errs = dns1035_label_errors(&s.to_lowercase());
                    if !errs.is_empty() {
                        out.push(FieldError::invalid(
                            child(pth, "kind"),
                            v.clone(),
                            format!(
                                "may have mixed case, but should otherwise match: {}",
                                errs.join(",")
                            ),
                        ));
                    }
                }
                _ => out.push(FieldError::invalid(
                    child(pth, "kind"),
                    v.clone(),
                    "must be a string",
                )),
            },
            "metadata" => validate_embedded_meta(v, &child(pth, "metadata"), out),
            _ => {}
        }
    }
}

pub(super) fn validate_embedded_meta(v: &Value, pth: &str, out: &mut Vec<FieldError>) {
    let m = match v {
        Value::Null => return,
        Value::Object(m) => m,
        other => {
            out.push(FieldError::invalid(
                pth,
                other.clone(),
                format!(
                    "json: cannot unmarshal {} into Go value of type v1.ObjectMeta",
                    go_json_type(other)
                ),
            ));
            return;
        }
    };
    if let Some(e) = object_meta_decode_error(m) {
        out.push(FieldError::invalid(pth, v.clone(), e));
        return;
    }
    let get = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or("");
    let generate_name = get("generateName");
    if !generate_name.is_empty() {
        for msg in path_segment_errors(generate_name, true) {
            out.push(FieldError::invalid(
                child(pth, "generateName"),
                Value::from(generate_name),
                msg,
            ));
        }
    }
    let name = get("name");
    if !name.is_empty() {
        for msg in path_segment_errors(name, false) {
            out.push(FieldError::invalid(
                child(pth, "name"),
                Value::from(name),
                msg,
            ));
        }
    }
    let namespace = get("namespace");
    if !namespace.is_empty() {
        for msg in dns1123_label_errors(namespace) {
            out.push(FieldError::invalid(
                child(pth, "namespace"),
                Value::from(namespace),
                msg,
            ));
        }
    }
}

pub(super) fn path_segment_errors(name: &str, prefix: bool) -> Vec<String> {
    if !prefix && (name == "." || name == "..") {
        return vec![format!("may not be '{name}'")];
    }
    ["/", "%"]
        .iter()
        .filter(|c| name.contains(*c))
        .map(|c| format!("may not contain '{c}'"))
        .collect()
}

pub(super) fn regex_error(msg: &str, re: &str, examples: &[&str]) -> String {
    let mut s = format!("{msg} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            s.push_str(" or ");
        }
        s.push_str(&format!("'{e}', "));
    }
    s.push_str(&format!("regex used for validation is '{re}')"));
    s
}

pub(crate) fn dns1035_label_errors(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if v.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !re_match(dns1035_re(), v) {
        errs.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            "[a-z]([-a-z0-9]*[a-z0-9])?",
            &["my-name", "abc-123"],
        ));
    }
    errs
}

pub(super) fn dns1123_label_errors(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if v.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !re_match(dns1123_label_re(), v) {
        if re_match(dns1123_subdomain_re(), v) {
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(regex_error(
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
                "[a-z0-9]([-a-z0-9]*[a-z0-9])?",
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}
