//! The server's clock: the system's, or a manual one tests advance.

mod advance;

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use advance::AdvanceHooks;

/// The time the server stamps on objects (and counts the ages in `kubectl get` tables up to): the system clock,
/// or a manual one for reproducible tests. Clones share one time: advancing one advances them all.
///
/// ```
/// use k8s_openapi::jiff::{SignedDuration, Timestamp};
/// use kubewright_apiserver::Clock;
///
/// let start: Timestamp = "2025-01-01T00:00:00Z".parse().unwrap();
/// let clock = Clock::fixed(start);
/// let shared = clock.clone();
/// clock.advance(SignedDuration::from_mins(90));
/// assert_eq!(shared.now().to_string(), "2025-01-01T01:30:00Z");
/// ```
#[derive(Debug, Clone, Default)]
pub struct Clock {
    manual: Option<Arc<Mutex<Timestamp>>>,
    advanced: AdvanceHooks,
}

impl Clock {
    /// The system clock.
    pub fn system() -> Self {
        Self::default()
    }

    /// A clock that stays at `t` until advanced.
    pub fn fixed(t: Timestamp) -> Self {
        Self {
            manual: Some(Arc::new(Mutex::new(t))),
            ..Self::default()
        }
    }

    /// Moves a fixed clock by `by` (back when negative; it stops at the ends of [`Timestamp`]'s range); no
    /// effect on the system clock. Each server on the clock then acts on the time reached before this returns
    /// (the Jobs that came due finish).
    pub fn advance(&self, by: SignedDuration) {
        if let Some(m) = &self.manual {
            let mut t = m.lock().unwrap_or_else(|e| e.into_inner());
            *t = t.checked_add(by).unwrap_or(match by.is_negative() {
                true => Timestamp::MIN,
                false => Timestamp::MAX,
            });
        }
        self.advanced.run();
    }

    /// The current time.
    pub fn now(&self) -> Timestamp {
        match &self.manual {
            Some(m) => *m.lock().unwrap_or_else(|e| e.into_inner()),
            None => Timestamp::now(),
        }
    }

    /// The current time for the printers of `kubectl get` tables, which count ages with chrono.
    pub(crate) fn now_utc(&self) -> DateTime<Utc> {
        let nanos = self.now().as_nanosecond();
        let (secs, sub) = (
            nanos.div_euclid(1_000_000_000),
            nanos.rem_euclid(1_000_000_000),
        );
        i64::try_from(secs)
            .ok()
            .and_then(|secs| DateTime::<Utc>::from_timestamp(secs, u32::try_from(sub).ok()?))
            .unwrap_or_default()
    }

    /// The current time as kube-apiserver stamps it on objects: RFC 3339 in whole seconds, in UTC.
    pub(crate) fn stamp(&self) -> String {
        self.now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
    }

    /// Calls `hook` after each [`advance`](Clock::advance) of this clock or any of its clones, until `hook`
    /// returns `false`.
    pub(crate) fn on_advance(&self, hook: impl Fn() -> bool + Send + Sync + 'static) {
        self.advanced.push(hook);
    }

    /// Whether this is a fixed clock (it moves only when advanced).
    pub(crate) fn is_fixed(&self) -> bool {
        self.manual.is_some()
    }
}
