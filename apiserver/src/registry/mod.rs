//! The kinds the server knows: built-in ones and those registered by CRDs or by the user.

use std::collections::BTreeMap;
use std::sync::Arc;

mod builtins;
mod resource_type;

pub use resource_type::{
    Conversion, ConversionWebhook, InProcessHandlers, OpenApiSource, PrinterColumn, ResourceType,
    ScaleSpec, api_version,
};

/// All served types, by (group, version, plural).
#[derive(Debug, Clone, Default)]
pub struct Registry {
    types: BTreeMap<(String, String, String), Arc<ResourceType>>,
}

impl Registry {
    /// A registry with the built-in kinds.
    pub fn with_builtins() -> Self {
        let mut r = Self::default();
        for t in builtins::all() {
            r.insert(t);
        }
        r
    }

    /// Adds or replaces a type.
    pub fn insert(&mut self, t: ResourceType) {
        self.types.insert(
            (t.group.clone(), t.version.clone(), t.plural.clone()),
            Arc::new(t),
        );
    }

    /// Removes every version of a group's resource.
    pub fn remove_resource(&mut self, group: &str, plural: &str) {
        self.types
            .retain(|(g, _, p), _| !(g == group && p == plural));
    }

    /// Looks a type up by its URL coordinates.
    pub fn get(&self, group: &str, version: &str, plural: &str) -> Option<Arc<ResourceType>> {
        self.types
            .get(&(group.to_string(), version.to_string(), plural.to_string()))
            .cloned()
    }

    /// Looks a type up by group, version and kind.
    pub fn by_kind(&self, group: &str, version: &str, kind: &str) -> Option<Arc<ResourceType>> {
        self.types
            .values()
            .find(|t| t.group == group && t.version == version && t.kind == kind)
            .cloned()
    }

    /// The type that owns storage for (group, plural) in its storage version.
    pub fn storage_type(&self, storage: &(String, String)) -> Option<Arc<ResourceType>> {
        self.types
            .values()
            .find(|t| {
                &t.storage == storage && t.version == t.storage_version && (t.group == storage.0)
            })
            .cloned()
    }

    /// Any type stored under (group, plural), preferring the storage version.
    pub fn find_storage(&self, storage: &(String, String)) -> Option<Arc<ResourceType>> {
        self.storage_type(storage)
            .or_else(|| self.types.values().find(|t| &t.storage == storage).cloned())
    }

    /// Every type.
    pub fn all(&self) -> impl Iterator<Item = &Arc<ResourceType>> {
        self.types.values()
    }

    /// Whether any version of the group is served.
    pub fn has_group_version(&self, group: &str, version: &str) -> bool {
        self.types
            .keys()
            .any(|(g, v, _)| g == group && v == version)
    }
}
