//! Prometheus metrics with controller-runtime's names and labels, so its dashboards and alerts work
//! unchanged, plus this framework's own; served in the OpenMetrics text format by [`serve`] on `/metrics`.
//!
//! | metric | labels | what |
//! | --- | --- | --- |
//! | `controller_runtime_reconcile_total` | `controller`, `result` | passes, by `success`, `error`, `requeue`, `requeue_after` |
//! | `controller_runtime_reconcile_errors_total` | `controller` | passes that failed |
//! | `controller_runtime_reconcile_time_seconds` | `controller` | pass duration (histogram) |
//! | `controller_runtime_max_concurrent_reconciles` | `controller` | the controller's concurrency |
//! | `controller_runtime_active_workers` | `controller` | passes running now |
//! | `workqueue_depth` | `name` | parents due for a pass and not started |
//! | `workqueue_adds_total` | `name` | changes that made a parent due (its own, its children's, its references') |
//! | `workqueue_retries_total` | `name` | passes requeued after an error or a conflict |
//! | `workqueue_queue_duration_seconds` | `name` | from due to started (histogram) |
//! | `workqueue_work_duration_seconds` | `name` | pass duration (histogram) |
//! | `rest_client_requests_total` | `code`, `method` | API requests of clients built by [`crate::client::client`] |
//! | `leader_election_master_status` | `name` | 1 while this replica holds the Lease `name` |
//! | `operator_writes_total` | `controller`, `verb`, `kind` | writes the controllers made |
//! | `operator_events_total` | `controller`, `type` | events the controllers recorded |
//! | `operator_passes_without_writes_total` | `controller` | passes that ended well and wrote nothing: every child and the status were already as desired |
//! | `operator_child_corrections_total` | `controller`, `kind` | children updated to match their desired state (drifted, or their parent changed) |
//! | `operator_child_fights_total` | `controller`, `kind` | fights begun: a child corrected again and again because another writer keeps changing it (`reconcilers::fights`) |
//! | `operator_shard_parents` | `kind`, `shard` | parents each member of a sharded group owns, as the assigner last counted (on the replica that assigns) |
//! | `operator_shard_moves_total` | `kind`, `move` | the assigner's moves: `assign`, `drain`, `cancel`, `reassign` |
//! | `operator_shard_handovers_total` | `controller` | parents this member handed over when asked (the drain label) |
//!
//! One registry per process, as controller-runtime's: [`Metrics::global`].
//!
//! ```no_run
//! # async fn demo() -> Result<(), kubewright::metrics::MetricsError> {
//! let addr = "0.0.0.0:8080".parse().unwrap();
//! tokio::spawn(kubewright::metrics::serve(addr, kubewright::metrics::Metrics::global()).await?);
//! # Ok(()) }
//! ```

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use futures::future::BoxFuture;
use http_body_util::Full;
use hyper::{Response, StatusCode};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

type Labels = Vec<(&'static str, String)>;
type HistogramFamily = Family<Labels, Histogram, fn() -> Histogram>;

/// The process's metrics: see the [module documentation](self).
#[derive(Clone)]
pub struct Metrics {
    registry: Arc<Registry>,
    reconcile_total: Family<Labels, Counter>,
    reconcile_errors: Family<Labels, Counter>,
    reconcile_time: HistogramFamily,
    max_concurrent: Family<Labels, Gauge>,
    active_workers: Family<Labels, Gauge>,
    depth: Family<Labels, Gauge>,
    adds: Family<Labels, Counter>,
    retries: Family<Labels, Counter>,
    queue_duration: HistogramFamily,
    work_duration: HistogramFamily,
    requests: Family<Labels, Counter>,
    leader: Family<Labels, Gauge>,
    writes: Family<Labels, Counter>,
    events: Family<Labels, Counter>,
    corrections: Family<Labels, Counter>,
    without_writes: Family<Labels, Counter>,
    foreign_not_ready: Family<Labels, Gauge>,
    certificate_reloads: Family<Labels, Counter>,
    fights: Family<Labels, Counter>,
    shard_parents: Family<Labels, Gauge>,
    shard_moves: Family<Labels, Counter>,
    handovers: Family<Labels, Counter>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

/// Durations from 1 ms to about 33 s.
fn seconds_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.001, 2.0, 16))
}

impl Metrics {
    /// The process's metrics, which the runtime records into.
    pub fn global() -> Metrics {
        static GLOBAL: OnceLock<Metrics> = OnceLock::new();
        GLOBAL.get_or_init(Metrics::new).clone()
    }

