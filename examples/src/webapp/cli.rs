//! The command line of `webapp-by-hand` and `webapp` ([`kubewright::cli`]): what both show on the embedded
//! cluster (a sample ConfigMap and WebApp, and their changes logged), and [`by_hand`], the runtime-only
//! operator. The binaries are [`App::run`]; tests call [`App::run_with`] or [`run`].

use std::future::Future;

#[cfg(feature = "embedded")]
use futures::FutureExt;
use kube::{Client, CustomResourceExt};
use kubewright::cli::{App, CliError};

use super::{WebApp, reconciler};
#[cfg(feature = "embedded")]
use super::{sample, sample_config_map};
pub use kubewright::cli::{Cli, CliCommand};

/// The name of the sample WebApp created on the embedded cluster.
pub const SAMPLE_NAME: &str = "sample";

/// The name of the sample ConfigMap created on the embedded cluster.
pub const SAMPLE_CONFIG_MAP: &str = "sample-config";

/// What both WebApp binaries show on the embedded cluster: a sample ConfigMap and a sample WebApp naming it,
/// and a line per change to a WebApp's status or a Deployment. Built without the embedded cluster (feature
/// `embedded`, as the `Dockerfile` builds), `app` as it is: none of it would run, and its watches would only
/// add code that stays resident.
pub fn on_embedded(app: App) -> App {
    #[cfg(feature = "embedded")]
    let app = app
        .sample(sample_config_map(SAMPLE_CONFIG_MAP))
        .sample(sample(SAMPLE_NAME, Some(SAMPLE_CONFIG_MAP)))
        .observe(|client| embedded::observe(client).boxed())
        .kubectl_hint("get webapps,deployments,services");
    app
}

/// `webapp-by-hand`: the runtime-only [`reconciler`], its CRD with both versions (`v1` converted by the
/// operator's conversion webhook) and its admission webhooks.
pub fn by_hand() -> App {
    on_embedded(
        App::new("webapp-operator")
            .namespace("webapp-system")
            .image("example.dev/webapp-operator:latest")
            .reconciler(reconciler())
            .crd(WebApp::crd())
            .versions(super::versions())
            .webhooks(super::webhooks()),
    )
}

/// Runs `webapp-by-hand` as `cli` asks until `shutdown` resolves.
pub async fn run(cli: Cli, shutdown: impl Future<Output = ()> + Send) -> Result<(), CliError> {
    by_hand().run_with(cli, shutdown).await
}

/// Creates the WebApp CRD, `v2` alone (no conversion: for tests and benchmarks that write only `v2`), unless it
/// exists, and waits until it is established.
pub async fn ensure_crd(client: &Client) -> Result<(), CliError> {
    kubewright::cli::ensure_crd(client, WebApp::crd()).await
}

/// The embedded run's log of what the operator does (only with the embedded cluster).
#[cfg(feature = "embedded")]
mod embedded {
    use std::collections::HashMap;

    use futures::{StreamExt, TryStreamExt};
    use k8s_openapi::api::apps::v1::Deployment;
    use kube::api::Api;
    use kube::runtime::{WatchStreamExt, watcher};
    use kube::{Client, ResourceExt};

    use super::super::{CONFIG_HASH_ANNOTATION, WebApp};

    /// Logs every change to the WebApps' status and to their Deployments, so the embedded run shows what the
    /// operator does.
    pub(super) async fn observe(client: Client) {
        let apps = watcher(
            Api::<WebApp>::all(client.clone()),
            watcher::Config::default(),
        )
        .default_backoff()
        .applied_objects()
        .map_ok(|app| {
            let status = app.status.clone().unwrap_or_default();
            let ready = status
                .conditions
                .iter()
                .find(|c| c.type_ == "Ready")
                .map(|c| format!("{} ({}) {}", c.status, c.reason, c.message));
            let summary = format!(
                "generation={:?} observedGeneration={:?} ready={} deployment={:?} service={:?} availableReplicas={:?}",
                app.metadata.generation,
                status.observed_generation,
                ready.unwrap_or_else(|| "unknown".into()),
                status.deployment,
                status.service,
                status.available_replicas,
            );
            (format!("WebApp {}", app.name_any()), summary)
        })
        .boxed();
        let deployments = watcher(
            Api::<Deployment>::all(client),
            watcher::Config::default().labels(super::super::NAME_LABEL),
        )
        .default_backoff()
        .applied_objects()
        .map_ok(|d| {
            let spec = d.spec.clone().unwrap_or_default();
            let image = spec
                .template
                .spec
                .as_ref()
                .and_then(|s| s.containers.first())
                .and_then(|c| c.image.clone());
            let hash = spec
                .template
                .metadata
                .as_ref()
                .and_then(|m| m.annotations.as_ref())
                .and_then(|a| a.get(CONFIG_HASH_ANNOTATION).cloned());
            let summary = format!(
                "replicas={:?} image={:?} configHash={:?}",
                spec.replicas, image, hash
            );
            (format!("Deployment {}", d.name_any()), summary)
        })
        .boxed();
        let mut seen: HashMap<String, String> = HashMap::new();
        let mut changes = futures::stream::select(apps, deployments);
        while let Some(change) = changes.next().await {
            match change {
                Ok((what, summary)) => {
                    if seen.get(&what) != Some(&summary) {
                        tracing::info!(object = %what, "{summary}");
                        seen.insert(what, summary);
                    }
                }
                Err(e) => tracing::warn!(error = %e, "watch failed; retrying"),
            }
        }
    }
}
