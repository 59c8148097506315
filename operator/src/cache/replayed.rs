//! Which events of a cache only replay what a list brought: the objects of its first list, and the objects
//! of a re-list (after a lost watch) that did not change while the watch was down.
//!
//! The controllers' work queue runs the passes these events ask for after the passes that changes ask for
//! (see [`Priority`](crate::controller::Priority)): when an operator starts on 10,000 parents, or re-lists
//! them, a change to one parent does not wait behind the other 9,999.
//!
//! The rule reads resourceVersions, which etcd makes increasing numbers: every object a list returns has a
//! resourceVersion at most the list's, and every event of the watch after it a higher one. So the cache keeps
//! one number, the highest resourceVersion an event may have and still be a replay:
//! - during its first list, every version (everything the list returns was there before the operator);
//! - after its first list, the highest version that list held (later events are changes);
//! - from the start of a re-list, the highest version the cache had seen before it (an object listed with a
//!   higher one changed, or was created, while the watch was down).
//!
//! A resourceVersion that is not a number (a server other than kube-apiserver over etcd may send opaque
//! ones) is never a replay: every event then has the normal priority, as without this rule.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use kube::runtime::watcher::Event;

use super::spec_kept::SpecKept;

/// The highest resourceVersion a replayed event may carry (shared by a cache and its watch loop), and the
/// cache's other events whose passes may wait: its updates that kept their object's spec ([`SpecKept`]).
#[derive(Debug, Clone, Default)]
pub(crate) struct Replayed {
    up_to: Arc<AtomicU64>,
    spec_kept: SpecKept,
}

impl Replayed {
    /// The cache's updates that kept their object's spec.
    pub(crate) fn spec_kept(&self) -> &SpecKept {
        &self.spec_kept
    }

    /// Whether an event for an object at `resource_version` replays a list (see the module docs).
    pub(crate) fn replays(&self, resource_version: Option<&str>) -> bool {
        resource_version
            .and_then(|v| v.parse::<u64>().ok())
            .is_some_and(|v| v <= self.up_to.load(Ordering::Acquire))
    }

    /// Follows the lists of the watch: called with each event, `seen` holding the highest resourceVersion
    /// the watch delivered so far (this event's objects included), `listed` whether a list completed before.
    pub(super) fn note<K>(&self, seen: &AtomicU64, listed: &mut bool, ev: &Event<K>) {
        match ev {
            Event::Init if !*listed => self.up_to.store(u64::MAX, Ordering::Release),
            // What the cache saw before the re-list: versions above it changed while the watch was down.
            Event::Init => self
                .up_to
                .store(seen.load(Ordering::Acquire), Ordering::Release),
            Event::InitDone if !*listed => {
                *listed = true;
                self.up_to
                    .store(seen.load(Ordering::Acquire), Ordering::Release);
            }
            Event::InitDone | Event::InitApply(_) | Event::Apply(_) | Event::Delete(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_list_replays_then_changes_do_not_and_a_relist_replays_only_what_did_not_change() {
        let (r, seen, mut listed) = (Replayed::default(), AtomicU64::new(0), false);
        let ev = |e: Event<()>| e;
        assert!(!r.replays(Some("5")), "nothing listed yet");
        r.note(&seen, &mut listed, &ev(Event::Init));
        seen.store(40, Ordering::Release);
        assert!(r.replays(Some("40")) && r.replays(Some("7")));
        r.note(&seen, &mut listed, &ev(Event::InitDone));
        assert!(
            r.replays(Some("40")),
            "the first list's objects, read after it"
        );
        assert!(!r.replays(Some("41")), "a change after the list");
        seen.store(60, Ordering::Release);
        // The watch is lost; the re-list holds objects at 50 (seen before) and 75 (changed meanwhile).
        r.note(&seen, &mut listed, &ev(Event::Init));
        seen.store(75, Ordering::Release);
        r.note(&seen, &mut listed, &ev(Event::InitDone));
        assert!(r.replays(Some("50")));
        assert!(!r.replays(Some("75")));
        assert!(!r.replays(Some("76")));
        assert!(!r.replays(Some("opaque")) && !r.replays(None));
    }
}
