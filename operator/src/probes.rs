//! Health probes for an operator's Deployment: `/healthz` (liveness) and `/readyz` (readiness), served over
//! HTTP by [`serve`] from the state an [`Operator`](crate::Operator) keeps in its [`Health`].
//!
//! - `/readyz` answers 200 once every cache holds its first list, 503 before.
//! - `/healthz` answers 200 while the operator runs with all its controllers, 503 once a controller has ended
//!   (it only ends on a fatal error), while a controller is stuck (one of its passes has run longer than
//!   [`Health::stuck_after`], 10 minutes by default: a step awaiting something that never comes), or once the
//!   operator has stopped. The body says which.
//!
//! ```no_run
//! # async fn demo(operator: kubewright::Operator) -> Result<(), kubewright::probes::ProbeError> {
//! let health = operator.health();
//! let addr = "0.0.0.0:8081".parse().unwrap();
//! let probes = kubewright::probes::serve(addr, health).await?;
//! tokio::spawn(probes);
//! operator.run_until_signal().await.unwrap();
//! # Ok(()) }
//! ```

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::future::BoxFuture;
use http_body_util::Full;
use hyper::{Response, StatusCode};

/// What the probes report: whether the caches are synced and whether the controllers run.
#[derive(Debug, Clone, Default)]
pub struct Health {
    state: Arc<State>,
}

#[derive(Debug)]
struct State {
    synced: AtomicBool,
    running: AtomicBool,
    failed: AtomicBool,
    leader: AtomicBool,
    /// Milliseconds after which a running pass counts as stuck.
    stuck_after: AtomicU64,
    /// The passes running now, by a number of their own.
    passes: Mutex<HashMap<u64, Pass>>,
    next_pass: AtomicU64,
}

impl Default for State {
    fn default() -> Self {
        Self {
            synced: AtomicBool::default(),
            running: AtomicBool::default(),
            failed: AtomicBool::default(),
            leader: AtomicBool::default(),
            stuck_after: AtomicU64::new(DEFAULT_STUCK_AFTER.as_millis() as u64),
            passes: Mutex::default(),
            next_pass: AtomicU64::default(),
        }
    }
}

/// How long a pass may run before its controller counts as stuck, unless [`Health::set_stuck_after`] says
/// otherwise.
pub const DEFAULT_STUCK_AFTER: Duration = Duration::from_secs(600);

/// A pass in flight: its controller, its parent and when it began.
#[derive(Debug)]
struct Pass {
    controller: String,
    parent: String,
    started: Instant,
}

/// Marks a pass as running until dropped ([`Health::pass_started`]).
#[derive(Debug)]
pub(crate) struct PassGuard {
    state: Arc<State>,
    id: u64,
}

impl Drop for PassGuard {
    fn drop(&mut self) {
        self.state
            .passes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.id);
    }
}

/// Why the liveness probe fails.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unhealthy {
    /// The operator is not running (not started yet, or stopped).
    NotRunning,
    /// A controller ended before shutdown (only a fatal error ends one).
    ControllerEnded,
    /// A pass has run longer than [`Health::stuck_after`].
    Stuck {
        /// The controller running it.
        controller: String,
        /// Its parent, as `namespace/name`.
        parent: String,
        /// How long it has run.
        running_for: Duration,
    },
}

impl std::fmt::Display for Unhealthy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unhealthy::NotRunning => f.write_str("the operator is not running"),
            Unhealthy::ControllerEnded => f.write_str("a controller has ended"),
            Unhealthy::Stuck {
                controller,
                parent,
                running_for,
            } => write!(
                f,
                "controller {controller} is stuck: its pass over {parent} has run for {}s",
                running_for.as_secs()
            ),
        }
    }
}

impl Health {
    /// Whether every cache holds its first list.
    pub fn is_ready(&self) -> bool {
        self.state.synced.load(Ordering::Acquire)
    }

    /// Whether the operator runs with all its controllers, none of them stuck.
    pub fn is_alive(&self) -> bool {
        self.liveness().is_ok()
    }

    /// Whether the operator runs with all its controllers, none of them stuck, or why not (the longest-running
    /// stuck pass when several are).
    pub fn liveness(&self) -> Result<(), Unhealthy> {
        if self.state.failed.load(Ordering::Acquire) {
            return Err(Unhealthy::ControllerEnded);
        }
        if !self.state.running.load(Ordering::Acquire) {
            return Err(Unhealthy::NotRunning);
        }
        let limit = self.stuck_after();
        let passes = self.state.passes.lock().unwrap_or_else(|e| e.into_inner());
        match passes.values().min_by_key(|p| p.started) {
            Some(p) if p.started.elapsed() > limit => Err(Unhealthy::Stuck {
                controller: p.controller.clone(),
                parent: p.parent.clone(),
                running_for: p.started.elapsed(),
            }),
            _ => Ok(()),
        }
    }

    /// How long a pass may run before its controller counts as stuck and the liveness probe fails.
    pub fn stuck_after(&self) -> Duration {
        Duration::from_millis(self.state.stuck_after.load(Ordering::Acquire))
    }

