//! What a cache that did not sync says about itself: its kind and the last error its watch got.

use std::time::Duration;

use kube::runtime::watcher;

/// A cache that does not hold its first list yet, and the last error its watch got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsynced {
    /// The kind, e.g. `ResourceQuota`.
    pub kind: String,
    /// The watch's last error, e.g. `404 NotFound: the server could not find the requested resource`;
    /// `None` while it has failed nothing (still listing).
    pub last_error: Option<String>,
}

impl std::fmt::Display for Unsynced {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.last_error {
            Some(e) => write!(f, "{} (the server answered: {e})", self.kind),
            None => write!(f, "{} (no answer yet)", self.kind),
        }
    }
}

/// Caches that did not sync in time: which kinds, and what the server answered their watches.
#[derive(Debug, Clone, thiserror::Error)]
#[error("the caches of {} did not sync within {after:?}", list(.unsynced))]
pub struct NotSynced {
    /// How long the caller waited.
    pub after: Duration,
    /// The caches not synced, by kind.
    pub unsynced: Vec<Unsynced>,
}

fn list(unsynced: &[Unsynced]) -> String {
    let all: Vec<String> = unsynced.iter().map(Unsynced::to_string).collect();
    all.join(", ")
}

/// A watch error as the server put it: `404 NotFound: the server could not find the requested resource` for
/// an API error, the client's words otherwise.
pub fn describe_watch_error(e: &watcher::Error) -> String {
    let status = match e {
        watcher::Error::InitialListFailed(kube::Error::Api(s))
        | watcher::Error::WatchStartFailed(kube::Error::Api(s))
        | watcher::Error::WatchFailed(kube::Error::Api(s))
        | watcher::Error::WatchError(s) => s,
        other => return other.to_string(),
    };
    format!("{} {}: {}", status.code, status.reason, status.message)
}
