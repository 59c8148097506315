//! The work queue that runs a controller's passes: which parents are due, when, in what order, and how many
//! passes run at once.
//!
//! It keeps kube-runtime's rules (a parent runs in one pass at a time, a change during its pass runs it once
//! more after, the earliest of two requests wins, at most `concurrency` passes at once) with two differences:
//! - A parent due now runs now. kube-runtime's scheduler puts every request, even one due at once, on a timer
//!   of millisecond ticks, so a change reached its pass about 2 ms late on an idle operator (the first tick of
//!   the queue, then the first of tokio's timer). Here only requests for later (a requeue after a delay, a
//!   retry's backoff, a debounce) go on a timer.
//! - Parents due for a change run before parents due only because a list replayed them, a resync came round or
//!   a child's status moved ([`Priority`], after controller-runtime's priority queue rule): an operator that
//!   starts on, or re-lists, 10,000 parents serves a change to one of them after the passes in flight, not after
//!   the other 9,999.

use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::hash::Hash;
use std::pin::pin;
use std::time::Duration;

use futures::stream::{FuturesUnordered, Stream, StreamExt};
use tokio::time::Instant;
use tokio_util::time::DelayQueue;
use tokio_util::time::delay_queue::Key;

/// Which parents' passes run first when several are due.
///
/// A parent is due for a pass with [`Priority::Low`] when nothing asked for it but a list replaying objects
/// the cache already had (the first list of a cache, a re-list after a lost watch: see the cache's replay
/// rule), a lagging trigger stream that reconciles everything, a periodic resync, or an update of a child that
/// kept its spec (the cache's `SpecKept` rule: a child's status written by its own controller); with
/// [`Priority::Normal`] for anything else (a change to the parent, its children's specs or the objects it
/// watches or references, a child's deletion, an external trigger, a requeue the pass asked for, a retry). Due parents run in the order
/// they came due within each priority, every normal one first; a low one that a change asks for again becomes
/// normal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Priority {
    /// Replays of lists, resyncs, children's status updates.
    Low,
    /// Changes.
    Normal,
}

impl Priority {
    /// [`Priority::Low`] when `replays`, else [`Priority::Normal`].
    pub(crate) fn replay_if(replays: bool) -> Self {
        if replays { Self::Low } else { Self::Normal }
    }
}

/// Which keys are due, which wait for a time, and which have a pass in flight.
pub(crate) struct Queue<K> {
    /// Added to the time of every request (kube-runtime's debounce).
    debounce: Duration,
    /// Keys due at a later time: their timer, the time and the priority they will be due with.
    later: HashMap<K, (Key, Instant, Priority)>,
    timers: DelayQueue<K>,
    /// Keys due now with each priority, in the order they came due. A key raised from low to normal stays in
    /// `low` too, and is skipped there (`due` says which entry counts).
    normal: VecDeque<K>,
    low: VecDeque<K>,
    /// The priority each due key is due with.
    due: HashMap<K, Priority>,
    /// Keys with a pass in flight.
    running: HashSet<K>,
    /// Keys that came due while their pass ran, with the highest priority asked: they run once more when it
    /// ends.
    again: HashMap<K, Priority>,
}

impl<K: Clone + Eq + Hash> Queue<K> {
    pub(crate) fn new(debounce: Duration) -> Self {
        Self {
            debounce,
            later: HashMap::new(),
            timers: DelayQueue::new(),
            normal: VecDeque::new(),
            low: VecDeque::new(),
            due: HashMap::new(),
            running: HashSet::new(),
            again: HashMap::new(),
        }
    }

    /// Asks for a pass over `key` at `at` (plus the debounce) with `priority`. A key already due stays where
    /// it is, unless this raises its priority; one waiting for a later time moves to the earlier of the two,
    /// with the higher priority of the two.
    pub(crate) fn request(&mut self, key: K, at: Instant, priority: Priority) {
        if let Some(p) = self.again.get_mut(&key) {
            *p = (*p).max(priority);
            return;
        }
        if let Some(p) = self.due.get(&key) {
            if *p < priority {
                self.make_due(key, priority);
            }
            return;
        }
        let at = at + self.debounce;
        if at <= Instant::now() {
            let priority = match self.later.remove(&key) {
                Some((timer, _, waiting)) => {
                    self.timers.remove(&timer);
                    waiting.max(priority)
                }
                None => priority,
            };
            self.make_due(key, priority);
            return;
        }
        match self.later.get_mut(&key) {
            Some((timer, when, waiting)) => {
                if at < *when {
                    self.timers.reset_at(timer, at);
                    *when = at;
                }
                *waiting = (*waiting).max(priority);
            }
            None => {
                let timer = self.timers.insert_at(key.clone(), at);
                self.later.insert(key, (timer, at, priority));
            }
        }
    }

