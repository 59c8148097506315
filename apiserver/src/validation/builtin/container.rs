//! The parts of a container `ValidatePodSpec` checks beyond its name, image and resources
//! (`pkg/apis/core/validation`): ports (`validateContainerPorts`), environment variables (`ValidateEnv`),
//! volume mounts (`ValidateVolumeMounts`) and probes (`validateProbe` and its liveness, readiness and startup
//! forms). Fields kube-apiserver defaults before validating (a port's protocol, a probe's periods and
//! thresholds, an HTTP probe's path and scheme) are checked only where they are set.

use serde_json::Value;

use super::field::{Errors, FieldError, child, index};
use super::formats;

const PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];
const PORT_RANGE: &str = "must be between 1 and 65535, inclusive";

fn list(v: &Value) -> &[Value] {
    v.as_array().map_or(&[][..], Vec::as_slice)
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

/// `validateContainerPorts`.
pub(super) fn ports(ports: &Value, path: &str) -> Errors {
    let mut errs = Errors::new();
    let mut names: Vec<&str> = Vec::new();
    for (i, port) in list(ports).iter().enumerate() {
        let at = index(path, i);
        let name = text(&port["name"]);
        if !name.is_empty() {
            let msgs = formats::port_name(name);
            if !msgs.is_empty() {
                for msg in msgs {
                    errs.push(FieldError::invalid(child(&at, "name"), name, msg));
                }
            } else if names.contains(&name) {
                errs.push(FieldError::duplicate(child(&at, "name"), name));
            } else {
                names.push(name);
            }
        }
        match port["containerPort"].as_i64().unwrap_or(0) {
            0 => errs.push(FieldError::required(child(&at, "containerPort"), "")),
            n if !(1..=65535).contains(&n) => errs.push(FieldError::invalid_value(
                child(&at, "containerPort"),
                &port["containerPort"],
                PORT_RANGE,
            )),
            _ => {}
        }
        let host = port["hostPort"].as_i64().unwrap_or(0);
        if host != 0 && !(1..=65535).contains(&host) {
            errs.push(FieldError::invalid_value(
                child(&at, "hostPort"),
                &port["hostPort"],
                PORT_RANGE,
            ));
        }
        let protocol = text(&port["protocol"]);
        if !protocol.is_empty() && !PROTOCOLS.contains(&protocol) {
            errs.push(FieldError::not_supported(
                child(&at, "protocol"),
                protocol,
                PROTOCOLS,
            ));
        }
    }
    errs
}

/// `IsRelaxedEnvVarName` (the relaxed rule is locked on since 1.34).
fn env_name(name: &str) -> Vec<String> {
    if name
        .chars()
        .any(|c| !c.is_ascii() || c.is_ascii_control() || c == '=')
    {
        vec!["a valid environment variable name must consist only of printable ASCII characters other than '='".into()]
    } else {
        Vec::new()
    }
}

/// `ValidateEnv`: each variable's name, and a `valueFrom` naming exactly one source, with `value` empty.
pub(super) fn env(vars: &Value, path: &str) -> Errors {
    let mut errs = Errors::new();
    for (i, var) in list(vars).iter().enumerate() {
        let at = index(path, i);
        let name = text(&var["name"]);
        if name.is_empty() {
            errs.push(FieldError::required(child(&at, "name"), ""));
        } else {
            for msg in env_name(name) {
                errs.push(FieldError::invalid(child(&at, "name"), name, msg));
            }
        }
        errs.extend(value_from(var, &child(&at, "valueFrom")));
    }
    errs
}

/// `validateEnvVarValueFrom`: the key selectors' names and keys, and the number of sources.
fn value_from(var: &Value, path: &str) -> Errors {
    let mut errs = Errors::new();
    let Some(from) = var.get("valueFrom").filter(|v| v.is_object()) else {
        return errs;
    };
    let mut sources = 0;
    for source in [
        "fieldRef",
        "resourceFieldRef",
        "configMapKeyRef",
        "secretKeyRef",
        "fileKeyRef",
    ] {
        let Some(sel) = from.get(source).filter(|v| v.is_object()) else {
            continue;
        };
        sources += 1;
        let at = child(path, source);
        match source {
            "fieldRef" if text(&sel["fieldPath"]).is_empty() => {
                errs.push(FieldError::required(child(&at, "fieldPath"), ""));
            }
            "resourceFieldRef" if text(&sel["resource"]).is_empty() => {
                errs.push(FieldError::required(child(&at, "resource"), ""));
            }
            "configMapKeyRef" | "secretKeyRef" => errs.extend(key_selector(sel, &at)),
            _ => {}
        }
    }
    if sources == 0 {
        errs.push(FieldError::invalid(
            path,
            "",
            "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`",
        ));
    } else if !text(&var["value"]).is_empty() {
        errs.push(FieldError::invalid(
            path,
            "",
            "may not be specified when `value` is not empty",
        ));
    } else if sources > 1 {
        errs.push(FieldError::invalid(
            path,
            "",
            "may not have more than one field specified at a time",
        ));
    }
    errs
}

/// `validateConfigMapKeySelector` and `validateSecretKeySelector`: a DNS subdomain name and a config key.
fn key_selector(sel: &Value, path: &str) -> Errors {
    let mut errs = Errors::new();
    let name = text(&sel["name"]);
    for msg in formats::dns1123_subdomain(name) {
        errs.push(FieldError::invalid(child(path, "name"), name, msg));
    }
    let key = text(&sel["key"]);
    if key.is_empty() {
        errs.push(FieldError::required(child(path, "key"), ""));
    } else {
        for msg in formats::config_key(key) {
            errs.push(FieldError::invalid(child(path, "key"), key, msg));
        }
    }
    errs
}

/// `validateLocalDescendingPath`: relative, without `..` elements.
pub(super) fn local_descending_path(target: &str, path: &str) -> Errors {
    let mut errs = Errors::new();
    if target.starts_with('/') {
        errs.push(FieldError::invalid(path, target, "must be a relative path"));
    }
    if target.split('/').any(|part| part == "..") {
        errs.push(FieldError::invalid(path, target, "must not contain '..'"));
    }
    errs
}

/// `ValidateVolumeMounts`: each mount names a valid volume of the pod (`volumes`, the names of the volumes
/// without errors) and has a mount path no other mount of the container has.
pub(super) fn volume_mounts(mounts: &Value, volumes: &[String], path: &str) -> Errors {
    let mut errs = Errors::new();
    let mut mount_paths: Vec<&str> = Vec::new();
    for (i, mount) in list(mounts).iter().enumerate() {
        let at = index(path, i);
        let name = text(&mount["name"]);
        if name.is_empty() {
            errs.push(FieldError::required(child(&at, "name"), ""));
        }
        if !volumes.iter().any(|v| v == name) {
            errs.push(FieldError::not_found(child(&at, "name"), name));
        }
        let mount_path = text(&mount["mountPath"]);
        if mount_path.is_empty() {
            errs.push(FieldError::required(child(&at, "mountPath"), ""));
        }
        if mount_paths.contains(&mount_path) {
            errs.push(FieldError::invalid(
                child(&at, "mountPath"),
                mount_path,
                "must be unique",
            ));
        }
        mount_paths.push(mount_path);
        // kube-apiserver names these two paths after the list, not the item.
        let sub_path = text(&mount["subPath"]);
        if !sub_path.is_empty() {
            errs.extend(local_descending_path(sub_path, &child(path, "subPath")));
        }
        let expr = text(&mount["subPathExpr"]);
        if !expr.is_empty() {
            if !sub_path.is_empty() {
                errs.push(FieldError::invalid(
                    child(&at, "subPathExpr"),
                    expr,
                    "subPathExpr and subPath are mutually exclusive",
                ));
            }
            errs.extend(local_descending_path(expr, &child(path, "subPathExpr")));
        }
    }
    errs
}

/// `ValidatePortNumOrName` of a probe's port.
fn port_num_or_name(port: &Value, path: &str) -> Errors {
    let mut errs = Errors::new();
    match port {
        Value::String(name) => {
            for msg in formats::port_name(name) {
                errs.push(FieldError::invalid(path, name, msg));
            }
        }
        other => {
            let n = other.as_i64().unwrap_or(0);
            if !(1..=65535).contains(&n) {
                errs.push(FieldError::invalid_printed(path, n.to_string(), PORT_RANGE));
            }
        }
    }
    errs
}

/// `validateHandler` of a probe: exactly one of `exec`, `httpGet`, `tcpSocket` and `grpc`, each checked.
fn handler(probe: &Value, path: &str) -> Errors {
    let mut errs = Errors::new();
    let mut handlers = 0;
    for kind in ["exec", "httpGet", "tcpSocket", "grpc"] {
        let Some(h) = probe.get(kind).filter(|v| v.is_object()) else {
            continue;
        };
        let at = child(path, kind);
        if handlers > 0 {
            errs.push(FieldError::forbidden(
                at,
                "may not specify more than 1 handler type",
            ));
            continue;
        }
        handlers += 1;
        match kind {
            "exec" => {
                if list(&h["command"]).is_empty() {
                    errs.push(FieldError::required(child(&at, "command"), ""));
                }
            }
            "httpGet" => {
                errs.extend(port_num_or_name(&h["port"], &child(&at, "port")));
                let scheme = text(&h["scheme"]);
                if !scheme.is_empty() && !["HTTP", "HTTPS"].contains(&scheme) {
                    errs.push(FieldError::not_supported(
                        child(&at, "scheme"),
                        scheme,
                        &["HTTP", "HTTPS"],
                    ));
                }
            }
            "tcpSocket" => errs.extend(port_num_or_name(&h["port"], &child(&at, "port"))),
            _ => {
                let port = h["port"].as_i64().unwrap_or(0);
                errs.extend(port_num_or_name(&Value::from(port), &child(&at, "port")));
            }
        }
    }
    if handlers == 0 {
        errs.push(FieldError::required(path, "must specify a handler type"));
    }
    errs
}

/// Which probe of a container: the liveness and startup probes must succeed once, a readiness probe has no
/// grace period of its own.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Probe {
    Liveness,
    Readiness,
    Startup,
}

