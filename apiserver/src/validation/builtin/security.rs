//! The core group's security context rules: a pod's (`validatePodSpecSecurityContext`) and a container's
//! (`ValidateSecurityContext`): user and group IDs, sysctls, the fsGroup change policy, seccomp and AppArmor
//! profiles, Windows options (the GMSA credential spec name and the user name's simpler rules), the
//! supplemental groups and SELinux change policies, `procMount` and the privilege escalation combinations.

use serde_json::Value;

use super::field::{Errors, FieldError, child, go_json, index};
use super::formats;

/// `InclusiveRangeError(0, math.MaxInt32)`, the message of `IsValidUserID` and `IsValidGroupID`.
const ID_RANGE: &str = "must be between 0 and 2147483647, inclusive";
const SYSCTL_MAX_LENGTH: usize = 253;
const SYSCTL_REGEX: &str =
    r"^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$";

fn id(v: &Value, path: &str, errs: &mut Errors) {
    if let Some(n) = v.as_i64()
        && !(0..=i64::from(i32::MAX)).contains(&n)
    {
        errs.push(FieldError::invalid_printed(path, n.to_string(), ID_RANGE));
    }
}

/// `validatePodSpecSecurityContext` of `spec` (the pod spec) at `path` (its `securityContext`). Go reads
/// `hostNetwork`, `hostPID`, `hostIPC` and `shareProcessNamespace` from its internal security context, so
/// their errors are named under `path`.
pub(super) fn pod(spec: &Value, path: &str) -> Errors {
    let mut errs = Errors::new();
    let sc = &spec["securityContext"];
    id(&sc["fsGroup"], &child(path, "fsGroup"), &mut errs);
    id(&sc["runAsUser"], &child(path, "runAsUser"), &mut errs);
    id(&sc["runAsGroup"], &child(path, "runAsGroup"), &mut errs);
    if let Some(groups) = sc["supplementalGroups"].as_array() {
        for (i, g) in groups.iter().enumerate() {
            id(g, &index(&child(path, "supplementalGroups"), i), &mut errs);
        }
    }
    if spec["shareProcessNamespace"] == true && spec["hostPID"] == true {
        errs.push(FieldError::invalid_printed(
            child(path, "shareProcessNamespace"),
            "true".into(),
            "ShareProcessNamespace and HostPID cannot both be enabled",
        ));
    }
    if let Some(sysctls) = sc["sysctls"].as_array() {
        errs.extend(self::sysctls(spec, sysctls, &child(path, "sysctls")));
    }
    if let Some(p) = sc["fsGroupChangePolicy"].as_str()
        && !matches!(p, "Always" | "OnRootMismatch")
    {
        errs.push(FieldError::not_supported(
            child(path, "fsGroupChangePolicy"),
            p,
            &["Always", "OnRootMismatch"],
        ));
    }
    errs.extend(seccomp(
        &sc["seccompProfile"],
        &child(path, "seccompProfile"),
    ));
    errs.extend(windows(
        &sc["windowsOptions"],
        &child(path, "windowsOptions"),
    ));
    errs.extend(app_armor(
        &sc["appArmorProfile"],
        &child(path, "appArmorProfile"),
    ));
    if let Some(p) = sc["supplementalGroupsPolicy"].as_str()
        && !matches!(p, "Merge" | "Strict")
    {
        errs.push(FieldError::not_supported(
            child(path, "supplementalGroupsPolicy"),
            p,
            &["Merge", "Strict"],
        ));
    }
    // `MountOption` needs the `SELinuxMount` gate, off in 1.35: only `Recursive` is accepted.
    if let Some(p) = sc["seLinuxChangePolicy"].as_str()
        && p != "Recursive"
    {
        errs.push(FieldError::not_supported(
            child(path, "seLinuxChangePolicy"),
            p,
            &["Recursive"],
        ));
    }
    errs
}

