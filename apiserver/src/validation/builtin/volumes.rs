//! A pod's volumes (`ValidateVolumes` and `validateVolumeSource` of `pkg/apis/core/validation`): a unique
//! RFC 1123 label for a name, one volume source at most (none is defaulted to `emptyDir`), and the required fields of the sources operators use
//! most (`hostPath`, `secret`, `configMap`, `persistentVolumeClaim`, with their items); the other sources are
//! counted but their own fields are not checked.

use serde_json::Value;

use super::container::local_descending_path;
use super::field::{Errors, FieldError, child, index};
use super::formats;

/// The volume sources in the order kube-apiserver looks at them, each with the field name its "more than 1
/// volume type" error names (Go's spelling, typo included).
const SOURCES: &[(&str, &str)] = &[
    ("emptyDir", "emptyDir"),
    ("hostPath", "hostPath"),
    ("gitRepo", "gitRepo"),
    ("gcePersistentDisk", "gcePersistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("secret", "secret"),
    ("nfs", "nfs"),
    ("iscsi", "iscsi"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("persistentVolumeClaim", "persistentVolumeClaim"),
    ("rbd", "rbd"),
    ("cinder", "cinder"),
    ("cephfs", "cephFS"),
    ("quobyte", "quobyte"),
    ("downwardAPI", "downwarAPI"),
    ("fc", "fc"),
    ("flexVolume", "flexVolume"),
    ("configMap", "configMap"),
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("storageos", "storageos"),
    ("projected", "projected"),
    ("scaleIO", "scaleIO"),
    ("csi", "csi"),
    ("ephemeral", "ephemeral"),
    ("image", "image"),
];

const FILE_MODE: &str = "must be a number between 0 and 0777 (octal), both inclusive";

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

/// `ValidateVolumes`: the errors, and the names of the volumes that have none (the ones a mount may name).
pub(super) fn volumes(volumes: &Value, path: &str) -> (Vec<String>, Errors) {
    let mut errs = Errors::new();
    let mut names: Vec<String> = Vec::new();
    for (i, vol) in volumes
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .enumerate()
    {
        let at = index(path, i);
        let name_path = child(&at, "name");
        let name = text(&vol["name"]);
        let mut el = source(vol, &at);
        if name.is_empty() {
            el.push(FieldError::required(&name_path, ""));
        } else {
            for msg in formats::dns1123_label(name) {
                el.push(FieldError::invalid(&name_path, name, msg));
            }
        }
        if names.iter().any(|n| n == name) {
            el.push(FieldError::duplicate(&name_path, name));
        }
        if el.is_empty() {
            names.push(name.to_string());
        } else {
            errs.extend(el);
        }
    }
    (names, errs)
}

/// `validateVolumeSource`: at most one source, the first one checked.
fn source(vol: &Value, path: &str) -> Errors {
    let mut errs = Errors::new();
    let mut count = 0;
    for (key, forbidden_name) in SOURCES {
        let Some(src) = vol.get(*key).filter(|v| v.is_object()) else {
            continue;
        };
        if count > 0 {
            errs.push(FieldError::forbidden(
                child(path, forbidden_name),
                "may not specify more than 1 volume type",
            ));
            continue;
        }
        count += 1;
        let at = child(path, key);
        match *key {
            "hostPath" => {
                let host = text(&src["path"]);
                if host.is_empty() {
                    errs.push(FieldError::required(child(&at, "path"), ""));
                } else if host.split('/').any(|p| p == "..") {
                    errs.push(FieldError::invalid(
                        child(&at, "path"),
                        host,
                        "must not contain '..'",
                    ));
                }
            }
            "secret" => errs.extend(projection(src, "secretName", &at)),
            "configMap" => errs.extend(projection(src, "name", &at)),
            "persistentVolumeClaim" if text(&src["claimName"]).is_empty() => {
                errs.push(FieldError::required(child(&at, "claimName"), ""));
            }
            _ => {}
        }
    }
    // A volume without a source is never seen without one: kube-apiserver defaults it to an `emptyDir`.
    errs
}

fn bad_mode(mode: &Value) -> bool {
    mode.as_i64().is_some_and(|m| !(0..=0o777).contains(&m))
}

/// `validateSecretVolumeSource` and `validateConfigMapVolumeSource`: the name, the default mode, the items.
fn projection(src: &Value, name_field: &str, path: &str) -> Errors {
    let mut errs = Errors::new();
    if text(&src[name_field]).is_empty() {
        errs.push(FieldError::required(child(path, name_field), ""));
    }
    if bad_mode(&src["defaultMode"]) {
        errs.push(FieldError::invalid_value(
            child(path, "defaultMode"),
            &src["defaultMode"],
            FILE_MODE,
        ));
    }
    let items_path = child(path, "items");
    for (i, item) in src["items"]
        .as_array()
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .enumerate()
    {
        let at = index(&items_path, i);
        if text(&item["key"]).is_empty() {
            errs.push(FieldError::required(child(&at, "key"), ""));
        }
        let target = text(&item["path"]);
        let target_path = child(&at, "path");
        if target.is_empty() {
            errs.push(FieldError::required(&target_path, ""));
        }
        // `ValidateLocalNonReservedPath`.
        errs.extend(local_descending_path(target, &target_path));
        if target.starts_with("..") && !target.starts_with("../") {
            errs.push(FieldError::invalid(
                &target_path,
                target,
                "must not start with '..'",
            ));
        }
        if bad_mode(&item["mode"]) {
            errs.push(FieldError::invalid_value(
                child(&at, "mode"),
                &item["mode"],
                FILE_MODE,
            ));
        }
    }
    errs
}
