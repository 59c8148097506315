//! What a write or a delete is asked to do, and what it did.

use std::sync::Arc;

use serde_json::Value;

/// Which part of the object a write addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The main resource.
    Main,
    /// The `status` subresource.
    Status,
    /// The `scale` subresource (a write of the replicas of the main resource).
    Scale,
    /// A namespace's `finalize` subresource: everything but `status`, `spec.finalizers` included (which an
    /// update of the namespace itself keeps).
    Finalize,
}

/// Options common to writes.
#[derive(Debug, Clone)]
pub struct WriteOpts {
    /// The field manager.
    pub manager: String,
    /// `dryRun=All`.
    pub dry_run: bool,
    /// `fieldValidation=Strict`.
    pub strict: bool,
    /// `fieldValidation=Warn` (the default): unknown fields are dropped with a warning each; `Ignore` drops
    /// them silently.
    pub warn_unknown: bool,
    /// Which part is written.
    pub part: Part,
    /// `managedFields` were already computed by server-side apply.
    pub applied: bool,
    /// Validate the content (schema, CEL rules); off for the dry run that shows mutating webhooks the
    /// object before validation.
    pub validate: bool,
    /// What strict decoding found in the patch that made the object (a JSON, merge or strategic merge patch
    /// under `fieldValidation` `Warn` or `Strict`): its errors are warned about or refused with the
    /// patched object's unknown fields, as kube-apiserver's patch handler does.
    pub patch: Option<crate::strict::PatchFindings>,
    /// The strict errors of a JSON create or update body (`duplicate field "data.a"`), reported with its
    /// unknown fields in document order (by `body_keys`), as kube-apiserver's strict decoder reports them.
    pub body_errors: Vec<String>,
    /// The path of every key of that body, in document order.
    pub body_keys: Vec<String>,
}

impl WriteOpts {
    /// A write by the server itself (seeding, given state).
    pub fn system(part: Part) -> Self {
        Self {
            manager: "kube-apiserver".into(),
            dry_run: false,
            strict: false,
            warn_unknown: true,
            part,
            applied: false,
            validate: true,
            patch: None,
            body_errors: Vec::new(),
            body_keys: Vec::new(),
        }
    }
}

/// The result of a write.
#[derive(Debug, Clone)]
pub struct Written {
    /// The object in the request's version.
    pub object: Value,
    /// Warnings for the `Warning` header (unknown fields).
    pub warnings: Vec<String>,
}

/// How dependents are treated when an owner is deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Propagation {
    /// Delete the owner now, dependents afterwards.
    Background,
    /// Delete dependents first, then the owner.
    Foreground,
    /// Keep dependents, removing the owner reference.
    Orphan,
}

/// The result of a delete.
#[derive(Debug, Clone)]
pub enum Deleted {
    /// The object is gone; its last state in the stored form.
    Gone(Arc<Value>),
    /// The object waits for finalizers; its current state in the stored form.
    Pending(Arc<Value>),
}

pub(super) const FOREGROUND: &str = "foregroundDeletion";
pub(super) const ORPHAN: &str = "orphan";