/// `utilsysctl.GetNamespace` after `NormalizeName`: `net` for the network namespace's sysctls, `ipc` for
/// the IPC namespace's, `None` for the others.
fn sysctl_namespace(name: &str) -> Option<&'static str> {
    // A name whose first separator is `/` uses `/` between segments and `.` inside them.
    let normalized: String = match name.find(['.', '/']) {
        Some(i) if name.as_bytes()[i] == b'/' => name
            .chars()
            .map(|c| match c {
                '/' => '.',
                '.' => '/',
                c => c,
            })
            .collect(),
        _ => name.to_string(),
    };
    const IPC: [&str; 8] = [
        "kernel.sem",
        "kernel.shmall",
        "kernel.shmmax",
        "kernel.shmmni",
        "kernel.shm_rmid_forced",
        "kernel.msgmax",
        "kernel.msgmnb",
        "kernel.msgmni",
    ];
    if IPC.contains(&normalized.as_str()) || normalized.starts_with("fs.mqueue.") {
        Some("ipc")
    } else if normalized.starts_with("net.") {
        Some("net")
    } else {
        None
    }
}

fn sysctl_name_ok(name: &str) -> bool {
    if name.len() > SYSCTL_MAX_LENGTH {
        return false;
    }
    let segment_ok = |s: &str| {
        let b = s.as_bytes();
        match (b.first(), b.last()) {
            (Some(f), Some(l)) => {
                let alnum = |c: u8| c.is_ascii_lowercase() || c.is_ascii_digit();
                alnum(*f) && alnum(*l) && b.iter().all(|&c| alnum(c) || c == b'-' || c == b'_')
            }
            _ => false,
        }
    };
    name.split(['.', '/']).all(segment_ok)
}

/// `validateSysctls` (new pods: no namespaced sysctl beside host networking or IPC).
fn sysctls(spec: &Value, sysctls: &[Value], path: &str) -> Errors {
    let mut errs = Errors::new();
    let mut names: Vec<&str> = Vec::new();
    for (i, s) in sysctls.iter().enumerate() {
        let name = s["name"].as_str().unwrap_or("");
        let name_path = child(&index(path, i), "name");
        if name.is_empty() {
            errs.push(FieldError::required(&name_path, ""));
        } else if !sysctl_name_ok(name) {
            errs.push(FieldError::invalid(
                &name_path,
                name,
                format!("must have at most {SYSCTL_MAX_LENGTH} characters and match regex {SYSCTL_REGEX}"),
            ));
        } else if names.contains(&name) {
            errs.push(FieldError::duplicate(&name_path, name));
        }
        match sysctl_namespace(name) {
            Some("net") if spec["hostNetwork"] == true => errs.push(FieldError::invalid(
                &name_path,
                name,
                "may not be specified when 'hostNetwork' is true",
            )),
            Some("ipc") if spec["hostIPC"] == true => errs.push(FieldError::invalid(
                &name_path,
                name,
                "may not be specified when 'hostIPC' is true",
            )),
            _ => {}
        }
        names.push(name);
    }
    errs
}

/// `validateSeccompProfileField`.
fn seccomp(profile: &Value, path: &str) -> Errors {
    let mut errs = Errors::new();
    if profile.is_null() {
        return errs;
    }
    let kind = profile["type"].as_str().unwrap_or("");
    let type_path = child(path, "type");
    match kind {
        "Localhost" | "RuntimeDefault" | "Unconfined" => {}
        "" => errs.push(FieldError::required(
            type_path,
            "type is required when seccompProfile is set",
        )),
        other => errs.push(FieldError::not_supported(
            type_path,
            other,
            &["Localhost", "RuntimeDefault", "Unconfined"],
        )),
    }
    let local_path = child(path, "localhostProfile");
    if kind == "Localhost" {
        match profile["localhostProfile"].as_str() {
            None => errs.push(FieldError::required(
                local_path,
                "must be set when seccomp type is Localhost",
            )),
            Some(p) => errs.extend(super::container::local_descending_path(p, &local_path)),
        }
    } else if !profile["localhostProfile"].is_null() {
        // The value is the internal `SeccompProfile`, marshalled with Go's field names.
        let printed = go_struct(&[
            ("Type", go_json(&profile["type"])),
            ("LocalhostProfile", go_json(&profile["localhostProfile"])),
        ]);
        errs.push(FieldError::invalid_printed(
            local_path,
            printed,
            "can only be set when seccomp type is Localhost",
        ));
    }
    errs
}