/// `validateProbe` with the rule of its kind, for a probe that is set.
pub(super) fn probe(probe: &Value, kind: Probe, path: &str) -> Errors {
    let mut errs = Errors::new();
    if !probe.is_object() {
        return errs;
    }
    errs.extend(handler(probe, path));
    for number in [
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ] {
        if probe[number].as_i64().is_some_and(|n| n < 0) {
            errs.push(FieldError::invalid_value(
                child(path, number),
                &probe[number],
                "must be greater than or equal to 0",
            ));
        }
    }
    let grace = &probe["terminationGracePeriodSeconds"];
    if grace.as_i64().is_some_and(|n| n <= 0) {
        errs.push(FieldError::invalid_value(
            child(path, "terminationGracePeriodSeconds"),
            grace,
            "must be greater than 0",
        ));
    }
    // An unset or zero threshold is defaulted to 1 before validation.
    let success = probe["successThreshold"].as_i64().unwrap_or(0);
    match kind {
        Probe::Liveness | Probe::Startup if success != 0 && success != 1 => {
            errs.push(FieldError::invalid_value(
                child(path, "successThreshold"),
                &probe["successThreshold"],
                "must be 1",
            ));
        }
        Probe::Readiness if !grace.is_null() => {
            errs.push(FieldError::invalid_printed(
                child(path, "terminationGracePeriodSeconds"),
                grace.to_string(),
                "must not be set for readinessProbes",
            ));
        }
        _ => {}
    }
    errs
}
