//! The metadata rules every kind shares (apimachinery's `ValidateObjectMeta` and `ValidateObjectMetaUpdate`,
//! less what the write pipeline checks itself: names, owner references, finalizers): label keys and
//! values, annotation keys and their total size.

use serde_json::Value;

use super::field::{Errors, FieldError, child};
use super::formats;

/// `TotalAnnotationSizeLimitB`: 256 kB of keys and values.
const ANNOTATIONS_SIZE_LIMIT: usize = 256 * 1024;

/// `ValidateLabels` on a map of labels at `path` (keys in order).
pub(super) fn labels(labels: &Value, path: &str) -> Errors {
    let mut errs = Errors::new();
    let Some(labels) = labels.as_object() else {
        return errs;
    };
    for (k, v) in labels {
        for msg in formats::label_key(k) {
            errs.push(FieldError::invalid(path, k, msg));
        }
        let v = v.as_str().unwrap_or("");
        for msg in formats::label_value(v) {
            errs.push(FieldError::invalid(path, v, msg));
        }
    }
    errs
}

/// `ValidateAnnotations` on a map of annotations at `path`.
pub(super) fn annotations(annotations: &Value, path: &str) -> Errors {
    let mut errs = Errors::new();
    let Some(annotations) = annotations.as_object() else {
        return errs;
    };
    let mut size = 0;
    for (k, v) in annotations {
        for msg in formats::label_key(&k.to_lowercase()) {
            errs.push(FieldError::invalid(path, k, msg));
        }
        size += k.len() + v.as_str().map_or(0, str::len);
    }
    if size > ANNOTATIONS_SIZE_LIMIT {
        errs.push(FieldError::too_long(path, ANNOTATIONS_SIZE_LIMIT));
    }
    errs
}

/// The labels and annotations of an object's (or a template's) `metadata` at `path`.
pub(super) fn labels_and_annotations(meta: &Value, path: &str) -> Errors {
    let mut errs = labels(&meta["labels"], &child(path, "labels"));
    errs.extend(annotations(
        &meta["annotations"],
        &child(path, "annotations"),
    ));
    errs
}

/// What `ValidateObjectMeta` adds for an object (the name is checked by the write pipeline).
pub(super) fn object(obj: &Value) -> Errors {
    labels_and_annotations(&obj["metadata"], "metadata")
}

/// What `ValidateObjectMetaUpdate` adds for an object (the immutable identity fields are kept by the write
/// pipeline, which copies them from the stored object).
pub(super) fn object_update(obj: &Value) -> Errors {
    labels_and_annotations(&obj["metadata"], "metadata")
}
