//! The server's side of the Jobs it plays (see [`crate::workloads::job`]): finishing each when the clock reaches
//! its due time. A fixed clock's [`advance`](super::Clock::advance) finishes the Jobs that came due before it
//! returns; with the system clock a task owned by the server sleeps until the next due time, and ends when the
//! server is dropped. Every request also finishes the Jobs due before it is served, so no answer shows a Job
//! running past its time.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use tokio::sync::watch;

use super::{ApiServer, Shared, relock};
use crate::lifecycle;

impl ApiServer {
    /// Finishes the Jobs due at the clock's time, each in a write of its own.
    pub(super) fn finish_due_jobs(&self) {
        {
            let mut state = relock(&self.shared.state);
            let Some(next) = state.jobs.timers.next() else {
                return;
            };
            let stamp = self.shared.clock.stamp();
            if stamp.parse::<Timestamp>().is_ok_and(|now| now < next) {
                return;
            }
            state.now = stamp;
            lifecycle::finish_due_jobs(&mut state);
        }
        self.schedule_jobs();
    }

    /// Tells the system clock's timer when the next Job is due (after a write that may have started one),
    /// starting its task on the current Tokio runtime the first time a Job runs.
    pub(super) fn schedule_jobs(&self) {
        if self.shared.clock.is_fixed() {
            return;
        }
        let next = relock(&self.shared.state).jobs.timers.next();
        let timer = &self.shared.jobs;
        timer.next.send_if_modified(|current| {
            let changed = *current != next;
            *current = next;
            changed
        });
        if next.is_none() || timer.spawned.load(Ordering::Acquire) {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // Sync code (`seed`, `insert`) outside a runtime: the first request, always in one, starts it.
            return;
        };
        if !timer.spawned.swap(true, Ordering::AcqRel) {
            runtime.spawn(wait_for_jobs(
                Arc::downgrade(&self.shared),
                timer.next.subscribe(),
            ));
        }
    }

    /// Has the server act on the clock's time whenever the clock is advanced.
    pub(super) fn follow_clock(&self) {
        let server = Arc::downgrade(&self.shared);
        self.shared.clock.on_advance(move || {
            let Some(shared) = server.upgrade() else {
                return false;
            };
            ApiServer { shared }.finish_due_jobs();
            true
        });
    }
}

/// Sleeps until the next Job is due and finishes it, until the server (the sender of `next`) is dropped. Holds
/// the server only while it finishes Jobs.
async fn wait_for_jobs(server: Weak<Shared>, mut next: watch::Receiver<Option<Timestamp>>) {
    loop {
        let due = *next.borrow_and_update();
        // Due times are whole seconds, so the clock's stamp has reached one once the time has; a little later,
        // to be sure.
        let wait = due.map(|at| {
            Duration::try_from(at.duration_since(Timestamp::now())).unwrap_or_default()
                + Duration::from_millis(5)
        });
        tokio::select! {
            changed = next.changed() => {
                if changed.is_err() {
                    return;
                }
            }
            () = tokio::time::sleep(wait.unwrap_or_default()), if wait.is_some() => {
                let Some(shared) = server.upgrade() else {
                    return;
                };
                ApiServer { shared }.finish_due_jobs();
            }
        }
    }
}
