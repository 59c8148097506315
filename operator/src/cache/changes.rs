//! The changes of one cached kind, fanned out to each subscriber's own bounded queue.
//!
//! A broadcast channel allocates its whole ring up front: 4,096 slots of 48 bytes cost 192 KiB per kind, for
//! every kind, however rarely it changes. Here each subscriber has a queue that allocates as it fills (in
//! blocks of 32 changes) and holds at most [`CAPACITY`] changes; a subscriber that falls further behind misses
//! the changes that did not fit and is told how many, as a lagging broadcast receiver is
//! ([`RecvError::Lagged`]).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

use super::Change;

/// How many changes a subscriber may fall behind before it misses some.
pub const CAPACITY: usize = 1 << 12;

struct Subscriber<K> {
    queue: mpsc::Sender<Change<K>>,
    missed: Arc<AtomicU64>,
}

/// The sending side: every clone sends to the same subscribers.
pub(crate) struct Publisher<K> {
    subscribers: Arc<Mutex<Vec<Subscriber<K>>>>,
    capacity: usize,
}

impl<K> Clone for Publisher<K> {
    fn clone(&self) -> Self {
        Self {
            subscribers: self.subscribers.clone(),
            capacity: self.capacity,
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
            subscribers: Arc::default(),
            capacity,
        }
    }

    /// Queues `change` for every subscriber (none is fine); a subscriber whose queue is full misses it.
    pub(crate) fn send(&self, change: Change<K>) {
        let mut subscribers = self.subscribers.lock().unwrap_or_else(|e| e.into_inner());
        subscribers.retain(|s| match s.queue.try_send(change.clone()) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                s.missed.fetch_add(1, Ordering::AcqRel);
                true
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        });
    }

    /// A subscriber to every change sent from now on.
    pub(crate) fn subscribe(&self) -> Changes<K> {
        let (queue, rx) = mpsc::channel(self.capacity);
        let missed = Arc::new(AtomicU64::new(0));
        self.subscribers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Subscriber {
                queue,
                missed: missed.clone(),
            });
        Changes { rx, missed }
    }
}

/// Why [`Changes::recv`] returned no change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum RecvError {
    /// This many changes did not fit in the subscriber's queue and are lost: whatever depends on them must be
    /// recomputed from the cache.
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
    rx: mpsc::Receiver<Change<K>>,
    missed: Arc<AtomicU64>,
}

impl<K> std::fmt::Debug for Changes<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Changes")
            .field("queued", &self.rx.len())
            .finish_non_exhaustive()
    }
}

impl<K> Changes<K> {
    /// The next change; [`RecvError::Lagged`] first when changes were missed since the last call.
    pub async fn recv(&mut self) -> Result<Change<K>, RecvError> {
        match self.missed.swap(0, Ordering::AcqRel) {
            0 => self.rx.recv().await.ok_or(RecvError::Closed),
            missed => Err(RecvError::Lagged(missed)),
        }
    }

    /// The next change if one is waiting; [`TryRecvError::Lagged`] first when changes were missed.
    pub fn try_recv(&mut self) -> Result<Change<K>, TryRecvError> {
        match self.missed.swap(0, Ordering::AcqRel) {
            0 => self.rx.try_recv().map_err(|e| match e {
                mpsc::error::TryRecvError::Empty => TryRecvError::Empty,
                mpsc::error::TryRecvError::Disconnected => TryRecvError::Closed,
            }),
            missed => Err(TryRecvError::Lagged(missed)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;

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
        let publisher = Publisher::default();
        let mut slow = publisher.subscribe();
        let mut fast = publisher.subscribe();
        for i in 0..CAPACITY + 3 {
            publisher.send(applied(&i.to_string()));
            assert_eq!(name(fast.try_recv().unwrap()), i.to_string());
        }
        assert_eq!(slow.recv().await.err(), Some(RecvError::Lagged(3)));
        assert_eq!(name(slow.recv().await.unwrap()), "0");
        assert_eq!(slow.rx.len(), CAPACITY - 1);
        // Once it has room, it gets changes again.
        publisher.send(applied("next"));
        assert!(slow.try_recv().is_ok());
    }

    #[tokio::test]
    async fn a_dropped_subscriber_is_forgotten() {
        let publisher = Publisher::default();
        let dropped = publisher.subscribe();
        let _kept = publisher.subscribe();
        drop(dropped);
        publisher.send(applied("x"));
        assert_eq!(publisher.subscribers.lock().unwrap().len(), 1);
    }
}