    fn new() -> Metrics {
        let mut registry = Registry::default();
        let histogram = || HistogramFamily::new_with_constructor(seconds_histogram as fn() -> _);
        let m = Metrics {
            registry: Arc::new(Registry::default()),
            reconcile_total: Family::default(),
            reconcile_errors: Family::default(),
            reconcile_time: histogram(),
            max_concurrent: Family::default(),
            active_workers: Family::default(),
            depth: Family::default(),
            adds: Family::default(),
            retries: Family::default(),
            queue_duration: histogram(),
            work_duration: histogram(),
            requests: Family::default(),
            leader: Family::default(),
            writes: Family::default(),
            events: Family::default(),
            corrections: Family::default(),
            without_writes: Family::default(),
            foreign_not_ready: Family::default(),
            certificate_reloads: Family::default(),
            fights: Family::default(),
            shard_parents: Family::default(),
            shard_moves: Family::default(),
            handovers: Family::default(),
        };
        registry.register(
            "operator_child_fights",
            "Fights begun over a child's fields with another writer",
            m.fights.clone(),
        );
        registry.register(
            "operator_shard_parents",
            "Parents each member of a sharded group owns, as the assigner last counted",
            m.shard_parents.clone(),
        );
        registry.register(
            "operator_shard_moves",
            "Moves of parents between the members of a sharded group, by the assigner",
            m.shard_moves.clone(),
        );
        registry.register(
            "operator_shard_handovers",
            "Parents this member handed over to another when asked",
            m.handovers.clone(),
        );
        // Counters are registered without `_total`: the OpenMetrics encoding adds it.
        let r = &mut registry;
        r.register(
            "controller_runtime_reconcile",
            "Total number of reconciliations per controller",
            m.reconcile_total.clone(),
        );
        r.register(
            "controller_runtime_reconcile_errors",
            "Total number of reconciliation errors per controller",
            m.reconcile_errors.clone(),
        );
        r.register(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            m.reconcile_time.clone(),
        );
        r.register(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            m.max_concurrent.clone(),
        );
        r.register(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            m.active_workers.clone(),
        );
        r.register(
            "workqueue_depth",
            "Current depth of workqueue",
            m.depth.clone(),
        );
        r.register(
            "workqueue_adds",
            "Total number of adds handled by workqueue",
            m.adds.clone(),
        );
        r.register(
            "workqueue_retries",
            "Total number of retries handled by workqueue",
            m.retries.clone(),
        );
        r.register(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            m.queue_duration.clone(),
        );
        r.register(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes",
            m.work_duration.clone(),
        );
        r.register(
            "rest_client_requests",
            "Number of HTTP requests, partitioned by status code and method",
            m.requests.clone(),
        );
        r.register(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master",
            m.leader.clone(),
        );
        r.register(
            "operator_writes",
            "Writes made by the controllers, by verb and kind",
            m.writes.clone(),
        );
        r.register(
            "operator_events",
            "Events recorded by the controllers, by type",
            m.events.clone(),
        );
        r.register(
            "operator_child_corrections",
            "Children updated to match their desired state (drifted, or their parent changed)",
            m.corrections.clone(),
        );
        r.register(
            "operator_passes_without_writes",
            "Passes that ended well and wrote nothing (every child and the status already as desired)",
            m.without_writes.clone(),
        );
        r.register(
            "operator_foreign_parents_not_ready",
            "Parents whose status the operator does not write (built-in and foreign kinds) that are not ready",
            m.foreign_not_ready.clone(),
        );
        r.register_collector(Box::new(crate::process_metrics::ProcessCollector));
        r.register(
            "operator_certificate_reloads",
            "Changes of a served certificate's files, by result (success: served; error: unusable, the previous one kept)",
            m.certificate_reloads.clone(),
        );
        Metrics {
            registry: Arc::new(registry),
            ..m
        }
    }

    /// Counts a change of a served certificate's files: used (`ok`) or not.
    pub(crate) fn certificate_reloaded(&self, ok: bool) {
        let result = if ok { "success" } else { "error" };
        self.certificate_reloads
            .get_or_create(&vec![("result", result.to_string())])
            .inc();
    }

