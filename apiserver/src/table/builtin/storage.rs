//! Storage: PersistentVolumes and the `storage.k8s.io` kinds.

use serde_json::{Value, json};

use super::cells::{access_modes, len, text};
use crate::table::row::Row;
use crate::table::time::{self, Now};

/// A PersistentVolume's row.
pub(super) fn persistent_volume(obj: &Value, now: Now) -> Row {
    let (meta, spec, status) = (&obj["metadata"], &obj["spec"], &obj["status"]);
    let claim = match spec["claimRef"].as_object() {
        Some(r) => format!(
            "{}/{}",
            r.get("namespace").map(text).unwrap_or_default(),
            r.get("name").map(text).unwrap_or_default()
        ),
        None => String::new(),
    };
    // kube-apiserver defaults the phase to Pending and the reclaim policy to Retain.
    let phase = if meta["deletionTimestamp"].is_null() {
        status["phase"].as_str().unwrap_or("Pending")
    } else {
        "Terminating"
    };
    let class = meta["annotations"]["volume.beta.kubernetes.io/storage-class"]
        .as_str()
        .or_else(|| spec["storageClassName"].as_str())
        .unwrap_or("");
    vec![
        meta["name"].clone(),
        json!(text(&spec["capacity"]["storage"])),
        json!(access_modes(&spec["accessModes"])),
        json!(
            spec["persistentVolumeReclaimPolicy"]
                .as_str()
                .unwrap_or("Retain")
        ),
        json!(phase),
        json!(claim),
        json!(class),
        json!(
            spec["volumeAttributesClassName"]
                .as_str()
                .unwrap_or("<unset>")
        ),
        json!(text(&status["reason"])),
        time::age(obj, now),
        json!(spec["volumeMode"].as_str().unwrap_or("Filesystem")),
    ]
    .into()
}

/// A StorageClass's row.
pub(super) fn storage_class(obj: &Value, now: Now) -> Row {
    let annotations = &obj["metadata"]["annotations"];
    let default = [
        "storageclass.kubernetes.io/is-default-class",
        "storageclass.beta.kubernetes.io/is-default-class",
    ]
    .iter()
    .any(|a| annotations[*a] == "true");
    let name = text(&obj["metadata"]["name"]);
    vec![
        json!(if default {
            format!("{name} (default)")
        } else {
            name
        }),
        json!(text(&obj["provisioner"])),
        json!(obj["reclaimPolicy"].as_str().unwrap_or("Delete")),
        json!(obj["volumeBindingMode"].as_str().unwrap_or("Immediate")),
        json!(obj["allowVolumeExpansion"].as_bool().unwrap_or(false)),
        time::age(obj, now),
    ]
    .into()
}

/// A CSIDriver's row.
pub(super) fn csi_driver(obj: &Value, now: Now) -> Row {
    let spec = &obj["spec"];
    let flag = |key: &str, default: bool| json!(spec[key].as_bool().unwrap_or(default));
    let audiences: Vec<String> = spec["tokenRequests"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| text(&t["audience"]))
        .collect();
    // Defaulted to Persistent.
    let modes = match spec["volumeLifecycleModes"].as_array() {
        None => "Persistent".to_string(),
        Some(m) if m.is_empty() => "<none>".to_string(),
        Some(m) => m.iter().map(text).collect::<Vec<_>>().join(","),
    };
    vec![
        obj["metadata"]["name"].clone(),
        flag("attachRequired", true),
        flag("podInfoOnMount", false),
        flag("storageCapacity", false),
        json!(if audiences.is_empty() {
            "<unset>".to_string()
        } else {
            audiences.join(",")
        }),
        flag("requiresRepublish", false),
        json!(modes),
        time::age(obj, now),
    ]
    .into()
}

/// A CSINode's row.
pub(super) fn csi_node(obj: &Value, now: Now) -> Row {
    vec![
        obj["metadata"]["name"].clone(),
        json!(len(&obj["spec"]["drivers"])),
        time::age(obj, now),
    ]
    .into()
}

/// A VolumeAttachment's row.
pub(super) fn volume_attachment(obj: &Value, now: Now) -> Row {
    let spec = &obj["spec"];
    vec![
        obj["metadata"]["name"].clone(),
        json!(text(&spec["attacher"])),
        json!(text(&spec["source"]["persistentVolumeName"])),
        json!(text(&spec["nodeName"])),
        json!(obj["status"]["attached"].as_bool().unwrap_or(false)),
        time::age(obj, now),
    ]
    .into()
}

/// A VolumeAttributesClass's row.
pub(super) fn volume_attributes_class(obj: &Value, now: Now) -> Row {
    vec![
        obj["metadata"]["name"].clone(),
        json!(text(&obj["driverName"])),
        time::age(obj, now),
    ]
    .into()
}