    fn make_due(&mut self, key: K, priority: Priority) {
        if self.running.contains(&key) {
            let p = self.again.entry(key).or_insert(priority);
            *p = (*p).max(priority);
            return;
        }
        if self.due.get(&key).is_some_and(|p| *p >= priority) {
            return;
        }
        self.due.insert(key.clone(), priority);
        match priority {
            Priority::Normal => self.normal.push_back(key),
            Priority::Low => self.low.push_back(key),
        }
    }

    /// The next key due (normal ones first), now marked running, unless `limit` passes (0: no limit) already
    /// run.
    pub(crate) fn take(&mut self, limit: usize) -> Option<K> {
        if limit != 0 && self.running.len() >= limit {
            return None;
        }
        let key = loop {
            if let Some(key) = self.normal.pop_front() {
                // Every normal entry counts: a key is raised to normal once and leaves `due` when taken.
                if self.due.get(&key) == Some(&Priority::Normal) {
                    break key;
                }
            } else {
                let key = self.low.pop_front()?;
                // A key raised to normal (or taken since) left a stale entry here.
                if self.due.get(&key) == Some(&Priority::Low) {
                    break key;
                }
            }
        };
        self.due.remove(&key);
        self.running.insert(key.clone());
        Some(key)
    }

    /// The pass over `key` ended, asking to run again after a delay with a priority. A change that came
    /// during the pass runs it at once instead (that pass will say when it wants the next).
    pub(crate) fn finished(&mut self, key: K, next: Option<(Duration, Priority)>) {
        self.running.remove(&key);
        if let Some(priority) = self.again.remove(&key) {
            self.make_due(key, priority);
        } else if let Some((after, priority)) = next {
            self.request(key, Instant::now() + after, priority);
        }
    }

    /// Waits for the next timer of a key due later and makes that key due; pending while no timer is set.
    async fn expire(&mut self) {
        match std::future::poll_fn(|cx| self.timers.poll_expired(cx)).await {
            Some(expired) => {
                let key = expired.into_inner();
                if let Some((_, _, priority)) = self.later.remove(&key) {
                    self.make_due(key, priority);
                }
            }
            None => std::future::pending().await,
        }
    }

    /// How many passes run.
    pub(crate) fn running(&self) -> usize {
        self.running.len()
    }
}