    /// Every metric in the OpenMetrics text format.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a `String` cannot fail.
        let _ = encode(&mut out, &self.registry);
        out
    }

    pub(crate) fn controller_started(&self, controller: &str, concurrency: u16) {
        self.max_concurrent
            .get_or_create(&controller_label(controller))
            .set(i64::from(concurrency));
        // Present from the start, at zero.
        drop(
            self.active_workers
                .get_or_create(&controller_label(controller)),
        );
        drop(self.depth.get_or_create(&name_label(controller)));
        for result in ["success", "error", "requeue", "requeue_after"] {
            drop(self.reconcile_total.get_or_create(&vec![
                ("controller", controller.to_string()),
                ("result", result.to_string()),
            ]));
        }
        drop(
            self.reconcile_errors
                .get_or_create(&controller_label(controller)),
        );
        drop(
            self.without_writes
                .get_or_create(&controller_label(controller)),
        );
    }

    /// A pass of `controller` ended well having written nothing.
    pub(crate) fn pass_wrote_nothing(&self, controller: &str) {
        self.without_writes
            .get_or_create(&controller_label(controller))
            .inc();
    }

    /// A pass starts after `queued` seconds in the queue (`None`: not known to have been queued).
    pub(crate) fn pass_started(&self, controller: &str, queued: Option<f64>) {
        self.active_workers
            .get_or_create(&controller_label(controller))
            .inc();
        if let Some(queued) = queued {
            self.queue_duration
                .get_or_create(&name_label(controller))
                .observe(queued);
        }
    }

    /// A pass ended after `seconds` with `result` (`success`, `error`, `requeue`, `requeue_after`).
    pub(crate) fn pass_ended(&self, controller: &str, seconds: f64, result: &str) {
        self.active_workers
            .get_or_create(&controller_label(controller))
            .dec();
        self.reconcile_time
            .get_or_create(&controller_label(controller))
            .observe(seconds);
        self.work_duration
            .get_or_create(&name_label(controller))
            .observe(seconds);
        self.reconcile_total
            .get_or_create(&vec![
                ("controller", controller.to_string()),
                ("result", result.to_string()),
            ])
            .inc();
        if result == "error" {
            self.reconcile_errors
                .get_or_create(&controller_label(controller))
                .inc();
        }
    }

    pub(crate) fn queued(&self, controller: &str, depth: usize) {
        self.adds.get_or_create(&name_label(controller)).inc();
        self.set_depth(controller, depth);
    }

    pub(crate) fn set_depth(&self, controller: &str, depth: usize) {
        self.depth
            .get_or_create(&name_label(controller))
            .set(i64::try_from(depth).unwrap_or(i64::MAX));
    }

    pub(crate) fn retried(&self, controller: &str) {
        self.retries.get_or_create(&name_label(controller)).inc();
    }

    pub(crate) fn request(&self, method: &str, code: &str) {
        self.requests
            .get_or_create(&vec![
                ("code", code.to_string()),
                ("method", method.to_string()),
            ])
            .inc();
    }

    pub(crate) fn fight(&self, controller: &str, kind: &str) {
        self.fights
            .get_or_create(&vec![
                ("controller", controller.to_string()),
                ("kind", kind.to_string()),
            ])
            .inc();
    }

    pub(crate) fn handed_over(&self, controller: &str) {
        self.handovers
            .get_or_create(&vec![("controller", controller.to_string())])
            .inc();
    }

    pub(crate) fn shard_moves(&self, kind: &str, what: &str, n: usize) {
        self.shard_moves
            .get_or_create(&vec![
                ("kind", kind.to_string()),
                ("move", what.to_string()),
            ])
            .inc_by(n as u64);
    }

    /// Sets the parents of `kind` each member owns; members no longer counted drop to 0.
    pub(crate) fn shard_parents(
        &self,
        kind: &str,
        counts: &std::collections::BTreeMap<String, usize>,
    ) {
        for (shard, n) in counts {
            self.shard_parents
                .get_or_create(&vec![("kind", kind.to_string()), ("shard", shard.clone())])
                .set(i64::try_from(*n).unwrap_or(i64::MAX));
        }
    }

    pub(crate) fn leading(&self, lease: &str, leading: bool) {
        self.leader
            .get_or_create(&vec![("name", lease.to_string())])
            .set(i64::from(leading));
    }

    pub(crate) fn wrote(&self, controller: &str, verb: &str, kind: &str) {
        self.writes
            .get_or_create(&vec![
                ("controller", controller.to_string()),
                ("verb", verb.to_string()),
                ("kind", kind.to_string()),
            ])
            .inc();
    }

    pub(crate) fn event(&self, controller: &str, warning: bool) {
        let type_ = if warning { "Warning" } else { "Normal" };
        self.events
            .get_or_create(&vec![
                ("controller", controller.to_string()),
                ("type", type_.to_string()),
            ])
            .inc();
    }

    pub(crate) fn foreign_not_ready(&self, controller: &str, parents: usize) {
        self.foreign_not_ready
            .get_or_create(&controller_label(controller))
            .set(i64::try_from(parents).unwrap_or(i64::MAX));
    }

    pub(crate) fn corrected(&self, controller: &str, kind: &str) {
        self.corrections
            .get_or_create(&vec![
                ("controller", controller.to_string()),
                ("kind", kind.to_string()),
            ])
            .inc();
    }
}

