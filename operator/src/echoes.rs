//! Echoes: the watch events that only show a controller what one of its own passes wrote, so that they do not
//! queue another pass of the parent that wrote them.
//!
//! A pass that creates a Deployment and a Service and writes its parent's status gets three watch events back.
//! Each would queue the parent again, and the pass they queue computes what the writing pass already wrote:
//! the writing pass reported its children from the API's answers, not from the cache. So an event is an echo,
//! and queues nothing, when the object's `uid` and `resourceVersion` are exactly those the API answered a write
//! of this controller with, and the parent it would queue is the one whose pass wrote it. Any other change of
//! the object (another writer, a controller's status update, a later spec) has another `resourceVersion` and
//! queues a pass as before; so does the same event for any other parent (a tracker, a mapper).
//!
//! Entries go when their echo arrives, or after [`KEEP`] (an echo that never comes: the write changed nothing,
//! or a later change came first); at most [`CAPACITY`] are held, and a write not remembered only costs a pass.
//! An echo is told by its exact version, not by its age: the parent it queued may wait its turn behind
//! thousands of others (16 passes at a time over 10,000 parents took minutes on the real control plane), and a
//! limit of one minute there made 7,000 passes that only found their own writes.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a write's echo is awaited (its parent's pass may come long after the echo itself).
pub(crate) const KEEP: Duration = Duration::from_secs(15 * 60);

/// How many writes are awaited at most.
pub(crate) const CAPACITY: usize = 65_536;

/// How many versions of one object are awaited at most (the oldest go first).
const VERSIONS: usize = 8;

/// The writes of one controller whose echoes have not arrived yet.
#[derive(Debug, Default)]
pub(crate) struct Echoes {
    awaited: Mutex<Awaited>,
}

#[derive(Debug, Default)]
struct Awaited {
    /// By the written object's uid.
    writes: HashMap<Box<str>, Write>,
    swept: Option<Instant>,
}

#[derive(Debug)]
struct Write {
    /// The versions the writes left, oldest first (a pass may write an object twice: a finalizer, then a
    /// status).
    resource_versions: Vec<Box<str>>,
    /// The uid of the parent whose passes wrote it.
    writer: Box<str>,
    /// When the last of them was written.
    at: Instant,
}

impl Echoes {
    /// Remembers that a pass of the parent `writer` (its uid) left the object `uid` at `version` (as the API
    /// answered the write).
    pub(crate) fn wrote(&self, writer: &str, uid: &str, version: &str) {
        self.wrote_at(writer, uid, version, Instant::now());
    }

    fn wrote_at(&self, writer: &str, uid: &str, version: &str, now: Instant) {
        let mut awaited = self.awaited.lock().unwrap_or_else(|e| e.into_inner());
        if awaited.swept.is_none_or(|s| now.duration_since(s) > KEEP) {
            awaited
                .writes
                .retain(|_, w| now.duration_since(w.at) <= KEEP);
            awaited.writes.shrink_to_fit();
            awaited.swept = Some(now);
        }
        if awaited.writes.len() >= CAPACITY && !awaited.writes.contains_key(uid) {
            return;
        }
        match awaited.writes.get_mut(uid) {
            Some(w) if *w.writer == *writer => {
                if w.resource_versions.len() >= VERSIONS {
                    w.resource_versions.remove(0);
                }
                w.resource_versions.push(version.into());
                w.at = now;
            }
            _ => {
                awaited.writes.insert(
                    uid.into(),
                    Write {
                        resource_versions: vec![version.into()],
                        writer: writer.into(),
                        at: now,
                    },
                );
            }
        }
    }

    /// Whether the object `uid` at `version` is what a write of the parent `parent`'s (its uid) own passes
    /// left; each version is recognised once.
    pub(crate) fn is_echo(&self, uid: &str, version: &str, parent: &str) -> bool {
        let mut awaited = self.awaited.lock().unwrap_or_else(|e| e.into_inner());
        let Some(write) = awaited.writes.get_mut(uid) else {
            return false;
        };
        let at = write.resource_versions.iter().position(|v| **v == *version);
        let echo = match at {
            Some(at) if *write.writer == *parent => {
                // Events arrive in order: the versions before this one will not come any more.
                write.resource_versions.drain(..=at);
                true
            }
            _ => false,
        };
        if echo && write.resource_versions.is_empty() {
            awaited.writes.remove(uid);
        }
        echo
    }

    /// How many writes are awaited.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.awaited
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .writes
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_version_a_pass_wrote_is_its_echo_and_only_for_its_parent() {
        let echoes = Echoes::default();
        echoes.wrote("parent-1", "child", "7");
        // Another version of the object: someone else's change.
        assert!(!echoes.is_echo("child", "8", "parent-1"));
        // The same event, for a parent that did not write it (a tracker's, a mapper's).
        assert!(!echoes.is_echo("child", "7", "parent-2"));
        assert!(echoes.is_echo("child", "7", "parent-1"));
        // Recognised once: the same version delivered again (a relist) queues a pass.
        assert!(!echoes.is_echo("child", "7", "parent-1"));
        assert_eq!(echoes.len(), 0);
    }

    #[test]
    fn every_write_of_a_pass_has_its_echo() {
        let echoes = Echoes::default();
        for version in ["3", "4", "5"] {
            echoes.wrote("p", "u", version);
        }
        assert!(echoes.is_echo("u", "3", "p"));
        // The event of version 4 was skipped (coalesced by a relist): 5 is still an echo, 4 no more.
        assert!(echoes.is_echo("u", "5", "p"));
        assert!(!echoes.is_echo("u", "4", "p"));
        assert_eq!(echoes.len(), 0);
    }

    #[test]
    fn an_echo_is_told_however_long_its_parent_waited_for_its_pass() {
        let echoes = Echoes::default();
        let now = Instant::now();
        let Some(long_ago) = now.checked_sub(Duration::from_secs(5 * 60)) else {
            return; // a clock that started less than five minutes ago
        };
        echoes.wrote_at("p", "u", "3", long_ago);
        // Another write's sweep keeps it.
        echoes.wrote_at("q", "v", "9", now);
        assert!(echoes.is_echo("u", "3", "p"));
        // Past `KEEP`, the sweep lets it go.
        let Some(too_long_ago) = now.checked_sub(KEEP + Duration::from_secs(1)) else {
            return;
        };
        let echoes = Echoes::default();
        echoes.wrote_at("p", "u", "3", too_long_ago);
        echoes.wrote_at("q", "v", "9", now);
        assert!(!echoes.is_echo("u", "3", "p"));
    }

    #[test]
    fn a_write_by_another_parent_replaces_the_awaited_ones() {
        let echoes = Echoes::default();
        echoes.wrote("p1", "u", "3");
        echoes.wrote("p2", "u", "4");
        assert!(!echoes.is_echo("u", "3", "p1"));
        assert!(echoes.is_echo("u", "4", "p2"));
    }
}
