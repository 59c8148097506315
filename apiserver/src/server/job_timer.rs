//! The timer that finishes the Jobs the server plays on the system clock: the next due time, watched by the
//! task that waits for it (see `jobs.rs`).

use std::sync::atomic::AtomicBool;

use k8s_openapi::jiff::Timestamp;
use tokio::sync::watch;

/// The system clock's timer: the next due time, told to the task that waits for it.
pub(super) struct JobTimer {
    pub(super) next: watch::Sender<Option<Timestamp>>,
    pub(super) spawned: AtomicBool,
}

impl JobTimer {
    pub(super) fn new() -> Self {
        Self {
            next: watch::channel(None).0,
            spawned: AtomicBool::new(false),
        }
    }
}
