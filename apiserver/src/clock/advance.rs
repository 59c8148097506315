//! What a fixed [`Clock`](super::Clock) calls when it is advanced: each server on the clock acts on the time it reached (the
//! Jobs that came due finish) before `advance` returns, so a test that moves the clock sees the consequences
//! at once, in order, without waiting for a task.

use std::sync::{Arc, Mutex};

/// A callback that returns whether it is still wanted (its server is alive).
type Hook = Arc<dyn Fn() -> bool + Send + Sync>;

/// The callbacks of a clock, shared by its clones.
#[derive(Clone, Default)]
pub(crate) struct AdvanceHooks(Arc<Mutex<Vec<Hook>>>);

impl std::fmt::Debug for AdvanceHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0.lock().map(|hooks| hooks.len()).unwrap_or_default();
        f.debug_struct("AdvanceHooks").field("hooks", &n).finish()
    }
}

impl AdvanceHooks {
    /// Adds a hook, called on every advance until it returns `false`.
    pub(crate) fn push(&self, hook: impl Fn() -> bool + Send + Sync + 'static) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Arc::new(hook));
    }

    /// Calls every callback, outside the lock (a callback may read the clock), and forgets those no longer
    /// wanted.
    pub(crate) fn run(&self) {
        let hooks: Vec<Hook> = self.0.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let gone: Vec<Hook> = hooks.into_iter().filter(|hook| !hook()).collect();
        if !gone.is_empty() {
            self.0
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|hook| !gone.iter().any(|g| Arc::ptr_eq(g, hook)));
        }
    }
}
