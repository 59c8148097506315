//! Configuration and namespaces of the core group, storage claims, and Leases.

use serde_json::{Value, json};

use super::cells::{access_modes, len, text};
use crate::table::row::Row;
use crate::table::time::{self, Now};

/// A ConfigMap's row.
pub(super) fn config_map(obj: &Value, now: Now) -> Row {
    vec![
        obj["metadata"]["name"].clone(),
        json!(len(&obj["data"]) + len(&obj["binaryData"])),
        time::age(obj, now),
    ]
    .into()
}

/// A Secret's row.
pub(super) fn secret(obj: &Value, now: Now) -> Row {
    vec![
        obj["metadata"]["name"].clone(),
        json!(obj["type"].as_str().unwrap_or("Opaque")),
        json!(len(&obj["data"])),
        time::age(obj, now),
    ]
    .into()
}

/// A Namespace's row.
pub(super) fn namespace(obj: &Value, now: Now) -> Row {
    vec![
        obj["metadata"]["name"].clone(),
        json!(obj["status"]["phase"].as_str().unwrap_or("Active")),
        time::age(obj, now),
    ]
    .into()
}

/// A ServiceAccount's row.
pub(super) fn service_account(obj: &Value, now: Now) -> Row {
    vec![obj["metadata"]["name"].clone(), time::age(obj, now)].into()
}

/// A Lease's row.
pub(super) fn lease(obj: &Value, now: Now) -> Row {
    vec![
        obj["metadata"]["name"].clone(),
        json!(text(&obj["spec"]["holderIdentity"])),
        time::age(obj, now),
    ]
    .into()
}

/// A PersistentVolumeClaim's row.
pub(super) fn persistent_volume_claim(obj: &Value, now: Now) -> Row {
    let (meta, spec, status) = (&obj["metadata"], &obj["spec"], &obj["status"]);
    // Both default on kube-apiserver: the phase to Pending, the volume mode to Filesystem.
    let phase = if meta["deletionTimestamp"].is_null() {
        json!(status["phase"].as_str().unwrap_or("Pending"))
    } else {
        json!("Terminating")
    };
    let volume = text(&spec["volumeName"]);
    let (capacity, modes) = if volume.is_empty() {
        (String::new(), String::new())
    } else {
        (
            text(&status["capacity"]["storage"]),
            access_modes(&status["accessModes"]),
        )
    };
    let class = meta["annotations"]["volume.beta.kubernetes.io/storage-class"]
        .as_str()
        .or_else(|| spec["storageClassName"].as_str())
        .unwrap_or("");
    let attributes_class = spec["volumeAttributesClassName"]
        .as_str()
        .filter(|c| !c.is_empty())
        .unwrap_or("<unset>");
    vec![
        meta["name"].clone(),
        phase,
        json!(volume),
        json!(capacity),
        json!(modes),
        json!(class),
        json!(attributes_class),
        time::age(obj, now),
        json!(spec["volumeMode"].as_str().unwrap_or("Filesystem")),
    ]
    .into()
}
