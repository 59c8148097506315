//! The changes of one cached kind, broadcast to every subscriber (the controllers' triggers).
//!
//! A tokio broadcast channel of [`CAPACITY`] slots, allocated up front (48 bytes each, 192 KiB per kind). A
//! subscriber that falls further behind misses the oldest changes and is told how many
//! ([`RecvError::Lagged`]). A queue per subscriber that allocated as it filled was tried and dropped: it made
//! a derive-versus-by-hand scenario publish one event twice under load (see the session note of stop 30).

use tokio::sync::broadcast;

use super::Change;

/// How many changes a subscriber may fall behind before it misses some.
pub const CAPACITY: usize = 1 << 12;

/// The sending side: every clone sends to the same subscribers.
pub(crate) struct Publisher<K> {
    tx: broadcast::Sender<Change<K>>,
}

impl<K> Clone for Publisher<K> {
    fn clone(&self) -> Self {
        Self {
            tx: self.tx.clone(),
        }
    }
}

impl<K> Default for Publisher<K> {
    fn default() -> Self {
        Self::with_capacity(CAPACITY)
    }
}

impl<K> Publisher<K> {
    /// A publisher whose subscribers may fall `capacity` changes behind.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        Self {
            tx: broadcast::channel(capacity).0,
        }
    }

    /// Sends `change` to every subscriber (none is fine: nobody needs this kind's triggers).
    pub(crate) fn send(&self, change: Change<K>) {
        let _ = self.tx.send(change);
    }

    /// A subscriber to every change sent from now on.
    pub(crate) fn subscribe(&self) -> Changes<K> {
        Changes {
            rx: self.tx.subscribe(),
        }
    }
}

/// Why [`Changes::recv`] returned no change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RecvError {
    /// This many changes were missed: whatever depends on them must be recomputed from the cache.
    #[error("{0} changes were missed")]
    Lagged(u64),
    /// The cache is gone, and every change it sent was received.
    #[error("the cache is gone")]
    Closed,
}

/// Why [`Changes::try_recv`] returned no change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TryRecvError {
    /// No change is waiting.
    #[error("no change is waiting")]
    Empty,
    /// As [`RecvError::Lagged`].
    #[error("{0} changes were missed")]
    Lagged(u64),
    /// As [`RecvError::Closed`].
    #[error("the cache is gone")]
    Closed,
}

/// The changes of one cached kind, from when it subscribed ([`Cache::changes`](super::Cache::changes)).
///
/// The caches' controllers turn them into triggers; [`RecvError::Lagged`] tells one to reconcile every parent.
pub struct Changes<K> {
    rx: broadcast::Receiver<Change<K>>,
}

impl<K> std::fmt::Debug for Changes<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Changes")
            .field("queued", &self.rx.len())
            .finish_non_exhaustive()
    }
}

impl<K> Changes<K> {
    /// The next change; [`RecvError::Lagged`] when changes were missed since the last call.
    pub async fn recv(&mut self) -> Result<Change<K>, RecvError> {
        self.rx.recv().await.map_err(|e| match e {
            broadcast::error::RecvError::Lagged(n) => RecvError::Lagged(n),
            broadcast::error::RecvError::Closed => RecvError::Closed,
        })
    }

    /// The next change if one is waiting; [`TryRecvError::Lagged`] when changes were missed.
    pub fn try_recv(&mut self) -> Result<Change<K>, TryRecvError> {
        self.rx.try_recv().map_err(|e| match e {
            broadcast::error::TryRecvError::Empty => TryRecvError::Empty,
            broadcast::error::TryRecvError::Lagged(n) => TryRecvError::Lagged(n),
            broadcast::error::TryRecvError::Closed => TryRecvError::Closed,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use std::sync::Arc;

    fn applied(name: &str) -> Change<ConfigMap> {
        let mut cm = ConfigMap::default();
        cm.metadata.name = Some(name.into());
        Change::Applied(Arc::new(cm))
    }

    fn name(change: Change<ConfigMap>) -> String {
        change.object().metadata.name.clone().unwrap_or_default()
    }

    #[tokio::test]
    async fn each_subscriber_gets_every_change_sent_after_it_subscribed() {
        let publisher = Publisher::default();
        publisher.send(applied("before"));
        let mut a = publisher.subscribe();
        publisher.send(applied("one"));
        let mut b = publisher.subscribe();
        publisher.send(applied("two"));
        assert_eq!(name(a.recv().await.unwrap()), "one");
        assert_eq!(name(a.recv().await.unwrap()), "two");
        assert_eq!(name(b.recv().await.unwrap()), "two");
        assert_eq!(b.try_recv().err(), Some(TryRecvError::Empty));
        drop(publisher);
        assert_eq!(a.recv().await.err(), Some(RecvError::Closed));
        assert_eq!(b.try_recv().err(), Some(TryRecvError::Closed));
    }

    #[tokio::test]
    async fn a_subscriber_too_far_behind_is_told_how_many_it_missed_and_others_are_not() {
        let publisher = Publisher::with_capacity(4);
        let mut slow = publisher.subscribe();
        let mut fast = publisher.subscribe();
        for i in 0..7 {
            publisher.send(applied(&i.to_string()));
            assert_eq!(name(fast.try_recv().unwrap()), i.to_string());
        }
        assert_eq!(slow.recv().await.err(), Some(RecvError::Lagged(3)));
        assert_eq!(name(slow.recv().await.unwrap()), "3");
    }
}
