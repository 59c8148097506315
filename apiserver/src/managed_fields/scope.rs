//! What a managed fields entry records of a request: the part of the object it manages and its operation.

/// Which part of the object a request may manage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The main resource of a type that has a status subresource: everything except `status`.
    Main,
    /// The status subresource: only `status`. Entries get `"subresource": "status"`.
    Status,
    /// The main resource of a type without status subresource: everything.
    Whole,
    /// The scale subresource: writes the replicas of the main resource. Entries get
    /// `"subresource": "scale"` and, as kube-apiserver writes them, no `time`.
    Scale,
    /// A namespace's finalize subresource: everything except `status`. Entries get
    /// `"subresource": "finalize"`.
    Finalize,
}

impl Scope {
    pub(super) fn subresource(self) -> &'static str {
        match self {
            Scope::Status => "status",
            Scope::Scale => "scale",
            Scope::Finalize => "finalize",
            Scope::Main | Scope::Whole => "",
        }
    }
}

/// The operation recorded in a managed fields entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operation {
    /// A server-side apply.
    Apply,
    /// Any other write (create, update, non-apply patch). Unknown operations read from existing
    /// entries are treated as updates.
    Update,
}

impl Operation {
    /// The wire form: `"Apply"` or `"Update"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }
}