/// Runs passes over the keys `requests` names, until `stop` resolves and the passes in flight end.
///
/// No pass starts before `ready` resolves (the parent cache's first list); requests are queued meanwhile.
/// `start` begins the pass over a key, or answers `None` when there is nothing to run (the parent is gone);
/// a pass resolves to how long after it ends the key should run again and with what priority (`None`: not
/// until a change).
pub(crate) async fn run<K, R, F, P>(
    requests: R,
    debounce: Duration,
    concurrency: u16,
    ready: impl Future<Output = ()>,
    stop: impl Future<Output = ()>,
    mut start: F,
) where
    K: Clone + Eq + Hash,
    R: Stream<Item = (K, Priority)>,
    F: FnMut(K) -> Option<P>,
    P: Future<Output = Option<(Duration, Priority)>>,
{
    let mut queue: Queue<K> = Queue::new(debounce);
    let mut in_flight = FuturesUnordered::new();
    let mut requests = pin!(requests);
    let mut ready = pin!(ready);
    let mut stop = pin!(stop);
    let (mut is_ready, mut stopping, mut requests_open) = (false, false, true);
    loop {
        if is_ready && !stopping {
            while let Some(key) = queue.take(usize::from(concurrency)) {
                match start(key.clone()) {
                    Some(pass) => in_flight.push(async move { (key, pass.await) }),
                    None => queue.finished(key, None),
                }
            }
        }
        if stopping && in_flight.is_empty() {
            break;
        }
        tokio::select! {
            biased;
            () = &mut stop, if !stopping => stopping = true,
            Some((key, requeue_after)) = in_flight.next(), if !in_flight.is_empty() => {
                queue.finished(key, if stopping { None } else { requeue_after });
            }
            () = &mut ready, if !is_ready => is_ready = true,
            next = requests.next(), if requests_open && !stopping => match next {
                Some((key, priority)) => queue.request(key, Instant::now(), priority),
                None => requests_open = false,
            },
            () = queue.expire(), if !stopping => {}
        }
    }
    debug_assert_eq!(queue.running(), 0);
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use futures::FutureExt;
    use futures::channel::mpsc;
    use futures::future::BoxFuture;

    use super::*;

    const N: Priority = Priority::Normal;
    const L: Priority = Priority::Low;

    #[tokio::test(start_paused = true)]
    async fn a_key_due_now_is_taken_without_waiting_for_a_timer() {
        let mut q = Queue::new(Duration::ZERO);
        q.request("a", Instant::now(), N);
        assert_eq!(q.take(0), Some("a"));
        assert_eq!(q.take(0), None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_key_requested_twice_is_due_once_and_the_earlier_time_wins() {
        let mut q = Queue::new(Duration::ZERO);
        q.request("a", Instant::now() + Duration::from_secs(60), N);
        q.request("a", Instant::now() + Duration::from_secs(5), N);
        q.request("a", Instant::now() + Duration::from_secs(30), N);
        assert_eq!(q.take(0), None);
        tokio::time::timeout(Duration::from_secs(6), q.expire())
            .await
            .expect("due after 5 s");
        assert_eq!(q.take(0), Some("a"));
        q.finished("a", None);
        // The later timers were replaced, not added.
        assert!(
            tokio::time::timeout(Duration::from_secs(120), q.expire())
                .await
                .is_err()
        );
        // A request for now overrides one for later.
        q.request("b", Instant::now() + Duration::from_secs(60), N);
        q.request("b", Instant::now(), N);
        assert_eq!(q.take(0), Some("b"));
        assert!(
            tokio::time::timeout(Duration::from_secs(120), q.expire())
                .await
                .is_err()
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_change_during_a_pass_runs_the_key_once_more_after_it() {
        let mut q = Queue::new(Duration::ZERO);
        q.request("a", Instant::now(), N);
        assert_eq!(q.take(0), Some("a"));
        q.request("a", Instant::now(), N);
        q.request("a", Instant::now(), N);
        assert_eq!(q.take(0), None, "one pass at a time per key");
        // The requeue the ending pass asked for gives way to the pass the change asks for now.
        q.finished("a", Some((Duration::from_secs(60), N)));
        assert_eq!(q.take(0), Some("a"));
        q.finished("a", None);
        assert_eq!(q.take(0), None);
    }

    #[tokio::test(start_paused = true)]
    async fn at_most_the_limit_runs_and_keys_run_in_the_order_they_came_due() {
        let mut q = Queue::new(Duration::ZERO);
        for k in ["a", "b", "c"] {
            q.request(k, Instant::now(), N);
        }
        assert_eq!(q.take(2), Some("a"));
        assert_eq!(q.take(2), Some("b"));
        assert_eq!(q.take(2), None);
        q.finished("a", None);
        assert_eq!(q.take(2), Some("c"));
        assert_eq!(q.running(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_debounce_delays_a_change_and_merges_the_ones_within_it() {
        let mut q = Queue::new(Duration::from_millis(100));
        q.request("a", Instant::now(), N);
        tokio::time::advance(Duration::from_millis(50)).await;
        q.request("a", Instant::now(), N);
        assert_eq!(q.take(0), None);
        let started = Instant::now();
        q.expire().await;
        assert_eq!(started.elapsed(), Duration::from_millis(50));
        assert_eq!(q.take(0), Some("a"));
        q.finished("a", None);
        assert!(
            tokio::time::timeout(Duration::from_secs(1), q.expire())
                .await
                .is_err()
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_requeue_runs_the_key_after_its_delay() {
        let mut q = Queue::new(Duration::ZERO);
        q.request("a", Instant::now(), N);
        assert_eq!(q.take(0), Some("a"));
        q.finished("a", Some((Duration::from_secs(10), N)));
        assert_eq!(q.take(0), None);
        let started = Instant::now();
        q.expire().await;
        assert_eq!(started.elapsed(), Duration::from_secs(10));
        assert_eq!(q.take(0), Some("a"));
        // A requeue of zero is due at once.
        q.finished("a", Some((Duration::ZERO, N)));
        assert_eq!(q.take(0), Some("a"));
    }

    #[tokio::test(start_paused = true)]
    async fn changes_run_before_replays_and_a_replayed_key_asked_for_by_a_change_moves_up() {
        let mut q = Queue::new(Duration::ZERO);
        for k in ["l1", "l2", "l3", "l4"] {
            q.request(k, Instant::now(), L);
        }
        q.request("n1", Instant::now(), N);
        // A change to a key a list replayed raises it, once.
        q.request("l3", Instant::now(), N);
        q.request("l3", Instant::now(), N);
        // A replay of a key due for a change leaves it where it is.
        q.request("n1", Instant::now(), L);
        let order: Vec<_> = std::iter::from_fn(|| q.take(0)).collect();
        assert_eq!(order, ["n1", "l3", "l1", "l2", "l4"]);
        for k in order {
            q.finished(k, None);
        }
        // A key raised and taken leaves a stale low entry: it does not run twice.
        q.request("l1", Instant::now(), L);
        assert_eq!(q.take(0), Some("l1"));
        assert_eq!(q.take(0), None);
    }

    #[tokio::test(start_paused = true)]
    async fn the_priority_of_a_change_during_a_pass_or_a_timer_is_kept() {
        let mut q = Queue::new(Duration::ZERO);
        q.request("a", Instant::now(), L);
        assert_eq!(q.take(0), Some("a"));
        q.request("a", Instant::now(), L);
        q.request("a", Instant::now(), N);
        q.request("b", Instant::now(), L);
        q.finished("a", None);
        assert_eq!(
            q.take(0),
            Some("a"),
            "the change during the pass runs first"
        );
        q.finished("a", Some((Duration::from_secs(5), L)));
        // A resync asked for later, then a change asked for later still: the earlier time, the higher priority.
        q.request("a", Instant::now() + Duration::from_secs(9), N);
        q.expire().await;
        assert_eq!(q.take(0), Some("a"));
        assert_eq!(q.take(0), Some("b"));
    }

    /// What `run` did: the passes started, in order.
    type Log = Arc<Mutex<Vec<&'static str>>>;

    fn pass(
        log: &Log,
        key: &'static str,
        lasts: Duration,
    ) -> BoxFuture<'static, Option<(Duration, Priority)>> {
        log.lock().unwrap().push(key);
        async move {
            tokio::time::sleep(lasts).await;
            None
        }
        .boxed()
    }

    #[tokio::test(start_paused = true)]
    async fn run_waits_for_ready_then_ends_after_the_passes_in_flight_when_stopped() {
        let log: Log = Arc::default();
        let (requests, rx) = mpsc::unbounded();
        let (ready_tx, ready_rx) = tokio::sync::oneshot::channel::<()>();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let passes = log.clone();
        let ran = tokio::spawn(run(
            rx,
            Duration::ZERO,
            0,
            async move {
                let _ = ready_rx.await;
            },
            async move {
                let _ = stop_rx.await;
            },
            move |key| match key {
                "gone" => None,
                key => Some(pass(&passes, key, Duration::from_secs(5))),
            },
        ));
        for key in ["a", "gone", "b"] {
            requests.unbounded_send((key, N)).unwrap();
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(log.lock().unwrap().is_empty(), "no pass before ready");
        ready_tx.send(()).unwrap();
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert_eq!(*log.lock().unwrap(), ["a", "b"]);
        stop_tx.send(()).unwrap();
        tokio::time::sleep(Duration::from_millis(1)).await;
        requests.unbounded_send(("c", N)).unwrap();
        assert!(!ran.is_finished(), "the passes in flight end first");
        let started = Instant::now();
        ran.await.unwrap();
        assert!(started.elapsed() >= Duration::from_secs(3));
        assert_eq!(
            *log.lock().unwrap(),
            ["a", "b"],
            "nothing starts once stopped"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn run_starts_a_pass_for_a_change_at_once_and_honours_requeues() {
        let log: Log = Arc::default();
        let (requests, rx) = mpsc::unbounded();
        let passes = log.clone();
        let first = Arc::new(Mutex::new(true));
        tokio::spawn(run(
            rx,
            Duration::ZERO,
            1,
            async {},
            std::future::pending(),
            move |key| {
                passes.lock().unwrap().push(key);
                let first = std::mem::replace(&mut *first.lock().unwrap(), false);
                Some(async move { first.then_some((Duration::from_secs(30), N)) })
            },
        ));
        let sent = Instant::now();
        requests.unbounded_send(("a", N)).unwrap();
        // The clock is paused and only moves when every task waits for a timer: the pass starts with no
        // timer at all.
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert_eq!(*log.lock().unwrap(), ["a"]);
        assert_eq!(sent.elapsed(), Duration::ZERO);
        tokio::time::sleep(Duration::from_secs(29)).await;
        assert_eq!(*log.lock().unwrap(), ["a"]);
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_eq!(*log.lock().unwrap(), ["a", "a"], "requeued after 30 s");
    }
}
