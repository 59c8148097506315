//! The `networking.k8s.io` group's Ingress and IngressClass rules (`pkg/apis/networking/validation`): an
//! Ingress's rules (hosts, paths and their types, backends), default backend, TLS hosts and secret names,
//! class name and `kubernetes.io/ingress.class` annotation; an IngressClass's controller and parameters.

use serde_json::Value;

use super::field::{Errors, FieldError, child, index};
use super::{formats, ip, meta};

const INGRESS_CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";
const INVALID_PATH_SEQUENCES: [&str; 5] = ["//", "/./", "/../", "%2f", "%2F"];
const INVALID_PATH_SUFFIXES: [&str; 2] = ["/..", "/."];

fn list(v: &Value) -> &[Value] {
    v.as_array().map_or(&[][..], Vec::as_slice)
}

/// What an update may keep of the stored Ingress even where it is now invalid (`IngressValidationOptions`).
#[derive(Default, Clone, Copy)]
struct Options {
    invalid_secret_name: bool,
    invalid_wildcard_host_rule: bool,
    relaxed_service_name: bool,
}

/// `ValidateIngressCreate`, or on update (`old`: the stored object) `ValidateIngressUpdate`.
pub(super) fn ingress(obj: &Value, old: Option<&Value>) -> Errors {
    let Some(old) = old else {
        let mut errs = meta::object(obj);
        errs.extend(spec(&obj["spec"], "spec", Options::default()));
        if let (Some(annotation), Some(class)) = (
            obj["metadata"]["annotations"][INGRESS_CLASS_ANNOTATION].as_str(),
            obj["spec"]["ingressClassName"].as_str(),
        ) && annotation != class
        {
            errs.push(FieldError::invalid(
                format!("annotations.{INGRESS_CLASS_ANNOTATION}"),
                annotation,
                "must match `ingressClassName` when both are specified",
            ));
        }
        return errs;
    };
    let opts = Options {
        invalid_secret_name: list(&old["spec"]["tls"])
            .iter()
            .any(|tls| !tls_secret_name(tls["secretName"].as_str().unwrap_or("")).is_empty()),
        invalid_wildcard_host_rule: list(&old["spec"]["rules"]).iter().any(|rule| {
            rule["host"].as_str().is_some_and(|h| h.contains('*'))
                && !rule_value(rule, "", Options::default()).is_empty()
        }),
        relaxed_service_name: relaxed_service_names(&old["spec"]),
    };
    let mut errs = meta::object_update(obj);
    errs.extend(meta::object(obj));
    errs.extend(spec(&obj["spec"], "spec", opts));
    errs
}

/// `allowRelaxedServiceNameValidation` of the stored spec: a backend Service name that is an RFC 1123
/// label but no DNS-1035 label (the `RelaxedServiceNameValidation` gate is off in 1.35).
fn relaxed_service_names(spec: &Value) -> bool {
    let relaxed = |name: &Value| {
        name.as_str().is_some_and(|n| {
            formats::dns1123_label(n).is_empty() && !formats::dns1035_label(n).is_empty()
        })
    };
    if relaxed(&spec["defaultBackend"]["service"]["name"]) {
        return true;
    }
    list(&spec["rules"]).iter().any(|rule| {
        list(&rule["http"]["paths"])
            .iter()
            .any(|p| relaxed(&p["backend"]["service"]["name"]))
    })
}

/// `validateTLSSecretName`: a Secret's name, when set.
fn tls_secret_name(name: &str) -> Vec<String> {
    if name.is_empty() {
        Vec::new()
    } else {
        formats::dns1123_subdomain(name)
    }
}

