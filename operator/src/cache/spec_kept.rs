//! Which updates of a cache's objects kept their spec: the same `metadata.generation` as the version the cache
//! held, the same owners, and no deletion begun. Such an update changed the object's status or metadata only:
//! a workload controller reporting on a child (kube-controller-manager writes a new Deployment's status twice
//! in its first seconds, then again as its Pods come up).
//!
//! The controllers' work queue lets a parent that only such an update of a child makes due wait with the
//! replays of lists ([`Priority`](crate::controller::Priority)): under a backlog, a child's status updates
//! then wait behind it and are read together in one pass, and the passes that create or correct children go
//! first; with no backlog they run at once, as any change.
//!
//! The cache remembers the resourceVersions of the last [`REMEMBERED`] such updates (8 bytes each, allocated as
//! they come); a controller reads an event soon after the cache noted it, and an event it reads later than
//! that is treated as any change. A kind whose objects have no generation (ConfigMaps, Secrets) never keeps
//! its spec by this rule, nor does an object the cache did not hold, or one whose resourceVersion is not a
//! number.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

/// How many updates are remembered.
pub(crate) const REMEMBERED: usize = 4096;

/// The resourceVersions of the last updates that kept their object's spec (shared by a cache and its watch
/// loop).
#[derive(Debug, Clone, Default)]
pub(crate) struct SpecKept {
    /// Ascending.
    versions: Arc<Mutex<VecDeque<u64>>>,
}

impl SpecKept {
    /// Notes that the update to `resource_version` kept its object's spec.
    pub(crate) fn note(&self, resource_version: Option<&str>) {
        let Some(version) = resource_version.and_then(|v| v.parse::<u64>().ok()) else {
            return;
        };
        let mut versions = self.versions.lock().unwrap_or_else(|e| e.into_inner());
        // Events come in the order of their versions, save across the watches of several namespaces.
        let at = versions.partition_point(|v| *v < version);
        if versions.get(at) == Some(&version) {
            return;
        }
        // The oldest goes before the newest comes, so the queue never grows past what it remembers.
        if versions.len() >= REMEMBERED {
            versions.pop_front();
            versions.insert(at.saturating_sub(1), version);
        } else {
            versions.insert(at, version);
        }
    }

    /// Whether the update to `resource_version` was noted as keeping its object's spec.
    pub(crate) fn kept(&self, resource_version: Option<&str>) -> bool {
        let Some(version) = resource_version.and_then(|v| v.parse::<u64>().ok()) else {
            return false;
        };
        let versions = self.versions.lock().unwrap_or_else(|e| e.into_inner());
        versions.binary_search(&version).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noted_versions_are_kept_in_any_order_and_the_oldest_go_first() {
        let kept = SpecKept::default();
        kept.note(Some("20"));
        kept.note(Some("12"));
        kept.note(Some("20"));
        kept.note(Some("opaque"));
        kept.note(None);
        assert!(kept.kept(Some("20")) && kept.kept(Some("12")));
        assert!(!kept.kept(Some("15")) && !kept.kept(Some("opaque")) && !kept.kept(None));
        for v in 100..100 + REMEMBERED as u64 {
            kept.note(Some(&v.to_string()));
        }
        assert!(
            !kept.kept(Some("12")) && !kept.kept(Some("20")),
            "the oldest went"
        );
        assert!(kept.kept(Some("100")) && kept.kept(Some(&(99 + REMEMBERED).to_string())));
        let versions = kept.versions.lock().unwrap();
        assert_eq!(versions.len(), REMEMBERED);
        assert!(versions.capacity() < 2 * REMEMBERED, "never grew past it");
    }
}
