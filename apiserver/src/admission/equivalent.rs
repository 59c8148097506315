//! A resource stored with the requested one, which `matchPolicy: Equivalent` matches (see `equivalents.rs`).

use std::sync::Arc;

use crate::registry::ResourceType;

/// A resource stored with the requested one (another version of a custom resource, `events` of
/// `events.k8s.io` and of the core group, ...), which kube-apiserver's `matchPolicy: Equivalent` matches.
#[derive(Clone)]
pub(crate) struct Equivalent {
    /// Its type: group, version, resource and kind.
    pub rt: Arc<ResourceType>,
}

impl std::fmt::Debug for Equivalent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}/{}/{}",
            self.rt.group, self.rt.version, self.rt.plural
        )
    }
}