/// `ValidateIngressSpec`.
fn spec(spec: &Value, path: &str, opts: Options) -> Errors {
    let mut errs = Errors::new();
    let rules = list(&spec["rules"]);
    let default_backend = &spec["defaultBackend"];
    if rules.is_empty() && default_backend.is_null() {
        // Go prints the (internal) rules slice as JSON: `null` when absent.
        let printed = match &spec["rules"] {
            Value::Array(_) => "[]".to_string(),
            _ => "null".to_string(),
        };
        errs.push(FieldError::invalid_printed(
            path,
            printed,
            "either `defaultBackend` or `rules` must be specified",
        ));
    }
    if !default_backend.is_null() {
        errs.extend(backend(
            default_backend,
            &child(path, "defaultBackend"),
            opts,
        ));
    }
    for (i, rule) in rules.iter().enumerate() {
        let at = index(&child(path, "rules"), i);
        let host = rule["host"].as_str().unwrap_or("");
        let mut wildcard = false;
        if !host.is_empty() {
            let host_path = child(&at, "host");
            if ip::parse_sloppy(host).is_some() {
                errs.push(FieldError::invalid(
                    &host_path,
                    host,
                    "must be a DNS name, not an IP address",
                ));
            }
            let msgs = if host.contains('*') {
                wildcard = true;
                formats::wildcard_dns1123_subdomain(host)
            } else {
                formats::dns1123_subdomain(host)
            };
            for msg in msgs {
                errs.push(FieldError::invalid(&host_path, host, msg));
            }
        }
        if !wildcard || !opts.invalid_wildcard_host_rule {
            errs.extend(rule_value(rule, &at, opts));
        }
    }
    for (i, tls) in list(&spec["tls"]).iter().enumerate() {
        let at = index(&child(path, "tls"), i);
        for (j, host) in list(&tls["hosts"]).iter().enumerate() {
            let host = host.as_str().unwrap_or("");
            let msgs = if host.contains('*') {
                formats::wildcard_dns1123_subdomain(host)
            } else {
                formats::dns1123_subdomain(host)
            };
            for msg in msgs {
                errs.push(FieldError::invalid(
                    index(&child(&at, "hosts"), j),
                    host,
                    msg,
                ));
            }
        }
        if !opts.invalid_secret_name {
            let name = tls["secretName"].as_str().unwrap_or("");
            for msg in tls_secret_name(name) {
                errs.push(FieldError::invalid(child(&at, "secretName"), name, msg));
            }
        }
    }
    if let Some(class) = spec["ingressClassName"].as_str() {
        for msg in formats::dns1123_subdomain(class) {
            errs.push(FieldError::invalid(
                child(path, "ingressClassName"),
                class,
                msg,
            ));
        }
    }
    errs
}

/// `validateIngressRuleValue` and `validateHTTPIngressRuleValue`.
fn rule_value(rule: &Value, path: &str, opts: Options) -> Errors {
    let mut errs = Errors::new();
    let http = &rule["http"];
    if http.is_null() {
        return errs;
    }
    let at = child(path, "http");
    let paths = list(&http["paths"]);
    if paths.is_empty() {
        errs.push(FieldError::required(child(&at, "paths"), ""));
    }
    for (i, p) in paths.iter().enumerate() {
        errs.extend(http_path(p, &index(&child(&at, "paths"), i), opts));
    }
    errs
}

/// `validateHTTPIngressPath`.
fn http_path(p: &Value, path: &str, opts: Options) -> Errors {
    let mut errs = Errors::new();
    // The typed round trip writes an absent `pathType` as "" (k8s-openapi's field is a plain string), so ""
    // is taken as absent.
    let Some(path_type) = p["pathType"].as_str().filter(|t| !t.is_empty()) else {
        errs.push(FieldError::required(
            child(path, "pathType"),
            "pathType must be specified",
        ));
        return errs;
    };
    let value = p["path"].as_str().unwrap_or("");
    let at = child(path, "path");
    match path_type {
        "Exact" | "Prefix" => {
            if !value.starts_with('/') {
                errs.push(FieldError::invalid(&at, value, "must be an absolute path"));
            }
            if !value.is_empty() {
                for seq in INVALID_PATH_SEQUENCES {
                    if value.contains(seq) {
                        errs.push(FieldError::invalid(
                            &at,
                            value,
                            format!("must not contain '{seq}'"),
                        ));
                    }
                }
                for suffix in INVALID_PATH_SUFFIXES {
                    if value.ends_with(suffix) {
                        errs.push(FieldError::invalid(
                            &at,
                            value,
                            format!("cannot end with '{suffix}'"),
                        ));
                    }
                }
            }
        }
        "ImplementationSpecific" => {
            if !value.is_empty() && !value.starts_with('/') {
                errs.push(FieldError::invalid(&at, value, "must be an absolute path"));
            }
        }
        other => errs.push(FieldError::not_supported(
            child(path, "pathType"),
            other,
            &["Exact", "ImplementationSpecific", "Prefix"],
        )),
    }
    errs.extend(backend(&p["backend"], &child(path, "backend"), opts));
    errs
}

/// `validateIngressBackend`: a Service (name, and a port name or number) or a resource, not both.
fn backend(b: &Value, path: &str, opts: Options) -> Errors {
    let mut errs = Errors::new();
    let resource = &b["resource"];
    let service = &b["service"];
    match (resource.is_null(), service.is_null()) {
        (false, false) => errs.push(FieldError::invalid(
            path,
            "",
            "cannot set both resource and service backends",
        )),
        (false, true) => errs.extend(typed_local_object_reference(
            resource,
            &child(path, "resource"),
        )),
        (true, false) => {
            let name = service["name"].as_str().unwrap_or("");
            let name_path = child(&child(path, "service"), "name");
            if name.is_empty() {
                errs.push(FieldError::required(&name_path, ""));
            } else {
                let msgs = if opts.relaxed_service_name {
                    formats::dns1123_label(name)
                } else {
                    formats::dns1035_label(name)
                };
                for msg in msgs {
                    errs.push(FieldError::invalid(&name_path, name, msg));
                }
            }
            let port = &service["port"];
            let port_path = child(&child(path, "service"), "port");
            let port_name = port["name"].as_str().unwrap_or("");
            let number = port["number"].as_i64().unwrap_or(0);
            match (port_name.is_empty(), number == 0) {
                (false, false) => errs.push(FieldError::invalid(
                    path,
                    "",
                    "cannot set both port name & port number",
                )),
                (false, true) => {
                    for msg in formats::port_name(port_name) {
                        errs.push(FieldError::invalid(
                            child(&port_path, "name"),
                            port_name,
                            msg,
                        ));
                    }
                }
                (true, false) => {
                    if !(1..=65535).contains(&number) {
                        errs.push(FieldError::invalid_printed(
                            child(&port_path, "number"),
                            number.to_string(),
                            "must be between 1 and 65535, inclusive",
                        ));
                    }
                }
                (true, true) => errs.push(FieldError::required(
                    path,
                    "port name or number is required",
                )),
            }
        }
        (true, true) => errs.push(FieldError::invalid(
            path,
            "",
            "resource or service backend is required",
        )),
    }
    errs
}