fn controller_label(controller: &str) -> Labels {
    vec![("controller", controller.to_string())]
}

fn name_label(controller: &str) -> Labels {
    vec![("name", controller.to_string())]
}

/// The metrics could not be served.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    /// The address could not be bound (in use, or not allowed).
    #[error("cannot serve the metrics on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

pub use crate::metrics_auth::{REVIEW_TTL, serve_secure};

/// Binds `addr` and returns the server, to spawn: `/metrics` answers `metrics` in the OpenMetrics text
/// format (404 for any other path) until dropped. A port in use is an error here, before anything runs.
pub async fn serve(
    addr: SocketAddr,
    metrics: Metrics,
) -> Result<BoxFuture<'static, ()>, MetricsError> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| MetricsError::Bind { addr, source })?;
    tracing::info!(addr = %addr, "serving metrics (/metrics)");
    Ok(crate::serving::serve(listener, "metrics", move |path| {
        answer(&metrics, path)
    }))
}

pub(crate) fn answer(metrics: &Metrics, path: &str) -> Response<Full<Bytes>> {
    let mut response = match path {
        "/metrics" => {
            let mut r = Response::new(Full::new(Bytes::from(metrics.encode())));
            r.headers_mut().insert(
                hyper::header::CONTENT_TYPE,
                hyper::header::HeaderValue::from_static(
                    "application/openmetrics-text; version=1.0.0; charset=utf-8",
                ),
            );
            r
        }
        _ => Response::new(Full::new(Bytes::from_static(b"not found"))),
    };
    if path != "/metrics" {
        *response.status_mut() = StatusCode::NOT_FOUND;
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_labels_are_controller_runtimes() {
        let m = Metrics::new();
        m.controller_started("web", 16);
        m.pass_started("web", Some(0.01));
        m.pass_ended("web", 0.02, "success");
        m.pass_started("web", None);
        m.pass_ended("web", 0.5, "error");
        m.queued("web", 3);
        m.retried("web");
        m.request("PATCH", "200");
        m.leading("web-leader", true);
        m.wrote("web", "apply", "Deployment");
        m.event("web", false);
        m.corrected("web", "Service");
        m.pass_wrote_nothing("web");
        let text = m.encode();
        for line in [
            r#"controller_runtime_reconcile_total{controller="web",result="success"} 1"#,
            r#"controller_runtime_reconcile_total{controller="web",result="error"} 1"#,
            r#"controller_runtime_reconcile_total{controller="web",result="requeue"} 0"#,
            r#"controller_runtime_reconcile_errors_total{controller="web"} 1"#,
            r#"controller_runtime_reconcile_time_seconds_count{controller="web"} 2"#,
            r#"controller_runtime_max_concurrent_reconciles{controller="web"} 16"#,
            r#"controller_runtime_active_workers{controller="web"} 0"#,
            r#"workqueue_depth{name="web"} 3"#,
            r#"workqueue_adds_total{name="web"} 1"#,
            r#"workqueue_retries_total{name="web"} 1"#,
            r#"workqueue_queue_duration_seconds_count{name="web"} 1"#,
            r#"workqueue_work_duration_seconds_count{name="web"} 2"#,
            r#"rest_client_requests_total{code="200",method="PATCH"} 1"#,
            r#"leader_election_master_status{name="web-leader"} 1"#,
            r#"operator_writes_total{controller="web",verb="apply",kind="Deployment"} 1"#,
            r#"operator_events_total{controller="web",type="Normal"} 1"#,
            r#"operator_child_corrections_total{controller="web",kind="Service"} 1"#,
            r#"operator_passes_without_writes_total{controller="web"} 1"#,
        ] {
            assert!(text.contains(line), "missing {line} in\n{text}");
        }
        assert_eq!(answer(&m, "/metrics").status(), StatusCode::OK);
        assert_eq!(answer(&m, "/x").status(), StatusCode::NOT_FOUND);
    }
}
