//! Health probes for an operator's Deployment: `/healthz` (liveness) and `/readyz` (readiness), served over
//! HTTP by [`serve`] from the state an [`Operator`](crate::Operator) keeps in its [`Health`].
//!
//! - `/readyz` answers 200 once every cache holds its first list, 503 before.
//! - `/healthz` answers 200 while the operator runs with all its controllers, 503 once a controller has ended
//!   (it only ends on a fatal error) or the operator has stopped.
//!
//! ```no_run
//! # async fn demo(operator: operator::Operator) -> Result<(), operator::probes::ProbeError> {
//! let health = operator.health();
//! let addr = "0.0.0.0:8081".parse().unwrap();
//! let probes = operator::probes::serve(addr, health).await?;
//! tokio::spawn(probes);
//! operator.run_until_signal().await.unwrap();
//! # Ok(()) }
//! ```

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use futures::future::BoxFuture;
use http_body_util::Full;
use hyper::{Response, StatusCode};

/// What the probes report: whether the caches are synced and whether the controllers run.
#[derive(Debug, Clone, Default)]
pub struct Health {
    state: Arc<State>,
}

#[derive(Debug, Default)]
struct State {
    synced: AtomicBool,
    running: AtomicBool,
    failed: AtomicBool,
    leader: AtomicBool,
}

impl Health {
    /// Whether every cache holds its first list.
    pub fn is_ready(&self) -> bool {
        self.state.synced.load(Ordering::Acquire)
    }

    /// Whether the operator runs with all its controllers.
    pub fn is_alive(&self) -> bool {
        self.state.running.load(Ordering::Acquire) && !self.state.failed.load(Ordering::Acquire)
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
        "/healthz" if health.is_alive() => (StatusCode::OK, "ok"),
        "/healthz" => (StatusCode::SERVICE_UNAVAILABLE, "a controller has ended"),
        "/readyz" if health.is_ready() => (StatusCode::OK, "ok"),
        "/readyz" => (StatusCode::SERVICE_UNAVAILABLE, "caches not synced"),
        _ => (StatusCode::NOT_FOUND, "not found"),
    };
    let mut response = Response::new(Full::new(Bytes::from_static(body.as_bytes())));
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

    #[tokio::test]
    async fn a_port_in_use_is_an_error_naming_it() {
        let taken = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = taken.local_addr().unwrap();
        let err = serve(addr, Health::default()).await.err().expect("in use");
        assert!(err.to_string().contains(&addr.to_string()), "{err}");
    }
}