/// `validateIngressTypedLocalObjectReference`: an optional API group, a kind and a name.
fn typed_local_object_reference(r: &Value, path: &str) -> Errors {
    let mut errs = Errors::new();
    if let Some(group) = r["apiGroup"].as_str() {
        for msg in formats::dns1123_subdomain(group) {
            errs.push(FieldError::invalid(child(path, "apiGroup"), group, msg));
        }
    }
    for field in ["kind", "name"] {
        let value = r[field].as_str().unwrap_or("");
        if value.is_empty() {
            errs.push(FieldError::required(child(path, field), ""));
        } else {
            for msg in formats::path_segment(value) {
                errs.push(FieldError::invalid(child(path, field), value, msg));
            }
        }
    }
    errs
}

/// `ValidateIngressClass`, or on update (`old`: the stored object) `ValidateIngressClassUpdate` (the
/// controller is immutable).
pub(super) fn ingress_class(obj: &Value, old: Option<&Value>) -> Errors {
    let mut errs = Errors::new();
    if let Some(old) = old {
        errs.extend(meta::object_update(obj));
        let (new_c, old_c) = (&obj["spec"]["controller"], &old["spec"]["controller"]);
        if new_c.as_str().unwrap_or("") != old_c.as_str().unwrap_or("") {
            errs.push(FieldError::invalid(
                "spec.controller",
                new_c.as_str().unwrap_or(""),
                "field is immutable",
            ));
        }
    }
    errs.extend(meta::object(obj));
    let spec = &obj["spec"];
    let controller = spec["controller"].as_str().unwrap_or("");
    if controller.len() > 250 {
        errs.push(FieldError::too_long("spec.controller", 250));
    }
    errs.extend(domain_prefixed_path("spec.controller", controller));
    let params = &spec["parameters"];
    if !params.is_null() {
        let at = "spec.parameters";
        errs.extend(typed_local_object_reference(params, at));
        match params["scope"].as_str() {
            None => errs.push(FieldError::required(child(at, "scope"), "")),
            Some(scope @ ("Namespace" | "Cluster")) => {
                let namespace = params["namespace"].as_str();
                match (scope, namespace) {
                    ("Namespace", None) => errs.push(FieldError::required(
                        child(at, "namespace"),
                        "`parameters.scope` is set to 'Namespace'",
                    )),
                    ("Namespace", Some(ns)) => {
                        for msg in formats::dns1123_label(ns) {
                            errs.push(FieldError::invalid(child(at, "namespace"), ns, msg));
                        }
                    }
                    ("Cluster", Some(_)) => errs.push(FieldError::forbidden(
                        child(at, "namespace"),
                        "`parameters.scope` is set to 'Cluster'",
                    )),
                    _ => {}
                }
            }
            Some(other) => errs.push(FieldError::not_supported(
                child(at, "scope"),
                other,
                &["Cluster", "Namespace"],
            )),
        }
    }
    errs
}

/// `IsDomainPrefixedPath`: a DNS subdomain, `/`, then a non-empty path of URL path characters.
fn domain_prefixed_path(path: &str, value: &str) -> Errors {
    let mut errs = Errors::new();
    if value.is_empty() {
        errs.push(FieldError::required(path, ""));
        return errs;
    }
    let (host, rest) = match value.split_once('/') {
        Some((host, rest)) if !host.is_empty() && !rest.is_empty() => (host, rest),
        _ => {
            errs.push(FieldError::invalid(
                path,
                value,
                "must be a domain-prefixed path (such as \"acme.io/foo\")",
            ));
            return errs;
        }
    };
    for msg in formats::dns1123_subdomain(host) {
        errs.push(FieldError::invalid(path, host, msg));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c);
    if !rest.chars().all(allowed) {
        errs.push(FieldError::invalid(
            path,
            rest,
            r"Invalid path (regex used for validation is '[A-Za-z0-9/\-._~%!$&'()*+,;=:]+')",
        ));
    }
    errs
}