/// Go's `json.Marshal` of a struct: its fields (already marshalled) in their declared order.
fn go_struct(fields: &[(&str, String)]) -> String {
    let fields: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("{}:{v}", go_json(&Value::String((*k).to_string()))))
        .collect();
    format!("{{{}}}", fields.join(","))
}

/// `ValidateAppArmorProfileField`.
fn app_armor(profile: &Value, path: &str) -> Errors {
    let mut errs = Errors::new();
    if profile.is_null() {
        return errs;
    }
    let local_path = child(path, "localhostProfile");
    let required = "must be set when AppArmor type is Localhost";
    match profile["type"].as_str().unwrap_or("") {
        "Localhost" => match profile["localhostProfile"].as_str() {
            None => errs.push(FieldError::required(&local_path, required)),
            Some(p) => {
                if p.trim() != p {
                    errs.push(FieldError::invalid(
                        &local_path,
                        p,
                        "must not be padded with whitespace",
                    ));
                } else if p.is_empty() {
                    errs.push(FieldError::required(&local_path, required));
                }
                if p.len() > 4095 {
                    errs.push(FieldError::too_long(&local_path, 4095));
                }
            }
        },
        "RuntimeDefault" | "Unconfined" => {
            if !profile["localhostProfile"].is_null() {
                errs.push(FieldError::invalid_value(
                    &local_path,
                    &profile["localhostProfile"],
                    "can only be set when AppArmor type is Localhost",
                ));
            }
        }
        "" => errs.push(FieldError::required(
            child(path, "type"),
            "type is required when appArmorProfile is set",
        )),
        other => errs.push(FieldError::not_supported(
            child(path, "type"),
            other,
            &["Localhost", "RuntimeDefault", "Unconfined"],
        )),
    }
    errs
}

/// `validateWindowsSecurityContextOptions`, less the user name's domain and character rules.
fn windows(options: &Value, path: &str) -> Errors {
    let mut errs = Errors::new();
    if options.is_null() {
        return errs;
    }
    if let Some(name) = options["gmsaCredentialSpecName"].as_str() {
        for msg in formats::dns1123_subdomain(name) {
            errs.push(FieldError::invalid(
                child(path, "gmsaCredentialSpecName"),
                name,
                msg,
            ));
        }
    }
    if options["gmsaCredentialSpec"] == "" {
        errs.push(FieldError::invalid(
            child(path, "gmsaCredentialSpec"),
            "",
            "gmsaCredentialSpec cannot be an empty string",
        ));
    }
    if let Some(user) = options["runAsUserName"].as_str() {
        let at = child(path, "runAsUserName");
        if user.is_empty() {
            errs.push(FieldError::invalid(
                &at,
                user,
                "runAsUserName cannot be an empty string",
            ));
        } else if user.chars().any(char::is_control) {
            errs.push(FieldError::invalid(
                &at,
                user,
                "runAsUserName cannot contain control characters",
            ));
        } else if user.split('\\').count() > 2 {
            errs.push(FieldError::invalid(
                &at,
                user,
                "runAsUserName cannot contain more than one backslash",
            ));
        }
    }
    errs
}

