//! The work queue that runs a controller's passes: which parents are due, when, and how many passes run at
//! once.
//!
//! It keeps kube-runtime's rules (a parent runs in one pass at a time, a change during its pass runs it once
//! more after, the earliest of two requests wins, at most `concurrency` passes at once) with one difference: a
//! parent due now runs now. kube-runtime's scheduler puts every request, even one due at once, on a timer of
//! millisecond ticks, so a change reached its pass about 2 ms late on an idle operator (the first tick of the
//! queue, then the first of tokio's timer). Here only requests for later (a requeue after a delay, a retry's
//! backoff, a debounce) go on a timer.

use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::hash::Hash;
use std::pin::pin;
use std::time::Duration;

use futures::stream::{FuturesUnordered, Stream, StreamExt};
use tokio::time::Instant;
use tokio_util::time::DelayQueue;
use tokio_util::time::delay_queue::Key;

/// Which keys are due, which wait for a time, and which have a pass in flight.
pub(crate) struct Queue<K> {
    /// Added to the time of every request (kube-runtime's debounce).
    debounce: Duration,
    /// Keys due at a later time: their timer and the time.
    later: HashMap<K, (Key, Instant)>,
    timers: DelayQueue<K>,
    /// Keys due now, in the order they came due.
    due: VecDeque<K>,
    due_set: HashSet<K>,
    /// Keys with a pass in flight.
    running: HashSet<K>,
    /// Keys that came due while their pass ran: they run once more when it ends.
    again: HashSet<K>,
}

impl<K: Clone + Eq + Hash> Queue<K> {
    pub(crate) fn new(debounce: Duration) -> Self {
        Self {
            debounce,
            later: HashMap::new(),
            timers: DelayQueue::new(),
            due: VecDeque::new(),
            due_set: HashSet::new(),
            running: HashSet::new(),
            again: HashSet::new(),
        }
    }

    /// Asks for a pass over `key` at `at` (plus the debounce). A key already due stays as it is; one waiting
    /// for a later time moves to the earlier of the two.
    pub(crate) fn request(&mut self, key: K, at: Instant) {
        if self.due_set.contains(&key) || self.again.contains(&key) {
            return;
        }
        let at = at + self.debounce;
        if at <= Instant::now() {
            if let Some((timer, _)) = self.later.remove(&key) {
                self.timers.remove(&timer);
            }
            self.make_due(key);
            return;
        }
        match self.later.get_mut(&key) {
            Some((timer, when)) => {
                if at < *when {
                    self.timers.reset_at(timer, at);
                    *when = at;
                }
            }
            None => {
                let timer = self.timers.insert_at(key.clone(), at);
                self.later.insert(key, (timer, at));
            }
        }
    }

    fn make_due(&mut self, key: K) {
        if self.running.contains(&key) {
            self.again.insert(key);
        } else if self.due_set.insert(key.clone()) {
            self.due.push_back(key);
        }
    }

    /// The next key due, now marked running, unless `limit` passes (0: no limit) already run.
    pub(crate) fn take(&mut self, limit: usize) -> Option<K> {
        if limit != 0 && self.running.len() >= limit {
            return None;
        }
        let key = self.due.pop_front()?;
        self.due_set.remove(&key);
        self.running.insert(key.clone());
        Some(key)
    }

    /// The pass over `key` ended, asking to run again after `requeue_after`. A change that came during the
    /// pass runs it at once instead (that pass will say when it wants the next).
    pub(crate) fn finished(&mut self, key: K, requeue_after: Option<Duration>) {
        self.running.remove(&key);
        if self.again.remove(&key) {
            self.make_due(key);
        } else if let Some(after) = requeue_after {
            self.request(key, Instant::now() + after);
        }
    }

    /// Waits for the next timer of a key due later and makes that key due; pending while no timer is set.
    async fn expire(&mut self) {
        match std::future::poll_fn(|cx| self.timers.poll_expired(cx)).await {
            Some(expired) => {
                let key = expired.into_inner();
                self.later.remove(&key);
                self.make_due(key);
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
/// a pass resolves to how long after it ends the key should run again (`None`: not until a change).
pub(crate) async fn run<K, R, F, P>(
    requests: R,
    debounce: Duration,
    concurrency: u16,
    ready: impl Future<Output = ()>,
    stop: impl Future<Output = ()>,
    mut start: F,
) where
    K: Clone + Eq + Hash,
    R: Stream<Item = K>,
    F: FnMut(K) -> Option<P>,
    P: Future<Output = Option<Duration>>,
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
                Some(key) => queue.request(key, Instant::now()),
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

    #[tokio::test(start_paused = true)]
    async fn a_key_due_now_is_taken_without_waiting_for_a_timer() {
        let mut q = Queue::new(Duration::ZERO);
        q.request("a", Instant::now());
        assert_eq!(q.take(0), Some("a"));
        assert_eq!(q.take(0), None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_key_requested_twice_is_due_once_and_the_earlier_time_wins() {
        let mut q = Queue::new(Duration::ZERO);
        q.request("a", Instant::now() + Duration::from_secs(60));
        q.request("a", Instant::now() + Duration::from_secs(5));
        q.request("a", Instant::now() + Duration::from_secs(30));
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
        q.request("b", Instant::now() + Duration::from_secs(60));
        q.request("b", Instant::now());
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
        q.request("a", Instant::now());
        assert_eq!(q.take(0), Some("a"));
        q.request("a", Instant::now());
        q.request("a", Instant::now());
        assert_eq!(q.take(0), None, "one pass at a time per key");
        // The requeue the ending pass asked for gives way to the pass the change asks for now.
        q.finished("a", Some(Duration::from_secs(60)));
        assert_eq!(q.take(0), Some("a"));
        q.finished("a", None);
        assert_eq!(q.take(0), None);
    }

    #[tokio::test(start_paused = true)]
    async fn at_most_the_limit_runs_and_keys_run_in_the_order_they_came_due() {
        let mut q = Queue::new(Duration::ZERO);
        for k in ["a", "b", "c"] {
            q.request(k, Instant::now());
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
        q.request("a", Instant::now());
        tokio::time::advance(Duration::from_millis(50)).await;
        q.request("a", Instant::now());
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
        q.request("a", Instant::now());
        assert_eq!(q.take(0), Some("a"));
        q.finished("a", Some(Duration::from_secs(10)));
        assert_eq!(q.take(0), None);
        let started = Instant::now();
        q.expire().await;
        assert_eq!(started.elapsed(), Duration::from_secs(10));
        assert_eq!(q.take(0), Some("a"));
        // A requeue of zero is due at once.
        q.finished("a", Some(Duration::ZERO));
        assert_eq!(q.take(0), Some("a"));
    }

    /// What `run` did: the passes started, in order.
    type Log = Arc<Mutex<Vec<&'static str>>>;

    fn pass(log: &Log, key: &'static str, lasts: Duration) -> BoxFuture<'static, Option<Duration>> {
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
            requests.unbounded_send(key).unwrap();
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert!(log.lock().unwrap().is_empty(), "no pass before ready");
        ready_tx.send(()).unwrap();
        tokio::time::sleep(Duration::from_millis(1)).await;
        assert_eq!(*log.lock().unwrap(), ["a", "b"]);
        stop_tx.send(()).unwrap();
        tokio::time::sleep(Duration::from_millis(1)).await;
        requests.unbounded_send("c").unwrap();
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
                Some(async move { first.then_some(Duration::from_secs(30)) })
            },
        ));
        let sent = Instant::now();
        requests.unbounded_send("a").unwrap();
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
