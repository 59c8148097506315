//! The command line of `webapp-by-hand` and `webapp`: the examples' shared command line ([`crate::cli`]) with
//! the WebApp's CRD, sample objects and logs. The binaries are [`crate::cli::parse`] and [`run`] (or
//! [`run_variant`] with the derived operator); tests call them directly. Only the controller and the manifests
//! differ between the two binaries ([`Variant`]).

use std::collections::HashMap;
use std::future::Future;

use anyhow::Context as _;
use futures::{FutureExt, StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, CustomResourceExt, ResourceExt};
use operator::Operator;

use super::{CONFIG_HASH_ANNOTATION, WebApp, reconciler, sample, sample_config_map};
use crate::EmbeddedArgs;
use crate::cli::Example;
pub use crate::cli::{Cli, CliCommand};

/// The name of the sample WebApp created on the embedded cluster.
pub const SAMPLE_NAME: &str = "sample";

/// The name of the sample ConfigMap created on the embedded cluster.
pub const SAMPLE_CONFIG_MAP: &str = "sample-config";

/// The manifests an installation needs: the WebApp CustomResourceDefinition, as YAML.
pub fn manifests() -> anyhow::Result<String> {
    serde_yaml::to_string(&WebApp::crd()).context("cannot render the CRD as YAML")
}

/// What differs between the WebApp binaries: the controller they run and what `manifests` prints.
#[derive(Debug, Clone, Copy)]
pub struct Variant {
    /// Adds the WebApp controller to an operator.
    pub controller: fn(Operator) -> Operator,
    /// What the `manifests` subcommand prints.
    pub manifests: fn() -> anyhow::Result<String>,
    /// The installation behind `manifests`, if it is more than the CRD.
    pub installation: Option<fn() -> operator::manifests::Manifests>,
    /// The admission webhooks, one entry per kind.
    pub webhooks: crate::cli::WebhookKinds,
}

/// `webapp-by-hand`: the runtime-only [`reconciler`], and the CRD as manifests.
pub const BY_HAND: Variant = Variant {
    controller: |operator| operator.controller(reconciler()),
    manifests,
    installation: None,
    webhooks: || vec![std::sync::Arc::new(super::webhooks())],
};

impl Variant {
    /// This variant as an example of the shared command line.
    pub fn example(self) -> Example {
        Example {
            crds: || vec![WebApp::crd()],
            controller: self.controller,
            manifests: self.manifests,
            installation: self.installation,
            prepare_embedded: |_| {},
            seed: |client| seed(client).boxed(),
            observe: |client| observe(client).boxed(),
            kubectl_hint: "get webapps,deployments,services",
            webhooks: Some(self.webhooks),
        }
    }
}

/// Runs what the command line asks for until `shutdown` resolves (the binary passes Ctrl-C or SIGTERM).
pub async fn run(cli: Cli, shutdown: impl Future<Output = ()> + Send) -> anyhow::Result<()> {
    run_variant(BY_HAND, cli, shutdown).await
}

/// [`run`] with another controller and manifests (the `webapp` example's derived operator).
pub async fn run_variant(
    variant: Variant,
    cli: Cli,
    shutdown: impl Future<Output = ()> + Send,
) -> anyhow::Result<()> {
    crate::cli::run(&variant.example(), cli, shutdown).await
}

/// Runs the operator against a real cluster, installing the CRD first if it is missing.
pub async fn run_on_cluster(
    client: Client,
    shutdown: impl Future<Output = ()> + Send,
) -> anyhow::Result<()> {
    crate::cli::run_on_cluster(
        &BY_HAND.example(),
        client,
        true,
        &crate::cli::RunFlags::default(),
        &crate::cli::WebhookFlags::default(),
        shutdown,
    )
    .await
}

/// Starts the embedded in-memory cluster (served over HTTP with `--listen`), installs the CRD, a sample
/// ConfigMap and a sample WebApp, and runs the operator on it, logging what happens.
pub async fn run_embedded(
    serve: &EmbeddedArgs,
    shutdown: impl Future<Output = ()> + Send,
) -> anyhow::Result<()> {
    crate::cli::run_embedded(
        &BY_HAND.example(),
        serve,
        &crate::cli::RunFlags::default(),
        shutdown,
    )
    .await
}

/// Creates the WebApp CRD unless it exists, and waits until it is established.
pub async fn ensure_crd(client: &Client) -> anyhow::Result<()> {
    crate::cli::ensure_crd(client, WebApp::crd()).await
}

/// Creates the sample ConfigMap and the sample WebApp in `default`.
async fn seed(client: Client) -> anyhow::Result<()> {
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    cms.create(
        &PostParams::default(),
        &sample_config_map(SAMPLE_CONFIG_MAP),
    )
    .await
    .context("cannot create the sample ConfigMap")?;
    let apps: Api<WebApp> = Api::namespaced(client, "default");
    apps.create(
        &PostParams::default(),
        &sample(SAMPLE_NAME, Some(SAMPLE_CONFIG_MAP)),
    )
    .await
    .context("cannot create the sample WebApp")?;
    tracing::info!(
        webapp = SAMPLE_NAME,
        configmap = SAMPLE_CONFIG_MAP,
        "created the sample WebApp and its ConfigMap"
    );
    Ok(())
}

/// Logs every change to the WebApps' status and to their Deployments, so the embedded run shows what the
/// operator does.
async fn observe(client: Client) {
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
        watcher::Config::default().labels(super::NAME_LABEL),
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