    /// Sets how long a pass may run before its controller counts as stuck ([`DEFAULT_STUCK_AFTER`] unless
    /// set): longer than any pass should take, including its steps' own timeouts.
    pub fn set_stuck_after(&self, limit: Duration) {
        let millis = u64::try_from(limit.as_millis()).unwrap_or(u64::MAX);
        self.state.stuck_after.store(millis, Ordering::Release);
    }

    /// Records a pass of `controller` over `parent` as running until the guard is dropped.
    pub(crate) fn pass_started(&self, controller: &str, parent: String) -> PassGuard {
        let id = self.state.next_pass.fetch_add(1, Ordering::Relaxed);
        self.state
            .passes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                id,
                Pass {
                    controller: controller.to_string(),
                    parent,
                    started: Instant::now(),
                },
            );
        PassGuard {
            state: self.state.clone(),
            id,
        }
    }

    /// Whether this replica holds the leader election's Lease (always false without leader election).
    pub fn is_leader(&self) -> bool {
        self.state.leader.load(Ordering::Acquire)
    }

    pub(crate) fn set_leader(&self, leader: bool) {
        self.state.leader.store(leader, Ordering::Release);
    }

    pub(crate) fn set_synced(&self) {
        self.state.synced.store(true, Ordering::Release);
    }

    pub(crate) fn set_running(&self, running: bool) {
        self.state.running.store(running, Ordering::Release);
    }

    pub(crate) fn set_failed(&self) {
        self.state.failed.store(true, Ordering::Release);
    }
}

/// The probes could not be served.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// The address could not be bound (in use, or not allowed).
    #[error("cannot serve the health probes on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Binds `addr` and returns the server, to spawn: it answers `/healthz` and `/readyz` from `health` (404 for
/// any other path) until dropped. Binding happens here, so a port in use is an error before anything runs.
pub async fn serve(addr: SocketAddr, health: Health) -> Result<BoxFuture<'static, ()>, ProbeError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ProbeError::Bind { addr, source })?;
    tracing::info!(addr = %addr, "serving health probes (/healthz, /readyz)");
    Ok(crate::serving::serve(
        listener,
        "health probe",
        move |path| answer(&health, path),
    ))
}

fn answer(health: &Health, path: &str) -> Response<Full<Bytes>> {
    let (status, body) = match path {
        "/healthz" => match health.liveness() {
            Ok(()) => (StatusCode::OK, "ok".to_string()),
            Err(why) => (StatusCode::SERVICE_UNAVAILABLE, why.to_string()),
        },
        "/readyz" if health.is_ready() => (StatusCode::OK, "ok".to_string()),
        "/readyz" => (StatusCode::SERVICE_UNAVAILABLE, "caches not synced".into()),
        _ => (StatusCode::NOT_FOUND, "not found".into()),
    };
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() = status;
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_follow_the_state() {
        let health = Health::default();
        assert_eq!(
            answer(&health, "/readyz").status(),
            StatusCode::SERVICE_UNAVAILABLE
        );
        assert_eq!(
            answer(&health, "/healthz").status(),
            StatusCode::SERVICE_UNAVAILABLE
        );
        health.set_running(true);
        health.set_synced();
        assert_eq!(answer(&health, "/readyz").status(), StatusCode::OK);
        assert_eq!(answer(&health, "/healthz").status(), StatusCode::OK);
        assert_eq!(answer(&health, "/metrics").status(), StatusCode::NOT_FOUND);
        health.set_failed();
        assert_eq!(
            answer(&health, "/healthz").status(),
            StatusCode::SERVICE_UNAVAILABLE
        );
    }

    #[test]
    fn a_pass_running_too_long_makes_its_controller_stuck_until_it_ends() {
        let health = Health::default();
        health.set_running(true);
        assert_eq!(health.stuck_after(), DEFAULT_STUCK_AFTER);
        health.set_stuck_after(Duration::from_millis(20));
        let quick = health.pass_started("webapp-controller", "default/quick".into());
        drop(quick);
        let slow = health.pass_started("webapp-controller", "default/slow".into());
        assert_eq!(health.liveness(), Ok(()));
        std::thread::sleep(Duration::from_millis(30));
        let Err(Unhealthy::Stuck {
            controller, parent, ..
        }) = health.liveness()
        else {
            panic!("not stuck: {:?}", health.liveness());
        };
        assert_eq!(
            (controller.as_str(), parent.as_str()),
            ("webapp-controller", "default/slow")
        );
        let response = answer(&health, "/healthz");
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        drop(slow);
        assert_eq!(health.liveness(), Ok(()));
    }

    #[tokio::test]
    async fn a_port_in_use_is_an_error_naming_it() {
        let taken = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = taken.local_addr().unwrap();
        let err = serve(addr, Health::default()).await.err().expect("in use");
        assert!(err.to_string().contains(&addr.to_string()), "{err}");
    }
}