/// `ValidateSecurityContext` of a container (`host_users`: the pod's `hostUsers`, true unless false).
pub(super) fn container(sc: &Value, path: &str, host_users: bool) -> Errors {
    let mut errs = Errors::new();
    if sc.is_null() {
        return errs;
    }
    // kube-apiserver runs with `--allow-privileged=true` (the envtest control plane's flag): no check.
    id(&sc["runAsUser"], &child(path, "runAsUser"), &mut errs);
    id(&sc["runAsGroup"], &child(path, "runAsGroup"), &mut errs);
    if let Some(p) = sc["procMount"].as_str() {
        let at = child(path, "procMount");
        if !matches!(p, "Default" | "Unmasked") {
            errs.push(FieldError::not_supported(&at, p, &["Default", "Unmasked"]));
        }
        if host_users && p == "Unmasked" {
            errs.push(FieldError::invalid(
                &at,
                p,
                "`hostUsers` must be false to use `Unmasked`",
            ));
        }
    }
    errs.extend(seccomp(
        &sc["seccompProfile"],
        &child(path, "seccompProfile"),
    ));
    if sc["allowPrivilegeEscalation"] == false {
        if sc["privileged"] == true {
            errs.push(FieldError::invalid_printed(
                path,
                internal_security_context(sc),
                "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
            ));
        }
        if let Some(add) = sc["capabilities"]["add"].as_array() {
            for cap in add {
                if cap == "CAP_SYS_ADMIN" {
                    errs.push(FieldError::invalid_printed(
                        path,
                        internal_security_context(sc),
                        "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
                    ));
                }
            }
        }
    }
    errs.extend(windows(
        &sc["windowsOptions"],
        &child(path, "windowsOptions"),
    ));
    errs.extend(app_armor(
        &sc["appArmorProfile"],
        &child(path, "appArmorProfile"),
    ));
    errs
}

/// The internal `core.SecurityContext` as Go marshals it: its Go field names in order, nil pointers as
/// `null` (nested structs but the capabilities as their JSON).
fn internal_security_context(sc: &Value) -> String {
    let caps = if sc["capabilities"].is_null() {
        "null".to_string()
    } else {
        go_struct(&[
            ("Add", go_json(&sc["capabilities"]["add"])),
            ("Drop", go_json(&sc["capabilities"]["drop"])),
        ])
    };
    let mut fields = vec![("Capabilities", caps)];
    for (go, json) in [
        ("Privileged", "privileged"),
        ("SELinuxOptions", "seLinuxOptions"),
        ("WindowsOptions", "windowsOptions"),
        ("RunAsUser", "runAsUser"),
        ("RunAsGroup", "runAsGroup"),
        ("RunAsNonRoot", "runAsNonRoot"),
        ("ReadOnlyRootFilesystem", "readOnlyRootFilesystem"),
        ("AllowPrivilegeEscalation", "allowPrivilegeEscalation"),
        ("ProcMount", "procMount"),
        ("SeccompProfile", "seccompProfile"),
        ("AppArmorProfile", "appArmorProfile"),
    ] {
        fields.push((go, go_json(&sc[json])));
    }
    go_struct(&fields)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sysctl_names_and_namespaces() {
        assert!(sysctl_name_ok("net.ipv4.ip_forward"));
        assert!(sysctl_name_ok("net/ipv4/conf/eth0.100/forwarding"));
        assert!(!sysctl_name_ok("Net.x"));
        assert!(!sysctl_name_ok("a..b"));
        assert_eq!(sysctl_namespace("net/ipv4/ip_forward"), Some("net"));
        assert_eq!(sysctl_namespace("kernel.shmmax"), Some("ipc"));
        assert_eq!(sysctl_namespace("vm.swappiness"), None);
    }

    #[test]
    fn internal_values_use_go_field_names() {
        let s = internal_security_context(
            &json!({"privileged": true, "allowPrivilegeEscalation": false, "capabilities": {"add": ["X"]}}),
        );
        assert!(
            s.starts_with("{\"Capabilities\":{\"Add\":[\"X\"],\"Drop\":null},\"Privileged\":true,")
        );
    }
}
